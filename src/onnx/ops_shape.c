/* Layout operators: Flatten, Reshape, Squeeze and Unsqueeze (the
 * library's reshape, the new shape read at import), Transpose, and Concat
 * (the library's concatenate for two inputs, TE for any other number). */
#include "onnx_impl.h"

#include <string.h>

static loom_status reshape_to(onnx_node *n, const int64_t *shape, int ndim,
                              loom_te_tensor **out) {
  const loom_tensor_info *a = n->in[0];
  if (a->ndim == 0 || ndim == 0)
    return node_error(n, "reshaping to or from a scalar is not supported");
  loom_te_tensor *x = node_arg(n, 0);
  return node_apply(n, "reshape", &x, 1, out, "shape=%s new_shape=%s dtype=%s",
                    node_shape_str(n, a->shape, a->ndim),
                    node_shape_str(n, shape, ndim),
                    node_dtype_str(n, a->dtype));
}

loom_status onnx_flatten(onnx_node *n, loom_te_tensor **out) {
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  const loom_tensor_info *a = n->in[0];
  int64_t axis = node_attr_int(n, "axis", 1);
  if (axis < -a->ndim || axis > a->ndim)
    return node_error(n, "axis=%lld is out of range for rank %d",
                      (long long)axis, a->ndim);
  if (axis < 0)
    axis += a->ndim;
  int64_t shape[2] = {1, 1};
  for (int i = 0; i < a->ndim; i++)
    shape[i >= axis] *= a->shape[i];
  return reshape_to(n, shape, 2, out);
}

/* ONNX's new shape: 0 keeps the input's extent (unless allowzero), one -1
 * takes what the others leave. */
loom_status onnx_reshape(onnx_node *n, loom_te_tensor **out) {
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  const loom_tensor_info *a = n->in[0];
  int64_t shape[ONNX_MAX_RANK];
  int ndim;
  TRY(node_const_ints(n, 1, "shape", shape, ONNX_MAX_RANK, &ndim));
  bool is_allowzero = node_attr_int(n, "allowzero", 0) != 0;
  int64_t known = 1;
  int infer = -1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == 0 && !is_allowzero) {
      if (i >= a->ndim)
        return node_error(n, "shape[%d] is 0 but the input has rank %d", i,
                          a->ndim);
      shape[i] = a->shape[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0)
        return node_error(n, "shape has more than one -1");
      infer = i;
      continue;
    }
    if (shape[i] < 1)
      return node_error(n, "shape[%d] is %lld; extents of at least 1 are "
                        "supported", i, (long long)shape[i]);
    known *= shape[i];
  }
  int64_t total = onnx_numel(a);
  if (infer >= 0) {
    if (total % known)
      return node_error(n, "%lld elements do not divide into the shape",
                        (long long)total);
    shape[infer] = total / known;
  }
  return reshape_to(n, shape, ndim, out);
}

/* The axes of Squeeze and Unsqueeze: an attribute before opset 13, a
 * constant input after; *n_axes is -1 when none are given. */
static loom_status squeeze_axes(onnx_node *n, int64_t *axes, int *n_axes) {
  *n_axes = -1;
  if (n->opset < 13) {
    int k = node_attr_ints(n, "axes", axes, ONNX_MAX_RANK);
    if (k == -2)
      return LOOM_ERROR; /* too many: said */
    *n_axes = k;
    return LOOM_OK;
  }
  if (node_attr(n, "axes"))
    return node_error(n, "axes is an input from opset 13");
  if (node_has(n, 1))
    TRY(node_const_ints(n, 1, "axes", axes, ONNX_MAX_RANK, n_axes));
  return LOOM_OK;
}

/* Unsqueeze: extents of 1 inserted at the axes (of the result's rank). */
loom_status onnx_unsqueeze(onnx_node *n, loom_te_tensor **out) {
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  const loom_tensor_info *a = n->in[0];
  int64_t axes[ONNX_MAX_RANK], shape[ONNX_MAX_RANK];
  int n_axes;
  TRY(squeeze_axes(n, axes, &n_axes));
  if (n_axes < 1)
    return node_error(n, "needs the axes to insert");
  int rank = a->ndim + n_axes;
  if (rank > ONNX_MAX_RANK)
    return node_error(n, "the result has rank %d (limit is %d)", rank, ONNX_MAX_RANK);
  bool is_new[ONNX_MAX_RANK] = {false};
  for (int i = 0; i < n_axes; i++) {
    int ax;
    TRY(node_axis(n, "axes", axes[i], rank, &ax));
    if (is_new[ax])
      return node_error(n, "axis %lld is given twice", (long long)axes[i]);
    is_new[ax] = true;
  }
  for (int i = 0, k = 0; i < rank; i++)
    shape[i] = is_new[i] ? 1 : a->shape[k++];
  return reshape_to(n, shape, rank, out);
}

