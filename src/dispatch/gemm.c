/* The gemm pattern: loops i, j, k (in any order, perfectly nested, serial,
 * plain; b too for a batch) around one block that computes
 *     C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
 * (A or B possibly transposed), with an init of zero or none, every iter
 * bound to its loop alone, over compact row-major buffers of one float
 * type that BLAS has a routine for; and the gemv pattern, two loops around
 *     y[vi] = y[vi] + A[vi, vk] * x[vk].
 * On cuda the factors may be loads cast to C's type from a narrower one
 * (T.Cast("float32", A[vi, vk])), as a float16 product into float32 is
 * written, and a gemv is a gemm of one column. */
#include "dispatch/dispatch_impl.h"

#include <string.h>

static bool is_float(loom_dtype t, int bits) {
  return t.code == LOOM_DT_FLOAT && t.bits == bits && t.lanes == 1;
}

bool loom_dispatch_cublas_has(loom_dtype ab, loom_dtype c) {
  bool is_half = is_float(ab, 16) || (ab.code == LOOM_DT_BFLOAT && ab.bits == 16 && ab.lanes == 1);
  return ((is_float(c, 32) || is_float(c, 64)) && loom_dtype_eq(ab, c)) ||
         (is_half && is_float(c, 32)) || (is_float(ab, 16) && is_float(c, 16));
}

static bool is_cuda(const loom_target *t) { return t && t->kind == LOOM_TARGET_CUDA; }

/* The routine of target t for factors of dtype ab into c, NULL when its
 * library has none. */
static const char *routine_for(const loom_target *t, loom_dtype ab, loom_dtype c, bool is_gemv) {
  if (is_cuda(t))
    return loom_dispatch_cublas_has(ab, c) ? "cublas_gemm" : NULL;
  if (!loom_dtype_eq(ab, c))
    return NULL;
  if (is_float(c, 32))
    return is_gemv ? "cblas_sgemv" : "cblas_sgemm";
  return is_float(c, 64) ? (is_gemv ? "cblas_dgemv" : "cblas_dgemm") : NULL;
}

/* A factor as its load: e itself, or on cuda the load a cast to C's
 * floating type widens. */
static const loom_expr *factor(const loom_target *t, const loom_expr *e, loom_dtype c) {
  if (is_cuda(t) && e && e->kind == LOOM_EXPR_CAST && loom_dtype_eq(e->dtype, c) &&
      e->u.unary.a->kind == LOOM_EXPR_LOAD && loom_dtype_is_float(e->u.unary.a->dtype) &&
      e->u.unary.a->dtype.bits < c.bits)
    return e->u.unary.a;
  return e;
}

/* Why no routine takes the product, for refusals. */
static bool refuse_types(const loom_target *t, const loom_block *b, loom_dtype ab, loom_dtype c,
                         char *why, size_t n) {
  char x[LOOM_DTYPE_STRLEN], y[LOOM_DTYPE_STRLEN];
  if (is_cuda(t))
    return dispatch_refuse(why, n, "block '%s' multiplies %s into %s, which cuBLAS has no "
                           "routine for", b->name, loom_dtype_str(ab, x), loom_dtype_str(c, y));
  return dispatch_refuse(why, n, "block '%s' is not float32 or float64 throughout", b->name);
}

/* Whether e loads b (any buffer when NULL) at [batch, x, y], or [x, y]
 * when batch is NULL. */
static bool is_load_of(const loom_expr *e, const loom_buffer *b, const loom_var *batch,
                       const loom_var *x, const loom_var *y) {
  int off = batch != NULL;
  return e && e->kind == LOOM_EXPR_LOAD && (!b || e->u.load.buffer == b) &&
         e->u.load.n_indices == 2 + off &&
         (!batch || dispatch_is_var(e->u.load.indices[0], batch)) &&
         dispatch_is_var(e->u.load.indices[off], x) &&
         dispatch_is_var(e->u.load.indices[off + 1], y);
}

/* The product's two factors as loads (factor), A's first: either order
 * of the multiplication; both of one dtype. */
