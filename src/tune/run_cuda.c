/* The CUDA backend's builder, runner and check (the cuda row of
 * src/tune/backend.c). Building lowers a function for the
 * GPU (after dlight's schedule when it binds no threads), prints its
 * CUDA C and compiles it with NVRTC for the target's architecture; none of
 * it needs a GPU. Running happens in a child process, as on the CPU: the
 * child opens the driver, copies the seeded inputs to the device, runs the
 * host statements once (launching the kernels), copies every buffer back
 * into the arrays the parent checks, then times the host statements with
 * CUDA events. A kernel that faults or hangs takes only the child down. */
#include "loom/codegen.h"
#include "tune/tune_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

struct loom_cuda_built {
  loom_arena *arena;
  loom_sched *sched;        /* owns dlight's schedule of the function */
  loom_gpu_func g;
  char *source;             /* heap */
  loom_runtime_cubin cubin;
};

/* f scheduled by dlight when it binds no thread (*sched then holds the
 * schedule), lowered into *g and printed into out. */
static loom_status emit(loom_arena *a, const loom_func *f, const loom_target *t,
                        loom_sched **sched, loom_gpu_func *g, loom_buf *out,
                        loom_diag *d) {
  const loom_func *sf;
  TRY(loom_tune_dlight(a, f, t, NULL, 0, sched, &sf, NULL, NULL, d));
  TRY(loom_lower_gpu(a, sf, t, g, d));
  TRY(loom_codegen_cuda(g, out, d));
  return out->has_failed ? LOOM_NOMEM : LOOM_OK;
}

loom_status loom_tune_cuda_emit(const loom_func *f, const loom_target *t, loom_buf *out,
                                loom_diag *d) {
  loom_arena *a = loom_arena_new();
  if (!a)
    return LOOM_NOMEM;
  loom_sched *s = NULL;
  loom_gpu_func g;
  loom_status st = emit(a, f, t, &s, &g, out, d);
  if (s)
    loom_sched_free(s);
  loom_arena_free(a);
  return st;
}

loom_status loom_tune_cuda_build(const loom_func *f, const loom_target *t,
                                 loom_cuda_built **out, loom_diag *d) {
  *out = NULL;
  loom_cuda_built *b = calloc(1, sizeof *b);
  if (!b || !(b->arena = loom_arena_new())) {
    free(b);
    return LOOM_NOMEM;
  }
  loom_buf src;
  loom_buf_init(&src);
  loom_runtime_nvrtc *nv = NULL;
  loom_status st = emit(b->arena, f, t, &b->sched, &b->g, &src, d);
  if (st == LOOM_OK && !(b->source = strndup(src.data, src.len)))
    st = LOOM_NOMEM;
  if (st == LOOM_OK)
    st = loom_runtime_nvrtc_open(&nv, d);
  if (st == LOOM_OK)
    st = loom_runtime_nvrtc_compile_cached(nv, b->source, f->name, t->gpu.sm, &b->cubin, d);
  loom_runtime_nvrtc_close(nv);
  loom_buf_free(&src);
  if (st != LOOM_OK) {
    loom_tune_cuda_built_free(b);
    return st;
  }
  *out = b;
  return LOOM_OK;
}

const char *loom_tune_cuda_source(const loom_cuda_built *b) { return b->source; }
const loom_runtime_cubin *loom_tune_cuda_cubin(const loom_cuda_built *b) { return &b->cubin; }
const loom_gpu_func *loom_tune_cuda_lowered(const loom_cuda_built *b) { return &b->g; }

void loom_tune_cuda_built_free(loom_cuda_built *b) {
  if (!b)
    return;
  loom_runtime_cubin_free(&b->cubin);
  free(b->source);
  if (b->sched)
    loom_sched_free(b->sched);
  loom_arena_free(b->arena);
  free(b);
}

/* ---- the host statements ------------------------------------------------------ */

#define MAX_HOST_VARS 256
#define MAX_HOST_ALLOCS 64

