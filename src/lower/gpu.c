/* Host and kernels: the split of a lowered function at its thread-bound
 * loop nests (include/loom/lower.h). */
#include "lower/lower_impl.h"
#include "loom/dispatch.h"
#include "loom/target.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const axis_names[LOOM_GPU_AXES] = {
    "blockIdx.x", "blockIdx.y", "blockIdx.z",
    "threadIdx.x", "threadIdx.y", "threadIdx.z",
};

const char *loom_lower_gpu_axis_name(int axis) {
  return axis >= 0 && axis < LOOM_GPU_AXES ? axis_names[axis] : "?";
}

/* The axis of a thread tag; -1 for vthread and tags that are no axis. */
static int axis_of(const char *tag) {
  for (int k = 0; tag && k < LOOM_GPU_AXES; k++)
    if (!strcmp(tag, axis_names[k]))
      return k;
  return -1;
}

static bool is_vthread(const char *tag) {
  return tag && (!strncmp(tag, "vthread", 7) || !strcmp(tag, "cthread"));
}

static bool is_bound(const loom_stmt *s) {
  return s->kind == LOOM_STMT_FOR && s->u.loop.kind == LOOM_FOR_THREAD_BINDING;
}

typedef struct gpu_ctx {
  loom_arena *a;
  loom_diag *d;
  const loom_target *t;
  const loom_func *f;
  const loom_func *lf; /* f lowered: the buffers library marks name */
  loom_gpu_kernel *kernels;
  int n, cap;
  loom_status st;
} gpu_ctx;