/* Squeeze: the axes of extent 1 given (none given: every one) removed. */
loom_status onnx_squeeze(onnx_node *n, loom_te_tensor **out) {
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  const loom_tensor_info *a = n->in[0];
  int64_t axes[ONNX_MAX_RANK], shape[ONNX_MAX_RANK];
  int n_axes;
  TRY(squeeze_axes(n, axes, &n_axes));
  bool is_gone[ONNX_MAX_RANK] = {false};
  for (int i = 0; i < a->ndim; i++)
    is_gone[i] = n_axes < 1 && a->shape[i] == 1;
  for (int i = 0; i < n_axes; i++) {
    int ax;
    TRY(node_axis(n, "axes", axes[i], a->ndim, &ax));
    if (a->shape[ax] != 1)
      return node_error(n, "axis %lld has extent %lld, not 1", (long long)axes[i],
                        (long long)a->shape[ax]);
    is_gone[ax] = true;
  }
  int rank = 0;
  for (int i = 0; i < a->ndim; i++)
    if (!is_gone[i])
      shape[rank++] = a->shape[i];
  return reshape_to(n, shape, rank, out);
}

/* Shape and Size nodes never reach a builder: read.c makes their result
 * a constant. */
loom_status onnx_shape(onnx_node *n, loom_te_tensor **out) {
  (void)out;
  return node_error(n, "a Shape or Size node makes no call (internal)");
}

loom_status onnx_transpose(onnx_node *n, loom_te_tensor **out) {
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  const loom_tensor_info *a = n->in[0];
  int64_t perm[ONNX_MAX_RANK];
  int np = node_attr_ints(n, "perm", perm, ONNX_MAX_RANK);
  if (np == -2)
    return LOOM_ERROR;
  if (np < 0) {
    np = a->ndim;
    for (int i = 0; i < np; i++)
      perm[i] = np - 1 - i;
  }
  if (a->ndim == 0)
    return node_error(n, "transposing a scalar is not supported");
  loom_te_tensor *x = node_arg(n, 0);
  return node_apply(n, "transpose", &x, 1, out, "shape=%s axes=%s dtype=%s",
                    node_shape_str(n, a->shape, a->ndim),
                    node_shape_str(n, perm, np), node_dtype_str(n, a->dtype));
}

/* ---- Concat ---------------------------------------------------------------- */

typedef struct concat_ctx {
  loom_te_tensor **x;
  int64_t *offset; /* where each input starts along the axis */
  int n, axis, rank;
} concat_ctx;

/* The last input whose range holds the index, found by testing the later
 * inputs first as topi does. */
static loom_expr *concat_body(loom_te *te, void *user, loom_expr *const *idx) {
  concat_ctx *c = user;
  loom_expr *v = loom_te_at(te, c->x[0], idx, c->rank);
  for (int i = 1; i < c->n; i++) {
    loom_expr *xi[ONNX_MAX_RANK];
    for (int k = 0; k < c->rank; k++)
      xi[k] = k == c->axis ? loom_te_sub(te, idx[k],
                                         loom_te_int(te, c->offset[i]))
                           : idx[k];
    loom_expr *cond = loom_te_bin(te, LOOM_EXPR_LE,
                                  loom_te_int(te, c->offset[i]), idx[c->axis]);
    v = loom_te_if_then_else(te, cond, loom_te_at(te, c->x[i], xi, c->rank), v);
  }
  return v;
}

loom_status onnx_concat(onnx_node *n, loom_te_tensor **out) {
  if (n->n_in < 1 || !node_has(n, 0))
    return node_error(n, "takes at least one input");
  if (!node_attr(n, "axis"))
    return node_error(n, "attribute axis is required");
  const loom_tensor_info *a = n->in[0];
  concat_ctx c = {0};
  c.n = n->n_in;
  c.rank = a->ndim;
  TRY(node_axis(n, "axis", node_attr_int(n, "axis", 0), a->ndim, &c.axis));
  c.x = loom_arena_alloc(n->arena, sizeof *c.x * (size_t)c.n);
  c.offset = loom_arena_alloc(n->arena, sizeof *c.offset * (size_t)(c.n + 1));
  if (!c.x || !c.offset)
    return LOOM_NOMEM;
  for (int i = 0; i < c.n; i++) {
    const loom_tensor_info *b = n->in[i];
    bool ok = b && b->ndim == a->ndim && loom_dtype_eq(a->dtype, b->dtype);
    for (int k = 0; ok && k < a->ndim; k++)
      ok = k == c.axis || a->shape[k] == b->shape[k];
    if (!ok)
      return node_error(n, "input %d does not match input 0 in type, rank or "
                        "the extents off the axis", i);
    c.x[i] = node_arg(n, i);
    c.offset[i + 1] = c.offset[i] + b->shape[c.axis];
  }
  if (c.n == 2)
    return node_apply(n, "concatenate", c.x, 2, out,
                      "a_shape=%s b_shape=%s axis=%d dtype=%s",
                      node_shape_str(n, a->shape, a->ndim),
                      node_shape_str(n, n->in[1]->shape, a->ndim), c.axis,
                      node_dtype_str(n, a->dtype));
  int64_t shape[ONNX_MAX_RANK];
  memcpy(shape, a->shape, sizeof *shape * (size_t)a->ndim);
  shape[c.axis] = c.offset[c.n];
  loom_expr *s[ONNX_MAX_RANK];
  node_shape_exprs(n, shape, a->ndim, s);
  *out = loom_te_compute(n->te, "T_concat", s, a->ndim, NULL, concat_body, &c);
  return LOOM_OK;
}
