/* Matrix products: Gemm (alpha * A' * B' + beta * C, C broadcast to the
 * result) and MatMul (numpy's matmul: 1-D operands, batches broadcast).
 * The library's matmul and batch_matmul build the common forms; TE adds
 * Gemm's scaling and broadcast bias, and MatMul's general case. */
#include "onnx_impl.h"

#include <string.h>

typedef struct mm_ctx {
  onnx_node *n;
  loom_te_tensor *a, *b, *c, *y;
  loom_var *k;
  int n_batch, rank;
  bool has_m, has_n; /* the result keeps A's rows, B's columns */
  double alpha, beta;
  loom_dtype acc; /* MatMul's general case sums in it */
} mm_ctx;

/* ---- Gemm ---------------------------------------------------------------------- */

static loom_expr *gemm_body(loom_te *te, void *user, loom_expr *const *idx) {
  mm_ctx *c = user;
  loom_dtype t = loom_te_dtype(c->y);
  loom_expr *v = loom_te_at(te, c->y, idx, 2);
  if (c->alpha != 1)
    v = loom_te_mul(te, loom_te_const(te, t, c->alpha), v);
  if (c->c) {
    loom_expr *b = loom_te_cast(te, t, node_bcast_at(c->n, c->c, idx, 2));
    if (c->beta != 1)
      b = loom_te_mul(te, loom_te_const(te, t, c->beta), b);
    v = loom_te_add(te, v, b);
  }
  return v;
}

loom_status onnx_gemm(onnx_node *n, loom_te_tensor **out) {
  if (!node_has(n, 0) || !node_has(n, 1))
    return node_error(n, "takes inputs A and B");
  const loom_tensor_info *a = n->in[0], *b = n->in[1], *ci = n->in[2];
  bool ta = node_attr_int(n, "transA", 0), tb = node_attr_int(n, "transB", 0);
  mm_ctx c = {0};
  c.n = n;
  c.alpha = node_attr_float(n, "alpha", 1);
  c.beta = node_attr_float(n, "beta", 1);
  if (a->ndim != 2 || b->ndim != 2)
    return node_error(n, "A and B must be matrices");
  int64_t M = a->shape[ta], K = a->shape[!ta];
  int64_t N = b->shape[!tb], KB = b->shape[tb];
  if (K != KB)
    return node_error(n, "A has %lld columns (after transA) but B has %lld "
                      "rows (after transB)", (long long)K, (long long)KB);
  if (!loom_dtype_eq(a->dtype, b->dtype))
    return node_error(n, "A and B have different types");
  bool has_c = node_has(n, 2) && c.beta != 0;
  if (has_c) {
    int64_t s[ONNX_MAX_RANK];
    int r;
    loom_tensor_info y = {a->dtype, (int64_t[]){M, N}, 2};
    TRY(node_bcast_shape(n, ci, &y, s, &r));
    if (r != 2 || s[0] != M || s[1] != N)
      return node_error(n, "C does not broadcast to the result (%lld, %lld)",
                        (long long)M, (long long)N);
  }
  /* The library's own bias: a vector of N added with no scaling, of the
   * type the product sums in. */
  loom_dtype acc = node_acc_dtype(n, a->dtype);
  bool is_lib_bias = has_c && ci->ndim == 1 && ci->shape[0] == N &&
                     c.alpha == 1 && c.beta == 1 && loom_dtype_eq(acc, a->dtype);
  loom_te_tensor *in[3] = {node_arg(n, 0), node_arg(n, 1),
                           is_lib_bias ? node_arg(n, 2) : NULL};
  loom_te_tensor *y;
  TRY(node_apply(n, "matmul", in, is_lib_bias ? 3 : 2, &y,
                 "M=%lld N=%lld K=%lld layout=%c%c bias=%d dtype=%s out_dtype=%s",
                 (long long)M, (long long)N, (long long)K, ta ? 'T' : 'N',
                 tb ? 'T' : 'N', is_lib_bias, node_dtype_str(n, a->dtype),
                 node_dtype_str(n, acc)));
  if (!is_lib_bias && (has_c || c.alpha != 1)) {
    c.y = y;
    c.c = has_c ? node_arg(n, 2) : NULL;
    loom_expr *shape[2];
    node_shape_exprs(n, (int64_t[]){M, N}, 2, shape);
    if (!(y = loom_te_compute(n->te, "T_add", shape, 2, NULL, gemm_body, &c)))
      return LOOM_NOMEM;
  }
  return node_cast(n, y, a->dtype, out);
}

/* ---- MatMul ---------------------------------------------------------------------- */