typedef struct host {
  loom_runtime_cuda *cu;
  loom_runtime_cuda_module *mod;
  loom_runtime_cublas *blas; /* opened at the first product it computes */
  const loom_gpu_func *g;
  const loom_var *vars[MAX_HOST_VARS]; /* bound so far, innermost last */
  int64_t ints[MAX_HOST_VARS];         /* integers, bools, device addresses */
  double floats[MAX_HOST_VARS];
  int n_vars;
  /* Device memory of the host's allocations, kept from one call to the
   * next (each run is a process of its own, whose end frees it): a
   * cuMemAlloc per call would be timed with the kernels. */
  const loom_stmt *alloc_at[MAX_HOST_ALLOCS];
  uint64_t alloc_ptr[MAX_HOST_ALLOCS];
  int64_t alloc_bytes[MAX_HOST_ALLOCS];
  int n_allocs;
} host;

static loom_status bind(host *H, const loom_var *v, int64_t i, double f, loom_diag *d) {
  if (H->n_vars == MAX_HOST_VARS)
    return loom_diag_error(d, (loom_loc){0}, "more than %d host variables at once",
                           MAX_HOST_VARS);
  H->vars[H->n_vars] = v;
  H->ints[H->n_vars] = i;
  H->floats[H->n_vars++] = f;
  return LOOM_OK;
}

static int find(const host *H, const loom_var *v) {
  for (int i = H->n_vars - 1; i >= 0; i--)
    if (H->vars[i] == v)
      return i;
  return -1;
}

static int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* The value of an integer expression of host variables. */
static loom_status eval(const host *H, const loom_expr *e, int64_t *out, loom_diag *d) {
  int64_t a = 0, b = 0;
  int at;
  switch (e->kind) {
  case LOOM_EXPR_INT: *out = e->u.int_value; return LOOM_OK;
  case LOOM_EXPR_FLOAT: *out = (int64_t)e->u.float_value; return LOOM_OK;
  case LOOM_EXPR_VAR:
    if ((at = find(H, e->u.var)) < 0)
      return loom_diag_error(d, (loom_loc){0}, "the host has no value for '%s'",
                             e->u.var->name);
    *out = loom_dtype_is_float(e->u.var->dtype) ? (int64_t)H->floats[at] : H->ints[at];
    return LOOM_OK;
  case LOOM_EXPR_CAST: return eval(H, e->u.unary.a, out, d);
  case LOOM_EXPR_NOT:
    TRY(eval(H, e->u.unary.a, &a, d));
    *out = !a;
    return LOOM_OK;
  case LOOM_EXPR_SELECT:
    TRY(eval(H, e->u.select.cond, &a, d));
    return eval(H, a ? e->u.select.t : e->u.select.f, out, d);
  default: break;
  }
  if (e->kind < LOOM_EXPR_ADD || e->kind > LOOM_EXPR_OR)
    return loom_diag_error(d, (loom_loc){0}, "the host cannot compute a %s",
                           loom_expr_kind_name(e->kind));
  TRY(eval(H, e->u.bin.a, &a, d));
  TRY(eval(H, e->u.bin.b, &b, d));
  bool is_div = e->kind == LOOM_EXPR_DIV || e->kind == LOOM_EXPR_MOD ||
                e->kind == LOOM_EXPR_FLOORDIV || e->kind == LOOM_EXPR_FLOORMOD;
  if (is_div && b == 0)
    return loom_diag_error(d, (loom_loc){0}, "division by zero in a launch extent");
  switch (e->kind) {
  case LOOM_EXPR_ADD: *out = a + b; break;
  case LOOM_EXPR_SUB: *out = a - b; break;
  case LOOM_EXPR_MUL: *out = a * b; break;
  case LOOM_EXPR_DIV: *out = a / b; break;
  case LOOM_EXPR_MOD: *out = a % b; break;
  case LOOM_EXPR_FLOORDIV: *out = floordiv(a, b); break;
  case LOOM_EXPR_FLOORMOD: *out = a - floordiv(a, b) * b; break;
  case LOOM_EXPR_MIN: *out = a < b ? a : b; break;
  case LOOM_EXPR_MAX: *out = a > b ? a : b; break;
  case LOOM_EXPR_EQ: *out = a == b; break;
  case LOOM_EXPR_NE: *out = a != b; break;
  case LOOM_EXPR_LT: *out = a < b; break;
  case LOOM_EXPR_LE: *out = a <= b; break;
  case LOOM_EXPR_GT: *out = a > b; break;
  case LOOM_EXPR_GE: *out = a >= b; break;
  case LOOM_EXPR_AND: *out = a && b; break;
  case LOOM_EXPR_OR: *out = a || b; break;
  default: break;
  }
  return LOOM_OK;
}

