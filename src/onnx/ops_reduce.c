/* The Reduce operators: a sum, max, min or product over any set of axes
 * (an attribute before opset 18, ReduceSum's from 13, an input after),
 * the reduced axes kept as extents of 1 unless keepdims=0, and what ONNX
 * defines around it: the square or absolute value or exponential summed,
 * the mean, the L2 norm, the log of the sum. TE builds them: the library's
 * reductions take one axis. */
#include "onnx_impl.h"

#include <string.h>

typedef enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_SUM_SQUARE, R_L1, R_L2,
               R_LOG_SUM, R_LOG_SUM_EXP } reduce_kind;

typedef struct reduce_ctx {
  onnx_node *n;
  reduce_kind kind;
  loom_te_tensor *x, *y;
  bool is_reduced[ONNX_MAX_RANK];
  bool is_kept; /* keepdims */
  int rank;     /* the input's */
  int64_t count;
} reduce_ctx;

static loom_expr *reduce_body(loom_te *te, void *user, loom_expr *const *idx) {
  reduce_ctx *c = user;
  loom_expr *xi[ONNX_MAX_RANK];
  loom_var *axes[ONNX_MAX_RANK];
  int n_axes = 0, k = 0;
  for (int i = 0; i < c->rank; i++) {
    if (c->is_reduced[i]) {
      char name[8];
      snprintf(name, sizeof name, "k%d", i);
      axes[n_axes] = loom_te_reduce_axis(te, loom_te_dim(c->x, i), name);
      xi[i] = loom_te_ref(te, axes[n_axes++]);
      k += c->is_kept;
    } else {
      xi[i] = idx[k++];
    }
  }
  loom_expr *x = loom_te_at(te, c->x, xi, c->rank);
  switch (c->kind) {
  case R_MAX: return loom_te_reduce(te, LOOM_TE_MAX, x, axes, n_axes, NULL);
  case R_MIN: return loom_te_reduce(te, LOOM_TE_MIN, x, axes, n_axes, NULL);
  case R_PROD: return loom_te_reduce(te, LOOM_TE_PROD, x, axes, n_axes, NULL);
  case R_SUM_SQUARE:
  case R_L2: x = loom_te_mul(te, x, x); break;
  case R_L1: x = loom_te_call1(te, LOOM_OP_FABS, x); break;
  case R_LOG_SUM_EXP: x = loom_te_call1(te, LOOM_OP_EXP, x); break;
  default: break;
  }
  return loom_te_sum(te, x, axes, n_axes, NULL);
}

/* What follows the sum: the mean's division, the norm's root, the log. */
static loom_expr *after_body(loom_te *te, void *user, loom_expr *const *idx) {
  reduce_ctx *c = user;
  loom_expr *y = loom_te_at(te, c->y, idx, loom_te_ndim(c->y));
  switch (c->kind) {
  case R_MEAN: return loom_te_div(te, y, loom_te_const(te, y->dtype, (double)c->count));
  case R_L2: return loom_te_call1(te, LOOM_OP_SQRT, y);
  default: return loom_te_call1(te, LOOM_OP_LOG, y);
  }
}

/* The axes to reduce, from the attribute or (from opset 18, ReduceSum's
 * from 13) the second input; *is_noop when none are given and
 * noop_with_empty_axes asks for the input itself. */
static loom_status read_axes(onnx_node *n, reduce_ctx *c, bool is_input_axes, bool *is_noop) {
  int64_t axes[ONNX_MAX_RANK];
  int n_axes = 0;
  if (is_input_axes) {
    if (node_attr(n, "axes"))
      return node_error(n, "axes is an input from opset %lld", (long long)n->opset);
    if (node_has(n, 1))
      TRY(node_const_ints(n, 1, "axes", axes, ONNX_MAX_RANK, &n_axes));
  } else {
    if (node_has(n, 1))
      return node_error(n, "takes one input before opset 18");
    n_axes = node_attr_ints(n, "axes", axes, ONNX_MAX_RANK);
    if (n_axes == -2)
      return LOOM_ERROR; /* too many: said */
    if (n_axes < 0)
      n_axes = 0;
  }
  *is_noop = n_axes == 0 && node_attr_int(n, "noop_with_empty_axes", 0);
  for (int i = 0; i < c->rank; i++)
    c->is_reduced[i] = n_axes == 0;
  for (int i = 0; i < n_axes; i++) {
    int ax;
    TRY(node_axis(n, "axes", axes[i], c->rank, &ax));
    c->is_reduced[ax] = true;
  }
  return LOOM_OK;
}

static loom_status reduce(onnx_node *n, reduce_kind kind, bool is_float_only,
                          int input_axes_from, loom_te_tensor **out) {
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  const loom_tensor_info *a = n->in[0];
  if (a->dtype.code == LOOM_DT_BOOL || (is_float_only && !loom_dtype_is_float(a->dtype)))
    return node_error(n, "takes a %s input", is_float_only ? "floating-point" : "numeric");
  reduce_ctx c = {.n = n, .kind = kind, .x = node_arg(n, 0), .rank = a->ndim};
  c.is_kept = node_attr_int(n, "keepdims", 1) != 0;
  bool is_noop = false;
  TRY(read_axes(n, &c, n->opset >= input_axes_from, &is_noop));
  int64_t shape[ONNX_MAX_RANK];
  int out_rank = 0;
  c.count = 1;
  for (int i = 0; i < a->ndim; i++) {
    if (!c.is_reduced[i] || is_noop)
      shape[out_rank++] = a->shape[i];
    else if (c.is_kept)
      shape[out_rank++] = 1;
    if (c.is_reduced[i] && !is_noop)
      c.count *= a->shape[i];
  }
  loom_expr *s[ONNX_MAX_RANK];
  node_shape_exprs(n, shape, out_rank, s);
  if (is_noop) {
    loom_te_tensor *x = c.x;
    return a->ndim ? node_apply(n, "reshape", &x, 1, out, "shape=%s new_shape=%s dtype=%s",
                                node_shape_str(n, a->shape, a->ndim),
                                node_shape_str(n, a->shape, a->ndim),
                                node_dtype_str(n, a->dtype))
                   : node_error(n, "reducing a scalar over no axes is not supported");
  }
  c.y = loom_te_compute(n->te, "reduce", s, out_rank, NULL, reduce_body, &c);
  bool has_after = kind == R_MEAN || kind == R_L2 || kind == R_LOG_SUM || kind == R_LOG_SUM_EXP;
  *out = has_after && c.y ? loom_te_compute(n->te, "compute", s, out_rank, NULL, after_body, &c)
                          : c.y;
  return LOOM_OK;
}