static loom_expr *matmul_body(loom_te *te, void *user, loom_expr *const *idx) {
  mm_ctx *c = user;
  loom_expr *k = loom_te_ref(te, c->k);
  loom_expr *ai[ONNX_MAX_RANK + 1], *bi[ONNX_MAX_RANK + 1];
  int ra = loom_te_ndim(c->a), rb = loom_te_ndim(c->b);
  /* Batch dimensions, right-aligned against the result's. */
  int nba = ra > 1 ? ra - 2 : 0, nbb = rb > 1 ? rb - 2 : 0;
  for (int i = 0; i < nba; i++) {
    int64_t e;
    loom_ir_is_const_int(loom_te_dim(c->a, i), &e);
    ai[i] = e == 1 ? loom_te_int(te, 0) : idx[c->n_batch - nba + i];
  }
  for (int i = 0; i < nbb; i++) {
    int64_t e;
    loom_ir_is_const_int(loom_te_dim(c->b, i), &e);
    bi[i] = e == 1 ? loom_te_int(te, 0) : idx[c->n_batch - nbb + i];
  }
  int p = c->n_batch;
  if (ra > 1)
    ai[nba++] = idx[p++];
  ai[nba] = k;
  bi[nbb] = k;
  if (rb > 1)
    bi[nbb + 1] = idx[p];
  return loom_te_sum(te, loom_te_mul(te, loom_te_cast(te, c->acc, loom_te_at(te, c->a, ai, ra)),
                                     loom_te_cast(te, c->acc, loom_te_at(te, c->b, bi, rb))),
                     &c->k, 1, NULL);
}

static bool same_batch(const loom_tensor_info *a, const loom_tensor_info *b) {
  if (a->ndim != b->ndim)
    return false;
  for (int i = 0; i < a->ndim - 2; i++)
    if (a->shape[i] != b->shape[i])
      return false;
  return true;
}

loom_status onnx_matmul(onnx_node *n, loom_te_tensor **out) {
  if (!node_has(n, 0) || !node_has(n, 1))
    return node_error(n, "takes inputs A and B");
  const loom_tensor_info *a = n->in[0], *b = n->in[1];
  if (a->ndim < 1 || b->ndim < 1)
    return node_error(n, "takes operands of rank 1 or more");
  if (!loom_dtype_eq(a->dtype, b->dtype))
    return node_error(n, "A and B have different types");
  int64_t K = a->shape[a->ndim - 1];
  int64_t KB = b->shape[b->ndim > 1 ? b->ndim - 2 : 0];
  if (K != KB)
    return node_error(n, "A has %lld columns but B has %lld rows",
                      (long long)K, (long long)KB);
  loom_te_tensor *in[2] = {node_arg(n, 0), node_arg(n, 1)}, *y;
  const char *dt = node_dtype_str(n, a->dtype);
  loom_dtype acc = node_acc_dtype(n, a->dtype);
  const char *adt = node_dtype_str(n, acc);
  int64_t M = a->ndim > 1 ? a->shape[a->ndim - 2] : 1;
  int64_t N = b->ndim > 1 ? b->shape[b->ndim - 1] : 1;
  if (a->ndim == 2 && b->ndim == 2) {
    TRY(node_apply(n, "matmul", in, 2, &y,
                   "M=%lld N=%lld K=%lld layout=NN dtype=%s out_dtype=%s",
                   (long long)M, (long long)N, (long long)K, dt, adt));
    return node_cast(n, y, a->dtype, out);
  }
  if (a->ndim == 3 && same_batch(a, b)) {
    TRY(node_apply(n, "batch_matmul", in, 2, &y,
                   "B=%lld M=%lld N=%lld K=%lld layout=NN dtype=%s out_dtype=%s",
                   (long long)a->shape[0], (long long)M, (long long)N,
                   (long long)K, dt, adt));
    return node_cast(n, y, a->dtype, out);
  }
  /* The batch dimensions broadcast against each other. */
  loom_tensor_info ba = {a->dtype, a->shape, a->ndim > 2 ? a->ndim - 2 : 0};
  loom_tensor_info bb = {b->dtype, b->shape, b->ndim > 2 ? b->ndim - 2 : 0};
  int64_t shape[ONNX_MAX_RANK + 2];
  mm_ctx c = {0};
  c.n = n;
  c.a = in[0];
  c.b = in[1];
  TRY(node_bcast_shape(n, &ba, &bb, shape, &c.n_batch));
  c.rank = c.n_batch;
  if (a->ndim > 1)
    shape[c.rank++] = M;
  if (b->ndim > 1)
    shape[c.rank++] = N;
  if (c.rank > ONNX_MAX_RANK)
    return node_error(n, "the result has rank %d (limit is %d)", c.rank,
                      ONNX_MAX_RANK);
  c.k = loom_te_reduce_axis(n->te, loom_te_int(n->te, K), "k");
  c.acc = acc;
  loom_expr *s[ONNX_MAX_RANK];
  node_shape_exprs(n, shape, c.rank, s);
  if (!(y = loom_te_compute(n->te, "matmul", s, c.rank, NULL, matmul_body, &c)))
    return LOOM_NOMEM;
  return node_cast(n, y, a->dtype, out);
}