/* A kernel parameter's value, in the width its C type has. */
typedef union slot {
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  float f32;
  double f64;
  uint64_t ptr;
} slot;

static loom_status fill_slot(const host *H, const loom_var *v, slot *s, loom_diag *d) {
  int at = find(H, v);
  if (at < 0)
    return loom_diag_error(d, (loom_loc){0}, "the host has no value for kernel "
                           "parameter '%s'", v->name);
  loom_dtype t = v->dtype;
  memset(s, 0, sizeof *s);
  if (t.code == LOOM_DT_HANDLE)
    s->ptr = (uint64_t)H->ints[at];
  else if (t.code == LOOM_DT_FLOAT && t.bits == 64)
    s->f64 = H->floats[at];
  else if (loom_dtype_is_float(t))
    s->f32 = (float)H->floats[at];
  else if (t.bits <= 8)
    s->i8 = (int8_t)H->ints[at];
  else if (t.bits <= 16)
    s->i16 = (int16_t)H->ints[at];
  else if (t.bits <= 32)
    s->i32 = (int32_t)H->ints[at];
  else
    s->i64 = H->ints[at];
  return LOOM_OK;
}

static loom_status launch(host *H, const loom_gpu_kernel *k, loom_diag *d) {
  int64_t grid[3] = {1, 1, 1}, e;
  int block[3] = {1, 1, 1};
  for (int a = 0; a < LOOM_GPU_AXES; a++) {
    if (!k->axes[a])
      continue;
    TRY(eval(H, k->extents[a], &e, d));
    if (a < LOOM_GPU_THREAD_X)
      grid[a] = e;
    else
      block[a - LOOM_GPU_THREAD_X] = (int)e;
  }
  if (grid[0] < 1 || grid[1] < 1 || grid[2] < 1)
    return LOOM_OK; /* no iterations: nothing to run */
  slot slots[256];
  void *params[256];
  if (k->n_params > 256)
    return loom_diag_error(d, k->loc, "kernel %s takes %d parameters; at most 256",
                           k->name, k->n_params);
  for (int i = 0; i < k->n_params; i++) {
    TRY(fill_slot(H, k->params[i], &slots[i], d));
    params[i] = &slots[i];
  }
  return loom_runtime_cuda_launch(H->mod, k->name, grid, block, (int)k->dynamic_shared,
                                  params, d);
}

/* A product by cuBLAS (LOOM_GPU_CUBLAS): its dtypes and transposes as
 * strings, the buffers' addresses, then its integers. */