static bool split_product(const loom_target *t, const loom_expr *e, loom_dtype c,
                          const loom_expr **x, const loom_expr **y) {
  if (!e || e->kind != LOOM_EXPR_MUL)
    return false;
  *x = factor(t, e->u.bin.a, c);
  *y = factor(t, e->u.bin.b, c);
  return (*x)->kind == LOOM_EXPR_LOAD && (*y)->kind == LOOM_EXPR_LOAD &&
         loom_dtype_eq((*x)->dtype, (*y)->dtype);
}

/* The matrix-vector form: two loops around y[vi] = y[vi] + A[vi, vk] * x[vk]
 * (A possibly stored [k, m]), a gemm of one column for cblas_?gemv. */
static bool match_gemv(const loom_target *tg, const loom_stmt *const *loops,
                       const loom_stmt *s, loom_gemm *out, char *why, size_t n) {
  const loom_block *b = s->u.realize.block;
  const loom_var *vi = NULL, *vk = NULL;
  int64_t m = 0, k = 0, ext[2];
  if (!dispatch_bind_iters(loops, 2, s, ext, why, n))
    return false;
  for (int t = 0; t < 2; t++) {
    const loom_iter_var *it = &b->iter_vars[t];
    if (it->kind == LOOM_ITER_SPATIAL && !vi) {
      vi = it->var;
      m = ext[t];
    } else if (it->kind == LOOM_ITER_REDUCE && !vk) {
      vk = it->var;
      k = ext[t];
    }
  }
  const loom_stmt *st = b->body;
  if (!vi || !vk || !st || st->kind != LOOM_STMT_STORE || st->u.store.n_indices != 1 ||
      !dispatch_is_var(st->u.store.indices[0], vi))
    return dispatch_refuse(why, n, "block '%s' is not y[i] over one spatial iter and one reduction",
                           b->name);
  const loom_buffer *y = st->u.store.buffer;
  const loom_expr *v = st->u.store.value, *acc, *prod, *p, *q;
  if (!v || v->kind != LOOM_EXPR_ADD)
    return dispatch_refuse(why, n, "block '%s' does not add a product to y", b->name);
  acc = v->u.bin.a;
  prod = v->u.bin.b;
  bool is_acc = acc->kind == LOOM_EXPR_LOAD && acc->u.load.buffer == y &&
                acc->u.load.n_indices == 1 && dispatch_is_var(acc->u.load.indices[0], vi);
  if (!is_acc) {
    acc = v->u.bin.b;
    prod = v->u.bin.a;
    is_acc = acc->kind == LOOM_EXPR_LOAD && acc->u.load.buffer == y &&
             acc->u.load.n_indices == 1 && dispatch_is_var(acc->u.load.indices[0], vi);
  }
  if (!is_acc || !split_product(tg, prod, y->dtype, &p, &q))
    return dispatch_refuse(why, n, "block '%s' does not add a product of two loads to y", b->name);
  if (p->u.load.n_indices == 1) {
    const loom_expr *t = p;
    p = q;
    q = t;
  }
  bool ta = is_load_of(p, NULL, NULL, vk, vi);
  if (!(ta || is_load_of(p, NULL, NULL, vi, vk)) || q->u.load.n_indices != 1 ||
      !dispatch_is_var(q->u.load.indices[0], vk))
    return dispatch_refuse(why, n, "block '%s' does not multiply A[i, k] by x[k]", b->name);
  const loom_buffer *ba = p->u.load.buffer, *bx = q->u.load.buffer;
  loom_dtype t = y->dtype;
  const char *routine = routine_for(tg, ba->dtype, t, true);
  if (!routine || !loom_dtype_eq(v->dtype, t))
    return refuse_types(tg, b, ba->dtype, t, why, n);
  if (ba == y || bx == y)
    return dispatch_refuse(why, n, "block '%s' reads its output as a factor", b->name);
  int beta;
  const loom_stmt *in = b->init;
  if (!in)
    beta = 1;
  else if (in->kind == LOOM_STMT_STORE && in->u.store.buffer == y && in->u.store.n_indices == 1 &&
           dispatch_is_var(in->u.store.indices[0], vi) && dispatch_is_zero(in->u.store.value))
    beta = 0;
  else
    return dispatch_refuse(why, n, "block '%s' starts y from something other than zero", b->name);
  int64_t sa[2] = {ta ? k : m, ta ? m : k};
  if (!dispatch_is_compact(ba, sa, 2) || !dispatch_is_compact(bx, &k, 1) ||
      !dispatch_is_compact(y, &m, 1))
    return dispatch_refuse(why, n, "block '%s' does not cover whole compact global buffers of "
                                   "constant shape", b->name);
  if (m > INT32_MAX || k > INT32_MAX)
    return dispatch_refuse(why, n, "block '%s' is larger than BLAS's int extents", b->name);
  /* cuBLAS takes it as a product of one column: x is B[k, 1]. */
  *out = (loom_gemm){.a = ba, .b = bx, .c = y, .trans_a = ta, .m = m, .n = 1, .k = k,
                     .batch = 1, .beta = beta, .routine = routine, .is_gemv = !is_cuda(tg),
                     .ab = ba->dtype};
  return true;
}