static void fail(gpu_ctx *G, loom_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(gpu_ctx *G, loom_loc loc, const char *fmt, ...) {
  if (G->st != LOOM_OK)
    return;
  va_list ap;
  va_start(ap, fmt);
  G->st = loom_diag_verror(G->d, loc, fmt, ap);
  va_end(ap);
}

/* ---- what a statement holds ------------------------------------------------ */

/* Is s a nest the dispatch pass gave to cuBLAS? Such a nest is host work:
 * a library call between the kernels. */
static bool is_library(const loom_stmt *s) {
  if (s->kind != LOOM_STMT_FOR)
    return false;
  const loom_value *v = loom_ir_attr_get(s->u.loop.annotations, s->u.loop.n_annotations,
                                         "loom.library");
  return v && v->kind == LOOM_VALUE_STR && !strcmp(v->str, "cublas_gemm");
}

static loom_visit find_bound(void *ctx, loom_stmt *s) {
  (void)ctx;
  return is_bound(s) || is_library(s) ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

static bool has_bound_loop(const loom_stmt *s) {
  loom_ir_visitor v = {.stmt_pre = find_bound};
  return !loom_ir_visit_stmt(&v, s);
}

static loom_visit find_memory_stmt(void *ctx, loom_stmt *s) {
  (void)ctx;
  return s->kind == LOOM_STMT_STORE ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

static loom_visit find_memory_expr(void *ctx, loom_expr *e) {
  (void)ctx;
  bool is_extern = e->kind == LOOM_EXPR_CALL && (e->u.call.op == LOOM_OP_CALL_EXTERN ||
                                                 e->u.call.op == LOOM_OP_CALL_PURE_EXTERN);
  return e->kind == LOOM_EXPR_LOAD || is_extern ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

/* Does s read or write memory (or call out)? Such work runs on the device. */
static bool touches_memory(const loom_stmt *s) {
  loom_ir_visitor v = {.stmt_pre = find_memory_stmt, .expr_pre = find_memory_expr};
  return !loom_ir_visit_stmt(&v, s);
}

static bool expr_touches_memory(const loom_expr *e) {
  loom_ir_visitor v = {.expr_pre = find_memory_expr};
  return e && !loom_ir_visit_expr(&v, e);
}

/* ---- variables a kernel takes ---------------------------------------------- */

typedef struct free_vars {
  loom_ptrmap defined, used;
  loom_var **list;
  int n, cap;
  loom_status st;
} free_vars;

static void note_use(free_vars *F, loom_var *v) {
  if (loom_ptrmap_get(&F->used, v) >= 0)
    return;
  if (loom_ptrmap_put(&F->used, v, F->n) != LOOM_OK) {
    F->st = LOOM_NOMEM;
    return;
  }
  if (F->n == F->cap) {
    int cap = F->cap ? 2 * F->cap : 16;
    loom_var **p = realloc(F->list, (size_t)cap * sizeof *p);
    if (!p) {
      F->st = LOOM_NOMEM;
      return;
    }
    F->list = p;
    F->cap = cap;
  }
  F->list[F->n++] = v;
}

static void note_def(free_vars *F, loom_var *v) {
  if (loom_ptrmap_put(&F->defined, v, 1) != LOOM_OK)
    F->st = LOOM_NOMEM;
}

static loom_visit fv_stmt(void *ctx, loom_stmt *s) {
  free_vars *F = ctx;
  switch (s->kind) {
  case LOOM_STMT_FOR: note_def(F, s->u.loop.var); break;
  case LOOM_STMT_LET: note_def(F, s->u.let.var); break;
  case LOOM_STMT_STORE: note_use(F, s->u.store.buffer->data); break;
  case LOOM_STMT_ALLOCATE: note_def(F, s->u.alloc.buffer->data); break;
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_IF:
  case LOOM_STMT_SEQ:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_COUNT_: break;
  }
  return LOOM_VISIT_GO;
}

static loom_visit fv_expr(void *ctx, loom_expr *e) {
  free_vars *F = ctx;
  if (e->kind == LOOM_EXPR_VAR)
    note_use(F, e->u.var);
  else if (e->kind == LOOM_EXPR_LOAD)
    note_use(F, e->u.load.buffer->data);
  else if (e->kind == LOOM_EXPR_LET)
    note_def(F, e->u.let.var);
  return LOOM_VISIT_GO;
}

static bool is_handle(const loom_var *v) { return v->dtype.code == LOOM_DT_HANDLE; }

/* The kernel's parameters: handles first, then scalars, each in order of
 * first use. */
static loom_status kernel_params(gpu_ctx *G, loom_gpu_kernel *k) {
  free_vars F = {0};
  loom_ptrmap_init(&F.defined);
  loom_ptrmap_init(&F.used);
  for (int i = 0; i < LOOM_GPU_AXES; i++)
    if (k->axes[i])
      note_def(&F, k->axes[i]);
  loom_ir_visitor v = {.stmt_pre = fv_stmt, .expr_pre = fv_expr, .ctx = &F};
  loom_ir_visit_stmt(&v, k->body);
  loom_status st = F.st;
  int n = 0;
  if (st == LOOM_OK && !(k->params = loom_arena_alloc(G->a, (size_t)(F.n + 1) * sizeof *k->params)))
    st = LOOM_NOMEM;
  for (int pass = 0; pass < 2 && st == LOOM_OK; pass++)
    for (int i = 0; i < F.n; i++)
      if (loom_ptrmap_get(&F.defined, F.list[i]) < 0 && is_handle(F.list[i]) == (pass == 0))
        k->params[n++] = F.list[i];
  k->n_params = n;
  loom_ptrmap_free(&F.defined);
  loom_ptrmap_free(&F.used);
  free(F.list);
  return st;
}

/* ---- one kernel ------------------------------------------------------------- */

typedef struct kernel_ctx {
  gpu_ctx *G;
  loom_gpu_kernel *k;
  loom_loc first[LOOM_GPU_AXES]; /* where each axis was first bound */
  loom_ptrmap inner;             /* variables the kernel's statements define */
  bool is_dyn;                   /* a "shared.dyn" buffer was seen */
} kernel_ctx;

/* Does e use a variable defined inside the kernel? */
static loom_visit find_inner(void *ctx, loom_expr *e) {
  kernel_ctx *K = ctx;
  return e->kind == LOOM_EXPR_VAR && loom_ptrmap_get(&K->inner, e->u.var) >= 0
             ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

static loom_visit note_inner(void *ctx, loom_stmt *s) {
  kernel_ctx *K = ctx;
  loom_var *v = s->kind == LOOM_STMT_FOR ? s->u.loop.var
                : s->kind == LOOM_STMT_LET ? s->u.let.var : NULL;
  if (v && loom_ptrmap_put(&K->inner, v, 1) != LOOM_OK)
    K->G->st = LOOM_NOMEM;
  return LOOM_VISIT_GO;
}

/* Records the extent of a bound loop's axis; one extent per axis. */
static void note_axis(kernel_ctx *K, const loom_stmt *s, int axis) {
  gpu_ctx *G = K->G;
  loom_gpu_kernel *k = K->k;
  loom_expr *ext = s->u.loop.extent;
  loom_ir_visitor v = {.expr_pre = find_inner, .ctx = K};
  if (!loom_ir_visit_expr(&v, ext)) {
    fail(G, s->loc, "the loop '%s' bound to %s has an extent computed inside the "
         "kernel; a launch extent must be known before the launch",
         s->u.loop.var->name, axis_names[axis]);
    return;
  }
  if (!k->axes[axis]) {
    if (!(k->axes[axis] = loom_ir_var(G->a, axis_names[axis], LOOM_INT32)))
      G->st = LOOM_NOMEM;
    k->extents[axis] = ext;
    K->first[axis] = s->loc;
    return;
  }
  int64_t x, y;
  bool same = loom_ir_same_expr(k->extents[axis], ext) ||
              (loom_ir_is_const_int(k->extents[axis], &x) &&
               loom_ir_is_const_int(ext, &y) && x == y);
  if (!same) {
    char was[32] = "a symbolic extent", now[32] = "another";
    if (loom_ir_is_const_int(k->extents[axis], &x))
      snprintf(was, sizeof was, "extent %lld", (long long)x);
    if (loom_ir_is_const_int(ext, &y))
      snprintf(now, sizeof now, "extent %lld", (long long)y);
    fail(G, s->loc, "%s is bound with %s here and with %s at line %d; every "
         "loop bound to one thread axis in a kernel must have the same extent "
         "(split the loops alike, or launch them as separate kernels)",
         axis_names[axis], now, was, K->first[axis].line);
  }
}

static loom_visit collect_axes(void *ctx, loom_stmt *s) {
  kernel_ctx *K = ctx;
  if (!is_bound(s))
    return LOOM_VISIT_GO;
  int axis = axis_of(s->u.loop.thread);
  if (axis >= 0)
    note_axis(K, s, axis);
  else if (!is_vthread(s->u.loop.thread))
    fail(K->G, s->loc, "unknown thread axis '%s' (blockIdx.x/y/z, threadIdx.x/y/z "
         "or vthread)", s->u.loop.thread ? s->u.loop.thread : "");
  return K->G->st == LOOM_OK ? LOOM_VISIT_GO : LOOM_VISIT_STOP;
}

static bool is_local(const loom_buffer *b) {
  loom_scope_kind s = loom_ir_scope_kind(b->scope);
  return s == LOOM_SCOPE_LOCAL || s == LOOM_SCOPE_FRAGMENT;
}

/* The rewrite of a kernel's statements: bound loops to lets of the axis
 * index, vthreads to serial loops, and stores outside some used axis
 * guarded to the threads at index 0 of it. `inside` is the set of axes
 * whose loops enclose s. */
static loom_stmt *rewrite(kernel_ctx *K, loom_stmt *s, unsigned inside);

static loom_stmt *rewrite_children(kernel_ctx *K, loom_stmt *s, unsigned inside) {
  loom_arena *a = K->G->a;
  loom_stmt *n = loom_ir_stmt(a, s->kind, s->loc);
  if (!n) {
    K->G->st = LOOM_NOMEM;
    return s;
  }
  *n = *s;
  switch (s->kind) {
  case LOOM_STMT_FOR: n->u.loop.body = rewrite(K, s->u.loop.body, inside); break;
  case LOOM_STMT_IF:
    n->u.if_.then_case = rewrite(K, s->u.if_.then_case, inside);
    if (s->u.if_.else_case)
      n->u.if_.else_case = rewrite(K, s->u.if_.else_case, inside);
    break;
  case LOOM_STMT_SEQ: {
    loom_stmt **kids = loom_arena_alloc(a, (size_t)s->u.seq.n_stmts * sizeof *kids + 1);
    if (!kids) {
      K->G->st = LOOM_NOMEM;
      return s;
    }
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      kids[i] = rewrite(K, s->u.seq.stmts[i], inside);
    n->u.seq.stmts = kids;
    break;
  }
  case LOOM_STMT_LET: n->u.let.body = rewrite(K, s->u.let.body, inside); break;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: n->u.alloc.body = rewrite(K, s->u.alloc.body, inside); break;
  case LOOM_STMT_ATTR: n->u.attr.body = rewrite(K, s->u.attr.body, inside); break;
  case LOOM_STMT_ASSERT: n->u.assert_.body = rewrite(K, s->u.assert_.body, inside); break;
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: break;
  }
  return n;
}

/* `if (axis == 0 && ...)` around s for each axis the kernel uses that is
 * not in `inside`. */
static loom_stmt *guard_once(kernel_ctx *K, loom_stmt *s, unsigned inside) {
  loom_arena *a = K->G->a;
  loom_expr *cond = NULL;
  for (int k = 0; k < LOOM_GPU_AXES; k++) {
    if (!K->k->axes[k] || (inside >> k & 1))
      continue;
    loom_expr *is0 = loom_ir_binary(a, LOOM_EXPR_EQ, loom_ir_ref(a, K->k->axes[k]),
                                    loom_ir_int(a, LOOM_INT32, 0));
    cond = cond ? loom_ir_binary(a, LOOM_EXPR_AND, cond, is0) : is0;
  }
  if (!cond)
    return s;
  loom_stmt *g = loom_ir_stmt(a, LOOM_STMT_IF, s->loc);
  if (!g) {
    K->G->st = LOOM_NOMEM;
    return s;
  }
  g->u.if_.cond = cond;
  g->u.if_.then_case = s;
  return g;
}

static loom_stmt *rewrite(kernel_ctx *K, loom_stmt *s, unsigned inside) {
  loom_arena *a = K->G->a;
  if (!s || K->G->st != LOOM_OK)
    return s;
  if (s->kind == LOOM_STMT_STORE)
    return is_local(s->u.store.buffer) ? s : guard_once(K, s, inside);
  if (s->kind == LOOM_STMT_EVALUATE)
    return expr_touches_memory(s->u.evaluate.value) ? guard_once(K, s, inside) : s;
  if (!is_bound(s))
    return rewrite_children(K, s, inside);
  int axis = axis_of(s->u.loop.thread);
  if (axis < 0) { /* vthread: its iterations run one after another */
    loom_stmt *n = rewrite_children(K, s, inside);
    n->u.loop.kind = LOOM_FOR_SERIAL;
    n->u.loop.thread = NULL;
    return n;
  }
  loom_var *v = s->u.loop.var;
  loom_stmt *let = loom_ir_stmt(a, LOOM_STMT_LET, s->loc);
  loom_expr *idx = loom_ir_ref(a, K->k->axes[axis]);
  if (!loom_dtype_eq(v->dtype, LOOM_INT32))
    idx = loom_ir_cast(a, v->dtype, idx);
  int64_t min;
  if (!loom_ir_is_const_int(s->u.loop.min, &min) || min != 0)
    idx = loom_ir_binary(a, LOOM_EXPR_ADD, s->u.loop.min, idx);
  if (!let || !idx) {
    K->G->st = LOOM_NOMEM;
    return s;
  }
  let->u.let.var = v;
  let->u.let.value = idx;
  let->u.let.body = rewrite(K, s->u.loop.body, inside | 1u << axis);
  return let;
}

/* Lays out each shared buffer the kernel allocates at the next 16-byte
 * offset of its shared memory. Refuses a buffer of symbolic size, and a
 * global one in a kernel of many threads. */
static loom_visit count_shared(void *ctx, loom_stmt *s) {
  kernel_ctx *K = ctx;
  if (s->kind != LOOM_STMT_ALLOCATE)
    return LOOM_VISIT_GO;
  const loom_buffer *b = s->u.alloc.buffer;
  loom_scope_kind sk = loom_ir_scope_kind(b->scope);
  bool is_bound = false;
  for (int i = 0; i < LOOM_GPU_AXES; i++)
    is_bound |= K->k->axes[i] != NULL;
  /* Work outside every bound nest runs in one thread, which may keep a
   * global buffer of its own (in local memory); with threads, each would
   * get a copy where the program means one. */
  if (sk == LOOM_SCOPE_GLOBAL && is_bound) {
    fail(K->G, s->loc, "buffer '%s' of scope global is allocated inside a kernel; "
         "global memory is allocated outside blockIdx loops", b->name);
    return LOOM_VISIT_STOP;
  }
  int64_t n = 1, e;
  for (int i = 0; i < b->ndim; i++) {
    if (!loom_ir_is_const_int(b->shape[i], &e)) {
      fail(K->G, s->loc, "buffer '%s' (scope %s) has a size known only at run time; "
           "shared and local buffers need a constant size", b->name, b->scope);
      return LOOM_VISIT_STOP;
    }
    n *= e;
  }
  int bytes = b->dtype.code == LOOM_DT_BOOL || b->dtype.bits < 8 ? 1 : b->dtype.bits / 8;
  if (sk != LOOM_SCOPE_SHARED)
    return LOOM_VISIT_GO;
  loom_gpu_kernel *k = K->k;
  if (k->n_shared % 16 == 0) {
    const loom_var **vars = loom_arena_alloc(K->G->a, (size_t)(k->n_shared + 16) * sizeof *vars);
    int64_t *offs = loom_arena_alloc(K->G->a, (size_t)(k->n_shared + 16) * sizeof *offs);
    if (!vars || !offs) {
      K->G->st = LOOM_NOMEM;
      return LOOM_VISIT_STOP;
    }
    if (k->n_shared) {
      memcpy(vars, k->shared_vars, (size_t)k->n_shared * sizeof *vars);
      memcpy(offs, k->shared_offsets, (size_t)k->n_shared * sizeof *offs);
    }
    k->shared_vars = vars;
    k->shared_offsets = offs;
  }
  /* Each buffer at the next 16-byte boundary: room for vector accesses. */
  int64_t at = (k->shared_bytes + 15) / 16 * 16;
  k->shared_vars[k->n_shared] = b->data;
  k->shared_offsets[k->n_shared++] = at;
  k->shared_bytes = at + n * bytes * (b->dtype.lanes ? b->dtype.lanes : 1);
  K->is_dyn |= b->scope && !strcmp(b->scope, "shared.dyn");
  return LOOM_VISIT_GO;
}

/* ---- shared memory read before it is written -------------------------------- */

typedef struct first_use {
  const loom_var *data;  /* the shared buffer's */
  const loom_stmt *read; /* the statement that reads it first, if a read
                            comes first in program order */
  const loom_stmt *at;   /* the statement being walked */
} first_use;

static loom_visit reads_data(void *ctx, loom_expr *e) {
  return e->kind == LOOM_EXPR_LOAD && e->u.load.buffer->data == ctx ? LOOM_VISIT_STOP
                                                                     : LOOM_VISIT_GO;
}

static bool expr_reads(const loom_expr *e, const loom_var *data) {
  loom_ir_visitor v = {.expr_pre = reads_data, .ctx = (void *)data};
  return !loom_ir_visit_expr(&v, e);
}

static loom_visit first_stmt(void *ctx, loom_stmt *s) {
  first_use *U = ctx;
  U->at = s;
  if (s->kind != LOOM_STMT_STORE || s->u.store.buffer->data != U->data)
    return LOOM_VISIT_GO;
  /* A store evaluates its value and indices before it writes. */
  bool is_read = expr_reads(s->u.store.value, U->data);
  for (int i = 0; i < s->u.store.n_indices && !is_read; i++)
    is_read = expr_reads(s->u.store.indices[i], U->data);
  if (is_read)
    U->read = s;
  return LOOM_VISIT_STOP;
}

static loom_visit first_expr(void *ctx, loom_expr *e) {
  first_use *U = ctx;
  if (e->kind != LOOM_EXPR_LOAD || e->u.load.buffer->data != U->data)
    return LOOM_VISIT_GO;
  U->read = U->at;
  return LOOM_VISIT_STOP;
}

/* Refuses a shared buffer whose first use, in program order, is a read:
 * no thread has written what the block would read. */
static loom_visit check_written_first(void *ctx, loom_stmt *s) {
  kernel_ctx *K = ctx;
  if (s->kind != LOOM_STMT_ALLOCATE ||
      loom_ir_scope_kind(s->u.alloc.buffer->scope) != LOOM_SCOPE_SHARED)
    return LOOM_VISIT_GO;
  first_use U = {.data = s->u.alloc.buffer->data};
  loom_ir_visitor v = {.stmt_pre = first_stmt, .expr_pre = first_expr, .ctx = &U};
  loom_ir_visit_stmt(&v, s->u.alloc.body);
  if (U.read) {
    fail(K->G, U.read->loc.line ? U.read->loc : s->loc,
         "shared buffer '%s' is read here before any thread of the block wrote it; "
         "fill it first (cache_read into shared memory, or an init block)",
         s->u.alloc.buffer->name);
    return LOOM_VISIT_STOP;
  }
  return LOOM_VISIT_GO;
}

/* Checks the kernel against the target's limits. */
static void check_limits(kernel_ctx *K) {
  gpu_ctx *G = K->G;
  loom_gpu_kernel *k = K->k;
  const loom_gpu_desc *gpu = &G->t->gpu;
  int64_t threads = 1;
  for (int i = LOOM_GPU_THREAD_X; i <= LOOM_GPU_THREAD_Z && G->st == LOOM_OK; i++) {
    int64_t e;
    if (!k->axes[i])
      continue;
    if (!loom_ir_is_const_int(k->extents[i], &e) || e < 1) {
      fail(G, K->first[i], "%s is bound to a loop of %s; thread extents must be "
           "positive constants", axis_names[i],
           loom_ir_is_const_int(k->extents[i], &e) ? "no iterations" : "symbolic extent");
      return;
    }
    threads *= e;
  }
  static const int64_t dim_limit[LOOM_GPU_AXES] = {2147483647, 65535, 65535, 1024, 1024, 64};
  for (int i = 0; i < LOOM_GPU_AXES && G->st == LOOM_OK; i++) {
    int64_t e;
    if (k->axes[i] && loom_ir_is_const_int(k->extents[i], &e) && e > dim_limit[i])
      fail(G, K->first[i], "%s is bound to a loop of extent %lld; the limit is %lld",
           axis_names[i], (long long)e, (long long)dim_limit[i]);
  }
  if (G->st == LOOM_OK && threads > gpu->max_threads_per_block)
    fail(G, k->loc, "kernel '%s' has %lld threads per block; the target allows %d",
         k->name, (long long)threads, gpu->max_threads_per_block);
  int64_t most = gpu->shared_per_block_optin > gpu->shared_per_block
                     ? gpu->shared_per_block_optin : gpu->shared_per_block;
  if (G->st == LOOM_OK && k->shared_bytes > most)
    fail(G, k->loc, "kernel '%s' allocates %lld bytes of shared memory per block; "
         "the target allows %lld (%lld without the opt-in to dynamic shared memory)",
         k->name, (long long)k->shared_bytes, (long long)most,
         (long long)gpu->shared_per_block);
  if (k->shared_bytes > gpu->shared_per_block || K->is_dyn)
    k->dynamic_shared = k->shared_bytes;
  else
    k->n_shared = 0; /* static: each buffer an array of its own */
  k->threads = (int)threads;
}

static loom_gpu_kernel *new_kernel(gpu_ctx *G) {
  if (G->n == G->cap) {
    int cap = G->cap ? 2 * G->cap : 4;
    loom_gpu_kernel *p = loom_arena_alloc(G->a, (size_t)cap * sizeof *p);
    if (!p)
      return NULL;
    if (G->n)
      memcpy(p, G->kernels, (size_t)G->n * sizeof *p);
    G->kernels = p;
    G->cap = cap;
  }
  loom_gpu_kernel *k = &G->kernels[G->n];
  memset(k, 0, sizeof *k);
  char name[128];
  snprintf(name, sizeof name, "%s_kernel%d", G->f->name, G->n);
  if (!(k->name = loom_arena_strdup(G->a, name)))
    return NULL;
  G->n++;
  return k;
}

/* ---- warp matrix operations --------------------------------------------------
 * A wmma call is made by the 32 lanes of a warp together. The lanes are
 * threadIdx.x (the warps threadIdx.y and z), so a call must stand outside
 * every loop bound to threadIdx.x, and threadIdx.x must have the warp's
 * extent; a kernel that binds no threadIdx.x gets it implicitly, as TVM's
 * warp execution does. */

static loom_visit check_lanes(void *ctx, loom_stmt *s) {
  kernel_ctx *K = ctx;
  if (!is_bound(s) || axis_of(s->u.loop.thread) != LOOM_GPU_THREAD_X ||
      !loom_ir_stmt_has_wmma(s->u.loop.body))
    return LOOM_VISIT_GO;
  fail(K->G, s->loc, "the GPU lowering does not support a wmma call inside the loop "
       "'%s' bound to threadIdx.x: the warp's 32 lanes (threadIdx.x) make each call "
       "together, so bind threadIdx.x elsewhere (the copies) and leave the tensorized "
       "blocks outside it",
       s->u.loop.var->name);
  return LOOM_VISIT_STOP;
}

static void warp_lanes(kernel_ctx *K, loom_stmt *s) {
  gpu_ctx *G = K->G;
  loom_gpu_kernel *k = K->k;
  if (!loom_ir_stmt_has_wmma(s))
    return;
  loom_ir_visitor v = {.stmt_pre = check_lanes, .ctx = K};
  loom_ir_visit_stmt(&v, s);
  int warp = G->t->gpu.warp_size > 0 ? G->t->gpu.warp_size : 32;
  int64_t e;
  if (G->st != LOOM_OK)
    return;
  if (!k->axes[LOOM_GPU_THREAD_X]) {
    k->axes[LOOM_GPU_THREAD_X] = loom_ir_var(G->a, axis_names[LOOM_GPU_THREAD_X], LOOM_INT32);
    k->extents[LOOM_GPU_THREAD_X] = loom_ir_int(G->a, LOOM_INT32, warp);
    if (!k->axes[LOOM_GPU_THREAD_X] || !k->extents[LOOM_GPU_THREAD_X])
      G->st = LOOM_NOMEM;
  } else if (!loom_ir_is_const_int(k->extents[LOOM_GPU_THREAD_X], &e) || e != warp) {
    fail(G, K->first[LOOM_GPU_THREAD_X], "threadIdx.x is bound here to a loop of "
         "extent other than %d in a kernel that makes wmma calls; threadIdx.x is the "
         "warp's lanes there, so every loop bound to it must have extent %d", warp, warp);
  }
}

/* The launch of a new kernel whose body is s. */
static loom_stmt *make_kernel(gpu_ctx *G, loom_stmt *s) {
  loom_gpu_kernel *k = new_kernel(G);
  if (!k) {
    G->st = LOOM_NOMEM;
    return s;
  }
  k->loc = s->loc;
  kernel_ctx K = {.G = G, .k = k};
  loom_ptrmap_init(&K.inner);
  loom_ir_visitor inner = {.stmt_pre = note_inner, .ctx = &K};
  loom_ir_visit_stmt(&inner, s);
  loom_ir_visitor axes = {.stmt_pre = collect_axes, .ctx = &K};
  if (G->st == LOOM_OK)
    loom_ir_visit_stmt(&axes, s);
  if (G->st == LOOM_OK)
    warp_lanes(&K, s);
  if (G->st == LOOM_OK)
    k->body = rewrite(&K, s, 0);
  loom_ir_visitor shared = {.stmt_pre = count_shared, .ctx = &K};
  if (G->st == LOOM_OK)
    loom_ir_visit_stmt(&shared, k->body);
  if (G->st == LOOM_OK)
    check_limits(&K);
  loom_ir_visitor unwritten = {.stmt_pre = check_written_first, .ctx = &K};
  if (G->st == LOOM_OK)
    loom_ir_visit_stmt(&unwritten, k->body);
  if (G->st == LOOM_OK)
    G->st = lower_gpu_sync(G->a, k, G->d);
  if (G->st == LOOM_OK)
    G->st = kernel_params(G, k);
  loom_ptrmap_free(&K.inner);
  loom_expr *args[2] = {loom_ir_str(G->a, LOOM_GPU_LAUNCH),
                        loom_ir_int(G->a, LOOM_INT32, G->n - 1)};
  loom_stmt *launch = loom_ir_stmt(G->a, LOOM_STMT_EVALUATE, s->loc);
  if (!args[0] || !args[1] || !launch ||
      !(launch->u.evaluate.value = loom_ir_call(G->a, LOOM_VOID, LOOM_OP_CALL_EXTERN, args, 2))) {
    G->st = LOOM_NOMEM;
    return s;
  }
  return launch;
}

/* ---- the host --------------------------------------------------------------- */

static loom_stmt *split(gpu_ctx *G, loom_stmt *s);

/* The call of cuBLAS for the nest s is marked with (LOOM_GPU_CUBLAS); a
 * kernel of the nest as written when the mark does not describe f's
 * buffers. */
static loom_stmt *library_call(gpu_ctx *G, loom_stmt *s) {
  loom_gemm g;
  if (!loom_dispatch_marked_gemm(G->lf, s, &g) || strcmp(g.routine, "cublas_gemm"))
    return make_kernel(G, s);
  char ab[LOOM_DTYPE_STRLEN], c[LOOM_DTYPE_STRLEN];
  loom_arena *a = G->a;
  const int64_t ints[6] = {g.m, g.n, g.k, g.batch, g.is_b_batched, g.beta};
  loom_expr *args[13] = {
      loom_ir_str(a, LOOM_GPU_CUBLAS), loom_ir_str(a, loom_dtype_str(g.ab, ab)),
      loom_ir_str(a, loom_dtype_str(g.c->dtype, c)),
      loom_ir_str(a, loom_dispatch_gemm_layout(&g)),
      loom_ir_ref(a, g.a->data), loom_ir_ref(a, g.b->data), loom_ir_ref(a, g.c->data)};
  for (int i = 0; i < 6; i++)
    args[7 + i] = loom_ir_int(a, LOOM_INT64, ints[i]);
  loom_stmt *call = loom_ir_stmt(a, LOOM_STMT_EVALUATE, s->loc);
  for (int i = 0; i < 13; i++)
    if (!args[i])
      call = NULL;
  if (!call || !(call->u.evaluate.value = loom_ir_call(a, LOOM_VOID, LOOM_OP_CALL_EXTERN, args, 13))) {
    G->st = LOOM_NOMEM;
    return s;
  }
  return call;
}

static loom_stmt *split_host(gpu_ctx *G, loom_stmt *s) {
  loom_stmt *n = loom_ir_stmt(G->a, s->kind, s->loc);
  if (!n) {
    G->st = LOOM_NOMEM;
    return s;
  }
  *n = *s;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    if (expr_touches_memory(s->u.loop.extent) || expr_touches_memory(s->u.loop.min))
      return make_kernel(G, s);
    n->u.loop.kind = LOOM_FOR_SERIAL; /* the host launches one after another */
    n->u.loop.body = split(G, s->u.loop.body);
    return n;
  case LOOM_STMT_IF:
    if (expr_touches_memory(s->u.if_.cond))
      return make_kernel(G, s);
    n->u.if_.then_case = split(G, s->u.if_.then_case);
    if (s->u.if_.else_case)
      n->u.if_.else_case = split(G, s->u.if_.else_case);
    return n;
  case LOOM_STMT_SEQ: {
    loom_stmt **kids = loom_arena_alloc(G->a, (size_t)s->u.seq.n_stmts * sizeof *kids + 1);
    if (!kids) {
      G->st = LOOM_NOMEM;
      return s;
    }
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      kids[i] = split(G, s->u.seq.stmts[i]);
    n->u.seq.stmts = kids;
    return n;
  }
  case LOOM_STMT_LET:
    if (expr_touches_memory(s->u.let.value))
      return make_kernel(G, s);
    n->u.let.body = split(G, s->u.let.body);
    return n;
  case LOOM_STMT_ALLOCATE:
    /* Memory that outlives a kernel is global memory, whatever scope the
     * program gave it: a shared buffer used by two kernels, or outside the
     * loops bound to blockIdx, is one buffer in TensorIR's meaning. A
     * fragment lives in a warp's registers and cannot. */
    if (loom_ir_scope_kind(s->u.alloc.buffer->scope) == LOOM_SCOPE_FRAGMENT &&
        has_bound_loop(s->u.alloc.body)) {
      fail(G, s->loc, "fragment buffer '%s' (scope %s) is used by more than one kernel "
           "or outside the loops bound to threads; a fragment belongs to one warp: "
           "compute it under the loop bound to threadIdx.y (compute_at, "
           "reverse_compute_at)", s->u.alloc.buffer->name, s->u.alloc.buffer->scope);
      return s;
    }
    n->u.alloc.body = split(G, s->u.alloc.body);
    return n;
  case LOOM_STMT_DECL_BUFFER: n->u.alloc.body = split(G, s->u.alloc.body); return n;
  case LOOM_STMT_ATTR: n->u.attr.body = split(G, s->u.attr.body); return n;
  case LOOM_STMT_ASSERT:
    if (expr_touches_memory(s->u.assert_.cond))
      return make_kernel(G, s);
    n->u.assert_.body = split(G, s->u.assert_.body);
    return n;
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: break;
  }
  return make_kernel(G, s);
}

bool loom_lower_gpu_cublas_read(const loom_expr *e, loom_gpu_cublas *out) {
  if (e->kind != LOOM_EXPR_CALL || e->u.call.n_args != 13)
    return false;
  loom_expr *const *x = e->u.call.args;
  for (int i = 0; i < 4; i++)
    if (x[i]->kind != LOOM_EXPR_STR)
      return false;
  int64_t v[6];
  for (int i = 0; i < 6; i++)
    if (!loom_ir_is_const_int(x[7 + i], &v[i]))
      return false;
  const char *trans = x[3]->u.str;
  if (strcmp(x[0]->u.str, LOOM_GPU_CUBLAS) ||
      !loom_dtype_parse(x[1]->u.str, strlen(x[1]->u.str), &out->ab) ||
      !loom_dtype_parse(x[2]->u.str, strlen(x[2]->u.str), &out->c) || strlen(trans) != 2 ||
      !strchr("NT", trans[0]) || !strchr("NT", trans[1]))
    return false;
  out->trans_a = trans[0] == 'T';
  out->trans_b = trans[1] == 'T';
  out->a = x[4];
  out->b = x[5];
  out->c_data = x[6];
  out->m = v[0], out->n = v[1], out->k = v[2], out->batch = v[3];
  out->is_b_batched = v[4];
  out->is_accumulating = v[5];
  return true;
}

/* s as host statements: a bound nest, or work outside every bound nest,
 * becomes a kernel; what holds bound nests is split further. */
static loom_stmt *split(gpu_ctx *G, loom_stmt *s) {
  if (!s || G->st != LOOM_OK)
    return s;
  if (is_library(s))
    return library_call(G, s);
  if (is_bound(s))
    return make_kernel(G, s);
  if (has_bound_loop(s))
    return split_host(G, s);
  return touches_memory(s) ? make_kernel(G, s) : s;
}

loom_status loom_lower_gpu(loom_arena *a, const loom_func *f, const loom_target *t,
                           loom_gpu_func *out, loom_diag *d) {
  memset(out, 0, sizeof *out);
  if (t->kind != LOOM_TARGET_CUDA)
    return loom_diag_error(d, f->loc, "%s: GPU lowering needs a cuda target, not %s",
                           f->name, loom_target_kind_name(t->kind));
  loom_func *rf, *lf;
  TRY(lower_gpu_reductions(a, f, &rf, d));
  TRY(loom_lower_func(a, rf, &lf, d));
  gpu_ctx G = {.a = a, .d = d, .t = t, .f = f, .lf = lf};
  loom_func *host = loom_arena_alloc(a, sizeof *host);
  if (!host)
    return LOOM_NOMEM;
  *host = *lf;
  host->body = split(&G, lf->body);
  if (G.st != LOOM_OK)
    return G.st;
  out->host = host;
  out->kernels = G.kernels;
  out->n_kernels = G.n;
  return LOOM_OK;
}