static loom_status cublas_call(host *H, const loom_expr *e, loom_diag *d) {
  const loom_expr *const *x = (const loom_expr *const *)e->u.call.args;
  loom_runtime_gemm g = {0};
  int64_t v[9];
  bool is_ok = e->u.call.n_args == 13;
  for (int i = 1; i < 4 && is_ok; i++)
    is_ok = x[i]->kind == LOOM_EXPR_STR;
  is_ok = is_ok && loom_dtype_parse(x[1]->u.str, strlen(x[1]->u.str), &g.ab) &&
          loom_dtype_parse(x[2]->u.str, strlen(x[2]->u.str), &g.c_dtype) &&
          strlen(x[3]->u.str) == 2;
  for (int i = 4; i < 13 && is_ok; i++)
    is_ok = eval(H, x[i], &v[i - 4], d) == LOOM_OK;
  if (!is_ok)
    return d->msg ? LOOM_ERROR : loom_diag_error(d, (loom_loc){0}, "a malformed %s call",
                                                 LOOM_GPU_CUBLAS);
  g.trans_a = x[3]->u.str[0] == 'T';
  g.trans_b = x[3]->u.str[1] == 'T';
  g.a = (uint64_t)v[0], g.b = (uint64_t)v[1], g.c = (uint64_t)v[2];
  g.m = v[3], g.n = v[4], g.k = v[5], g.batch = v[6];
  g.is_b_batched = v[7];
  g.is_accumulating = v[8];
  if (!H->blas)
    TRY(loom_runtime_cublas_open(&H->blas, d));
  return loom_runtime_cublas_gemm(H->blas, &g, d);
}

static int64_t elem_bytes(loom_dtype t) {
  return t.code == LOOM_DT_BOOL || t.bits < 8 ? 1 : t.bits / 8;
}

static loom_status exec(host *H, const loom_stmt *s, loom_diag *d);

static loom_status exec_alloc(host *H, const loom_stmt *s, loom_diag *d) {
  const loom_buffer *b = s->u.alloc.buffer;
  int64_t n = elem_bytes(b->dtype), e;
  for (int i = 0; i < b->ndim; i++) {
    TRY(eval(H, b->shape[i], &e, d));
    n *= e > 0 ? e : 0;
  }
  uint64_t p = 0;
  int at = -1;
  for (int i = 0; i < H->n_allocs && at < 0; i++)
    if (H->alloc_at[i] == s && H->alloc_bytes[i] == n)
      at = i;
  if (at >= 0) {
    p = H->alloc_ptr[at];
  } else {
    TRY(loom_runtime_cuda_alloc(H->cu, (size_t)n, &p, d));
    if (H->n_allocs < MAX_HOST_ALLOCS) {
      at = H->n_allocs++;
      H->alloc_at[at] = s;
      H->alloc_ptr[at] = p;
      H->alloc_bytes[at] = n;
    }
  }
  int mark = H->n_vars;
  loom_status st = bind(H, b->data, (int64_t)p, 0, d);
  if (st == LOOM_OK)
    st = exec(H, s->u.alloc.body, d);
  H->n_vars = mark;
  if (at < 0)
    loom_runtime_cuda_free(H->cu, p);
  return st;
}