typedef struct flip_ctx {
  loom_te_tensor *x;
  int axis, rank;
  int64_t extent; /* of the axis */
} flip_ctx;

/* x reversed along c->axis. */
static loom_expr *reverse_body(loom_te *te, void *user, loom_expr *const *idx) {
  flip_ctx *c = user;
  loom_expr *xi[ONNX_MAX_RANK];
  memcpy(xi, idx, sizeof *xi * (size_t)c->rank);
  xi[c->axis] = loom_te_sub(te, loom_te_int(te, c->extent - 1), idx[c->axis]);
  return loom_te_at(te, c->x, xi, c->rank);
}

/* An index along the axis counted from its other end. */
static loom_expr *count_back_body(loom_te *te, void *user, loom_expr *const *idx) {
  flip_ctx *c = user;
  loom_expr *v = loom_te_at(te, c->x, idx, c->rank);
  return loom_te_sub(te, loom_te_const(te, v->dtype, (double)(c->extent - 1)), v);
}

/* ArgMax and ArgMin: the library's over one axis (the first index of the
 * extreme value), its int32 index made ONNX's int64; with
 * select_last_index, the library's over the input reversed along the
 * axis, the index counted back from the end. */
static loom_status arg_reduce(onnx_node *n, const char *lib, loom_te_tensor **out) {
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  const loom_tensor_info *a = n->in[0];
  if (a->ndim < 1 || a->dtype.code == LOOM_DT_BOOL)
    return node_error(n, "takes a numeric input of rank 1 or more");
  int ax;
  TRY(node_axis(n, "axis", node_attr_int(n, "axis", 0), a->ndim, &ax));
  bool is_last = node_attr_int(n, "select_last_index", 0) != 0;
  loom_te_tensor *x = node_arg(n, 0), *y;
  flip_ctx c = {x, ax, a->ndim, a->shape[ax]};
  loom_expr *s[ONNX_MAX_RANK];
  if (is_last) {
    node_shape_exprs(n, a->shape, a->ndim, s);
    if (!(x = loom_te_compute(n->te, "reversed", s, a->ndim, NULL, reverse_body, &c)))
      return LOOM_NOMEM;
  }
  TRY(node_apply(n, lib, &x, 1, &y, "shape=%s axis=%d keepdims=%d dtype=%s",
                 node_shape_str(n, a->shape, a->ndim), ax,
                 node_attr_int(n, "keepdims", 1) != 0, node_dtype_str(n, a->dtype)));
  if (is_last) {
    c = (flip_ctx){y, ax, loom_te_ndim(y), a->shape[ax]};
    for (int i = 0; i < c.rank; i++)
      s[i] = loom_te_dim(y, i);
    if (!(y = loom_te_compute(n->te, "compute", s, c.rank, NULL, count_back_body, &c)))
      return LOOM_NOMEM;
  }
  return node_cast(n, y, LOOM_INT64, out);
}

loom_status onnx_arg_max(onnx_node *n, loom_te_tensor **out) {
  return arg_reduce(n, "argmax", out);
}
loom_status onnx_arg_min(onnx_node *n, loom_te_tensor **out) {
  return arg_reduce(n, "argmin", out);
}

loom_status onnx_reduce_sum(onnx_node *n, loom_te_tensor **out) {
  return reduce(n, R_SUM, false, 13, out);
}
loom_status onnx_reduce_mean(onnx_node *n, loom_te_tensor **out) {
  return reduce(n, R_MEAN, true, 18, out);
}
loom_status onnx_reduce_max(onnx_node *n, loom_te_tensor **out) {
  return reduce(n, R_MAX, false, 18, out);
}
loom_status onnx_reduce_min(onnx_node *n, loom_te_tensor **out) {
  return reduce(n, R_MIN, false, 18, out);
}
loom_status onnx_reduce_prod(onnx_node *n, loom_te_tensor **out) {
  return reduce(n, R_PROD, false, 18, out);
}
loom_status onnx_reduce_sum_square(onnx_node *n, loom_te_tensor **out) {
  return reduce(n, R_SUM_SQUARE, false, 18, out);
}
loom_status onnx_reduce_l1(onnx_node *n, loom_te_tensor **out) {
  return reduce(n, R_L1, true, 18, out);
}
loom_status onnx_reduce_l2(onnx_node *n, loom_te_tensor **out) {
  return reduce(n, R_L2, true, 18, out);
}
loom_status onnx_reduce_log_sum(onnx_node *n, loom_te_tensor **out) {
  return reduce(n, R_LOG_SUM, true, 18, out);
}
loom_status onnx_reduce_log_sum_exp(onnx_node *n, loom_te_tensor **out) {
  return reduce(n, R_LOG_SUM_EXP, true, 18, out);
}