bool loom_dispatch_match_gemm(const loom_func *f, const loom_target *tg, const loom_stmt *loop,
                              loom_gemm *out, char *why, size_t n) {
  (void)f;
  const loom_stmt *loops[4], *s = loop;
  int n_loops = 0;
  while (s && s->kind == LOOM_STMT_FOR && n_loops < 4) {
    if (s->u.loop.kind != LOOM_FOR_SERIAL || s->u.loop.n_annotations)
      return dispatch_refuse(why, n, "loop '%s' is not a plain serial loop", s->u.loop.var->name);
    loops[n_loops++] = s;
    s = s->u.loop.body;
  }
  if (n_loops < 2 || !s || s->kind != LOOM_STMT_BLOCK_REALIZE)
    return dispatch_refuse(why, n, "is not two to four loops around one block");
  const loom_block *b = s->u.realize.block;
  int n_iters = b->n_iter_vars;
  if (s->u.realize.predicate || n_iters != n_loops || s->u.realize.n_iter_values != n_iters ||
      b->n_alloc_buffers || b->n_match_buffers || b->n_writes != 1)
    return dispatch_refuse(why, n, "block '%s' is not one output over an iter per loop", b->name);
  if (n_loops == 2)
    return match_gemv(tg, loops, s, out, why, n);
  /* Each iter is bound to one loop, over the loop's whole range; the
   * spatial ones in order, the one reduction last. */
  const loom_var *iv[4] = {NULL, NULL, NULL, NULL};
  int64_t ext[4] = {0, 0, 0, 0}, bound[4];
  int n_spatial = 0;
  const loom_var *vk = NULL;
  int64_t k = 0;
  if (!dispatch_bind_iters(loops, n_loops, s, bound, why, n))
    return false;
  for (int t = 0; t < n_iters; t++) {
    const loom_iter_var *it = &b->iter_vars[t];
    int64_t e = bound[t];
    if (it->kind == LOOM_ITER_SPATIAL && n_spatial < n_iters - 1) {
      iv[n_spatial] = it->var;
      ext[n_spatial++] = e;
    } else if (it->kind == LOOM_ITER_REDUCE && !vk) {
      vk = it->var;
      k = e;
    } else {
      return dispatch_refuse(why, n, "block '%s' is not spatial iters and one reduction", b->name);
    }
  }
  /* The store: C[(vb,) vi, vj], its indices the spatial iters, which names
   * them. */
  const loom_stmt *st = b->body;
  if (!st || st->kind != LOOM_STMT_STORE || st->u.store.n_indices != n_spatial)
    return dispatch_refuse(why, n, "block '%s' is not one store to C[i, j] or C[b, i, j]", b->name);
  const loom_buffer *c = st->u.store.buffer;
  const loom_var *ix[3] = {NULL, NULL, NULL}; /* b, i, j */
  int64_t ie[3] = {1, 0, 0};
  for (int d = 0; d < n_spatial; d++) {
    int t = 0;
    while (t < n_spatial && !dispatch_is_var(st->u.store.indices[d], iv[t]))
      t++;
    if (t == n_spatial)
      return dispatch_refuse(why, n, "block '%s' does not store C at its spatial iters", b->name);
    ix[d + 3 - n_spatial] = iv[t];
    ie[d + 3 - n_spatial] = ext[t];
  }
  const loom_var *vb = ix[0], *vi = ix[1], *vj = ix[2];
  int64_t batch = ie[0], m = ie[1], nn = ie[2];
  const loom_expr *v = st->u.store.value, *acc, *prod;
  if (!v || v->kind != LOOM_EXPR_ADD)
    return dispatch_refuse(why, n, "block '%s' does not add a product to C", b->name);
  acc = v->u.bin.a;
  prod = v->u.bin.b;
  if (!is_load_of(acc, c, vb, vi, vj)) {
    acc = v->u.bin.b;
    prod = v->u.bin.a;
  }
  const loom_expr *x, *y;
  if (!is_load_of(acc, c, vb, vi, vj) || !split_product(tg, prod, c->dtype, &x, &y))
    return dispatch_refuse(why, n, "block '%s' does not add a product of two loads to C", b->name);
  /* A is the factor indexed by i (and the batch); B by j, with the batch
   * or shared by every batch. */
  if (is_load_of(y, NULL, vb, vi, vk) || is_load_of(y, NULL, vb, vk, vi)) {
    const loom_expr *t = x;
    x = y;
    y = t;
  }
  bool ta = is_load_of(x, NULL, vb, vk, vi);
  bool is_b_batched = vb && (is_load_of(y, NULL, vb, vk, vj) || is_load_of(y, NULL, vb, vj, vk));
  const loom_var *yb = is_b_batched ? vb : NULL;
  bool tb = is_load_of(y, NULL, yb, vj, vk);
  if (!(ta || is_load_of(x, NULL, vb, vi, vk)) || !(tb || is_load_of(y, NULL, yb, vk, vj)))
    return dispatch_refuse(why, n, "block '%s' does not multiply A[i, k] by B[k, j] (either "
                                   "transposed, with or without a batch)", b->name);
  const loom_buffer *ba = x->u.load.buffer, *bb = y->u.load.buffer;
  if (ba == c || bb == c)
    return dispatch_refuse(why, n, "block '%s' reads its output as a factor", b->name);
  /* Types the library has a routine for. */
  loom_dtype t = c->dtype;
  const char *routine = routine_for(tg, ba->dtype, t, false);
  if (!routine || !loom_dtype_eq(v->dtype, t))
    return refuse_types(tg, b, ba->dtype, t, why, n);
  int beta;
  const loom_stmt *in = b->init;
  if (!in)
    beta = 1;
  else if (in->kind == LOOM_STMT_STORE && in->u.store.buffer == c &&
           in->u.store.n_indices == n_spatial &&
           (!vb || dispatch_is_var(in->u.store.indices[0], vb)) &&
           dispatch_is_var(in->u.store.indices[n_spatial - 2], vi) &&
           dispatch_is_var(in->u.store.indices[n_spatial - 1], vj) &&
           dispatch_is_zero(in->u.store.value))
    beta = 0;
  else
    return dispatch_refuse(why, n, "block '%s' starts C from something other than zero", b->name);
  int64_t sa[3] = {batch, ta ? k : m, ta ? m : k}, sb[3] = {batch, tb ? nn : k, tb ? k : nn};
  int64_t sc[3] = {batch, m, nn};
  if (!dispatch_is_compact(ba, sa + !vb, 2 + !!vb) || !dispatch_is_compact(bb, sb + !is_b_batched,
                                                         2 + is_b_batched) ||
      !dispatch_is_compact(c, sc + !vb, 2 + !!vb))
    return dispatch_refuse(why, n, "block '%s' does not cover whole compact global buffers of "
                                   "constant shape", b->name);
  if (m * batch > INT32_MAX || nn > INT32_MAX || k > INT32_MAX)
    return dispatch_refuse(why, n, "block '%s' is larger than BLAS's int extents", b->name);
  *out = (loom_gemm){.a = ba, .b = bb, .c = c, .trans_a = ta, .trans_b = tb, .m = m,
                     .n = nn, .k = k, .batch = batch, .is_b_batched = is_b_batched,
                     .beta = beta, .routine = routine, .ab = ba->dtype};
  return true;
}