static loom_status exec(host *H, const loom_stmt *s, loom_diag *d) {
  if (!s)
    return LOOM_OK;
  int64_t v;
  int mark = H->n_vars;
  loom_status st = LOOM_OK;
  switch (s->kind) {
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts && st == LOOM_OK; i++)
      st = exec(H, s->u.seq.stmts[i], d);
    return st;
  case LOOM_STMT_FOR: {
    int64_t min, ext;
    TRY(eval(H, s->u.loop.min, &min, d));
    TRY(eval(H, s->u.loop.extent, &ext, d));
    TRY(bind(H, s->u.loop.var, min, 0, d));
    for (int64_t i = min; i < min + ext && st == LOOM_OK; i++) {
      H->ints[mark] = i;
      st = exec(H, s->u.loop.body, d);
    }
    H->n_vars = mark;
    return st;
  }
  case LOOM_STMT_LET:
    TRY(eval(H, s->u.let.value, &v, d));
    TRY(bind(H, s->u.let.var, v, (double)v, d));
    st = exec(H, s->u.let.body, d);
    H->n_vars = mark;
    return st;
  case LOOM_STMT_IF:
    TRY(eval(H, s->u.if_.cond, &v, d));
    return exec(H, v ? s->u.if_.then_case : s->u.if_.else_case, d);
  case LOOM_STMT_ASSERT:
    TRY(eval(H, s->u.assert_.cond, &v, d));
    if (!v)
      return loom_diag_error(d, s->loc, "a T.assert failed");
    return exec(H, s->u.assert_.body, d);
  case LOOM_STMT_ALLOCATE: return exec_alloc(H, s, d);
  case LOOM_STMT_DECL_BUFFER: return exec(H, s->u.alloc.body, d);
  case LOOM_STMT_ATTR: return exec(H, s->u.attr.body, d);
  case LOOM_STMT_EVALUATE: {
    const loom_expr *e = s->u.evaluate.value;
    int64_t k;
    if (e->kind == LOOM_EXPR_CALL && e->u.call.n_args == 2 &&
        e->u.call.args[0]->kind == LOOM_EXPR_STR &&
        !strcmp(e->u.call.args[0]->u.str, LOOM_GPU_LAUNCH) &&
        loom_ir_is_const_int(e->u.call.args[1], &k) && k >= 0 && k < H->g->n_kernels)
      return launch(H, &H->g->kernels[k], d);
    if (e->kind == LOOM_EXPR_CALL && e->u.call.n_args > 0 &&
        e->u.call.args[0]->kind == LOOM_EXPR_STR &&
        !strcmp(e->u.call.args[0]->u.str, LOOM_GPU_CUBLAS))
      return cublas_call(H, e, d);
    return LOOM_OK;
  }
  case LOOM_STMT_STORE:
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_COUNT_: break;
  }
  return loom_diag_error(d, s->loc, "the host cannot run a %s",
                         loom_stmt_kind_name(s->kind));
}

/* ---- the runner ------------------------------------------------------------------ */

typedef struct cuda_run {
  tune_runner_state r;
  host H;
  int n_bound; /* host variables the parameters bind */
} cuda_run;

static loom_status call_host(void *ctx, loom_diag *d) {
  cuda_run *c = ctx;
  c->H.n_vars = c->n_bound;
  return exec(&c->H, c->H.g->host->body, d);
}

/* Binds the parameters: device addresses, scalar values, the symbolic
 * dimensions of the arrays given. */
static loom_status bind_params(cuda_run *c, const uint64_t *dev, loom_diag *d) {
  const loom_func *f = c->H.g->host;
  host *H = &c->H;
  for (int i = 0; i < f->n_params; i++) {
    const loom_param *p = &f->params[i];
    if (!p->buffer) {
      int64_t v = c->r.o->scalars ? c->r.o->scalars[i] : 0;
      TRY(bind(H, p->var, v, (double)v, d));
      continue;
    }
    TRY(bind(H, p->buffer->data, (int64_t)dev[i], 0, d));
    if (p->var != p->buffer->data)
      TRY(bind(H, p->var, (int64_t)dev[i], 0, d));
    for (int k = 0; k < p->buffer->ndim; k++) {
      const loom_expr *x = p->buffer->shape[k];
      int64_t given = c->r.arrays[i]->shape[k];
      if (x->kind != LOOM_EXPR_VAR)
        continue;
      int at = find(H, x->u.var);
      if (at >= 0 && H->ints[at] != given)
        return loom_diag_error(d, f->loc, "arrays disagree on dimension '%s'",
                               x->u.var->name);
      if (at < 0)
        TRY(bind(H, x->u.var, given, (double)given, d));
    }
  }
  c->n_bound = H->n_vars;
  return LOOM_OK;
}

static void say(tune_report *rep, const loom_diag *d, const char *fallback) {
  snprintf(rep->message, sizeof rep->message, "%s", d->msg ? d->msg : fallback);
}

