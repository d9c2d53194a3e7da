/* The host statements of a function built for a cuda target, run in this
 * process (include/loom/tune.h, loom_cuda_host): loops, lets, conditions
 * and allocations of integers and device memory, around launches of the
 * kernels and calls of cuBLAS, all on the default stream. */
#include "tune/tune_impl.h"

#include <stdlib.h>
#include <string.h>


#define MAX_HOST_VARS 256
#define MAX_HOST_ALLOCS 64

typedef struct loom_cuda_host {
  loom_runtime_cuda *cu;
  loom_runtime_cuda_module *mod;
  loom_runtime_cublas **blas; /* opened at the first product it computes */
  loom_runtime_cublas *own_blas;
  const loom_gpu_func *g;
  const loom_var *vars[MAX_HOST_VARS]; /* bound so far, innermost last */
  int64_t ints[MAX_HOST_VARS];         /* integers, bools, device addresses */
  double floats[MAX_HOST_VARS];
  int n_vars;
  /* Device memory of the host's allocations, kept from one call to the
   * next until the host is freed: a cuMemAlloc per call would be timed
   * with the kernels. */
  const loom_stmt *alloc_at[MAX_HOST_ALLOCS];
  uint64_t alloc_ptr[MAX_HOST_ALLOCS];
  int64_t alloc_bytes[MAX_HOST_ALLOCS];
  int n_allocs;
  int n_bound; /* the variables the parameters bind */
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

/* A product by cuBLAS (LOOM_GPU_CUBLAS), the buffers' device addresses
 * from the host's variables. */
static loom_status cublas_call(host *H, const loom_gpu_cublas *call, loom_diag *d) {
  int64_t a, b, c;
  TRY(eval(H, call->a, &a, d));
  TRY(eval(H, call->b, &b, d));
  TRY(eval(H, call->c_data, &c, d));
  loom_runtime_gemm g = {.a = (uint64_t)a, .b = (uint64_t)b, .c = (uint64_t)c, .ab = call->ab,
                         .c_dtype = call->c, .trans_a = call->trans_a,
                         .trans_b = call->trans_b, .m = call->m, .n = call->n, .k = call->k,
                         .batch = call->batch, .is_b_batched = call->is_b_batched,
                         .is_accumulating = call->is_accumulating};
  if (!*H->blas)
    TRY(loom_runtime_cublas_open(H->blas, d));
  return loom_runtime_cublas_gemm(*H->blas, &g, d);
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
    loom_gpu_cublas call;
    if (loom_lower_gpu_cublas_read(e, &call))
      return cublas_call(H, &call, d);
    return LOOM_OK;
  }
  case LOOM_STMT_STORE:
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_COUNT_: break;
  }
  return loom_diag_error(d, s->loc, "the host cannot run a %s",
                         loom_stmt_kind_name(s->kind));
}

loom_status loom_tune_cuda_host_new(loom_runtime_cuda *cu, const loom_cuda_built *b,
                                    loom_runtime_cublas **blas, loom_cuda_host **out,
                                    loom_diag *d) {
  *out = NULL;
  host *H = calloc(1, sizeof *H);
  if (!H)
    return LOOM_NOMEM;
  H->cu = cu;
  H->g = loom_tune_cuda_lowered(b);
  H->blas = blas ? blas : &H->own_blas;
  loom_status st = loom_runtime_cuda_load(cu, loom_tune_cuda_cubin(b)->data, &H->mod, d);
  if (st != LOOM_OK) {
    free(H);
    return st;
  }
  *out = H;
  return LOOM_OK;
}

void loom_tune_cuda_host_free(loom_cuda_host *H) {
  if (!H)
    return;
  for (int i = 0; i < H->n_allocs; i++)
    loom_runtime_cuda_free(H->cu, H->alloc_ptr[i]);
  loom_runtime_cuda_unload(H->mod);
  loom_runtime_cublas_close(H->own_blas);
  free(H);
}

loom_status loom_tune_cuda_host_bind(loom_cuda_host *H, const uint64_t *dev,
                                     const int64_t *const *shapes, const int64_t *scalars,
                                     loom_diag *d) {
  const loom_func *f = H->g->host;
  H->n_vars = 0;
  for (int i = 0; i < f->n_params; i++) {
    const loom_param *p = &f->params[i];
    if (!p->buffer) {
      int64_t v = scalars ? scalars[i] : 0;
      TRY(bind(H, p->var, v, (double)v, d));
      continue;
    }
    TRY(bind(H, p->buffer->data, (int64_t)dev[i], 0, d));
    if (p->var != p->buffer->data)
      TRY(bind(H, p->var, (int64_t)dev[i], 0, d));
    for (int k = 0; k < p->buffer->ndim; k++) {
      const loom_expr *x = p->buffer->shape[k];
      if (x->kind != LOOM_EXPR_VAR)
        continue;
      if (!shapes || !shapes[i])
        return loom_diag_error(d, f->loc, "no shape given for parameter '%s'", p->buffer->name);
      int64_t given = shapes[i][k];
      int at = find(H, x->u.var);
      if (at >= 0 && H->ints[at] != given)
        return loom_diag_error(d, f->loc, "arrays disagree on dimension '%s'",
                               x->u.var->name);
      if (at < 0)
        TRY(bind(H, x->u.var, given, (double)given, d));
    }
  }
  H->n_bound = H->n_vars;
  return LOOM_OK;
}

loom_status loom_tune_cuda_host_call(loom_cuda_host *H, loom_diag *d) {
  H->n_vars = H->n_bound;
  return exec(H, H->g->host->body, d);
}