static int child_main(void *ctx) {
  cuda_run *c = ctx;
  tune_runner_state *r = &c->r;
  const loom_func *f = c->H.g->host;
  loom_diag d;
  loom_diag_init(&d);
  uint64_t dev[256] = {0};
  if (f->n_params > 256) {
    snprintf(r->rep->message, sizeof r->rep->message, "more than 256 parameters");
    return 2;
  }
  loom_status st = loom_runtime_cuda_open(&c->H.cu, &d);
  if (st == LOOM_OK)
    st = loom_runtime_cuda_load(c->H.cu, loom_tune_cuda_cubin(r->kernel)->data, &c->H.mod, &d);
  for (int i = 0; i < f->n_params && st == LOOM_OK; i++)
    if (r->arrays[i] && (st = loom_runtime_cuda_alloc(c->H.cu, r->arrays[i]->n_bytes,
                                                      &dev[i], &d)) == LOOM_OK)
      st = loom_runtime_cuda_upload(c->H.cu, dev[i], r->arrays[i]->data,
                                    r->arrays[i]->n_bytes, &d);
  if (st == LOOM_OK)
    st = bind_params(c, dev, &d);
  if (st == LOOM_OK)
    st = call_host(c, &d);
  if (st == LOOM_OK)
    st = loom_runtime_cuda_sync(c->H.cu, &d);
  for (int i = 0; i < f->n_params && st == LOOM_OK; i++)
    if (r->arrays[i])
      st = loom_runtime_cuda_download(c->H.cu, r->arrays[i]->data, dev[i],
                                      r->arrays[i]->n_bytes, &d);
  if (st != LOOM_OK) {
    say(r->rep, &d, "out of memory");
    return 2;
  }
  loom_runtime_timer_config cfg = loom_runtime_timer_default();
  cfg.warmup = 1;
  cfg.repeat = r->o->repeat > 0 ? r->o->repeat : 3;
  cfg.number = 1;
  cfg.flush_cache = r->o->flush_cache;
  if (loom_runtime_cuda_time(c->H.cu, call_host, c, &cfg, &r->rep->timing, &d) == LOOM_OK)
    r->rep->is_timed = true;
  else
    say(r->rep, &d, "timing failed");
  /* The process ends here: its context and memory go with it. */
  return 0;
}

/* Measures c->r.kernel on the shared arrays (reset to the inputs first). */
static char *measure(cuda_run *c) {
  tune_runner_state *r = &c->r;
  for (int i = 0; i < r->f->n_params; i++)
    if (r->arrays[i])
      memcpy(r->arrays[i]->data, r->inputs[i]->data, r->arrays[i]->n_bytes);
  memset(r->rep, 0, sizeof *r->rep);
  c->H.n_vars = 0;
  loom_runtime_child_result child;
  loom_diag d;
  loom_diag_init(&d);
  double limit = r->o->timeout_ms > 0 ? r->o->timeout_ms : 60000;
  loom_status st = loom_runtime_run_child(child_main, c, limit, &child, &d);
  char buf[512], how[256];
  buf[0] = 0;
  if (st != LOOM_OK)
    snprintf(buf, sizeof buf, "cannot run a child process: %s", d.msg ? d.msg : "?");
  else if (child.kind == LOOM_RUNTIME_CHILD_EXIT && r->rep->message[0])
    snprintf(buf, sizeof buf, "%s", r->rep->message);
  else if (child.kind != LOOM_RUNTIME_CHILD_OK)
    snprintf(buf, sizeof buf, "the kernel failed: %s",
             loom_runtime_child_describe(&child, how, sizeof how));
  else if (!r->rep->is_timed)
    snprintf(buf, sizeof buf, "timing failed: %s", r->rep->message);
  loom_diag_free(&d);
  return buf[0] ? strdup(buf) : NULL;
}

loom_status tune_cuda_runner_new(const loom_func *workload, const loom_runner_options *o,
                                 void **out, loom_diag *d) {
  cuda_run *c = calloc(1, sizeof *c);
  if (!c)
    return LOOM_NOMEM;
  c->r.f = workload;
  c->r.o = o;
  loom_status st = tune_runner_setup(&c->r, d);
  if (st != LOOM_OK) {
    tune_cuda_runner_free(c);
    return st;
  }
  *out = c;
  return LOOM_OK;
}

void tune_cuda_runner_free(void *p) {
  cuda_run *c = p;
  if (!c)
    return;
  tune_runner_teardown(&c->r);
  free(c);
}

loom_status tune_cuda_runner_run(void *p, const loom_kernel *kernels, int n,
                                 loom_measured *out, loom_diag *d) {
  cuda_run *c = p;
  loom_status st = LOOM_OK;
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    if (!kernels[i]) {
      out[i].error = strdup("not built");
      continue;
    }
    c->r.kernel = kernels[i];
    c->H.g = loom_tune_cuda_lowered(kernels[i]);
    if ((out[i].error = measure(c)))
      continue;
    out[i].timing = c->r.rep->timing;
    if (!c->r.o->check)
      continue;
    st = tune_runner_is_too_slow(c->r.f) ? tune_runner_expect_measured(&c->r, d)
                                         : tune_runner_expect(&c->r, d);
    if (st == LOOM_OK)
      out[i].error = tune_runner_check(&c->r);
  }
  return st;
}

/* ---- the builder and the check ------------------------------------------------------ */

typedef struct build_job {
  const loom_func *const *funcs;
  const loom_target *t;
  loom_build_set *out;
  int next;
  pthread_mutex_t lock;
} build_job;

static void *build_worker(void *arg) {
  build_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    int i = j->next++;
    pthread_mutex_unlock(&j->lock);
    if (i >= j->out->n)
      return NULL;
    loom_built *item = &j->out->items[i];
    loom_cuda_built *b;
    loom_diag d;
    loom_diag_init(&d);
    double t0 = now_ms();
    if (loom_tune_cuda_build(j->funcs[i], j->t, &b, &d) == LOOM_OK) {
      item->kernel = b;
      item->registers = b->cubin.max_registers;
      item->spill_bytes = b->cubin.spill_bytes;
    } else {
      item->error = strdup(d.msg ? d.msg : "out of memory");
    }
    item->compile_ms = now_ms() - t0;
    loom_diag_free(&d);
  }
}

loom_status tune_cuda_build(const loom_func *const *funcs, int n,
                            const loom_builder_options *o, loom_build_set *out) {
  memset(out, 0, sizeof *out);
  if (!(out->items = calloc((size_t)(n ? n : 1), sizeof *out->items)))
    return LOOM_NOMEM;
  out->n = n;
  double t0 = now_ms();
  build_job j = {.funcs = funcs, .t = o->target, .out = out};
  pthread_mutex_init(&j.lock, NULL);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = o->jobs > 0 ? o->jobs : cpus > 0 ? (int)cpus : 1;
  if (jobs > n)
    jobs = n;
  if (jobs > 64)
    jobs = 64;
  pthread_t tids[64];
  int started = 0;
  while (started < jobs - 1 && pthread_create(&tids[started], NULL, build_worker, &j) == 0)
    started++;
  build_worker(&j);
  for (int i = 0; i < started; i++)
    pthread_join(tids[i], NULL);
  pthread_mutex_destroy(&j.lock);
  out->wall_ms = now_ms() - t0;
  return LOOM_OK;
}

void tune_cuda_build_free(loom_build_set *b) {
  for (int i = 0; b->items && i < b->n; i++) {
    loom_tune_cuda_built_free((loom_cuda_built *)b->items[i].kernel);
    free(b->items[i].error);
  }
  free(b->items);
}

/* What the CUDA backend cannot express: the lowering's refusals (past the
 * target's limits) and the printer's. */
loom_status tune_cuda_check(const loom_target *t, const loom_module *m, loom_diag *d) {
  loom_status st = LOOM_OK;
  for (int i = 0; i < m->n_funcs && st == LOOM_OK; i++) {
    loom_buf c;
    loom_buf_init(&c);
    st = loom_tune_cuda_emit(m->funcs[i], t, &c, d);
    loom_buf_free(&c);
  }
  return st;
}
