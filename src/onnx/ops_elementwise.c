/* Elementwise operators: the binary ones with numpy broadcasting, the
 * unary ones, Identity and Clip. The library's add / relu / ... build them
 * where they can (tensors of rank 1 or more); TE builds the rest. */
#include "onnx_impl.h"

#include <math.h>
#include <string.h>

typedef struct ew_ctx {
  onnx_node *n;
  loom_te_tensor *a, *b;
  loom_expr_kind kind; /* binary */
  const char *what;    /* unary */
  loom_expr *lo, *hi;  /* clip; NULL: unbounded */
  loom_te_tensor *lo_t, *hi_t;
  int rank;
} ew_ctx;

static loom_expr *binary_body(loom_te *te, void *user, loom_expr *const *idx) {
  ew_ctx *c = user;
  loom_expr *x = node_bcast_at(c->n, c->a, idx, c->rank);
  loom_expr *y = node_bcast_at(c->n, c->b, idx, c->rank);
  return loom_te_bin(te, c->kind, x, y);
}

static loom_status binary(onnx_node *n, loom_te_tensor **out, const char *lib,
                          loom_expr_kind kind) {
  const loom_tensor_info *a = n->in[0], *b = n->in[1];
  if (!node_has(n, 0) || !node_has(n, 1))
    return node_error(n, "takes two inputs");
  if (!loom_dtype_eq(a->dtype, b->dtype))
    return node_error(n, "the inputs have different types");
  int64_t shape[ONNX_MAX_RANK];
  int rank;
  TRY(node_bcast_shape(n, a, b, shape, &rank));
  loom_te_tensor *in[2] = {node_arg(n, 0), node_arg(n, 1)};
  if (a->ndim && b->ndim)
    return node_apply(n, lib, in, 2, out, "a_shape=%s b_shape=%s dtype=%s",
                      node_shape_str(n, a->shape, a->ndim),
                      node_shape_str(n, b->shape, b->ndim),
                      node_dtype_str(n, a->dtype));
  ew_ctx c = {.n = n, .a = in[0], .b = in[1], .kind = kind, .rank = rank};
  loom_expr *s[ONNX_MAX_RANK];
  node_shape_exprs(n, shape, rank, s);
  *out = loom_te_compute(n->te, "T_compute", s, rank, NULL, binary_body, &c);
  return LOOM_OK;
}

loom_status onnx_add(onnx_node *n, loom_te_tensor **out) {
  return binary(n, out, "add", LOOM_EXPR_ADD);
}
loom_status onnx_sub(onnx_node *n, loom_te_tensor **out) {
  return binary(n, out, "subtract", LOOM_EXPR_SUB);
}
loom_status onnx_mul(onnx_node *n, loom_te_tensor **out) {
  return binary(n, out, "multiply", LOOM_EXPR_MUL);
}
loom_status onnx_div(onnx_node *n, loom_te_tensor **out) {
  return binary(n, out, "divide", LOOM_EXPR_DIV);
}

/* ---- unary ------------------------------------------------------------------ */

static loom_expr *unary_body(loom_te *te, void *user, loom_expr *const *idx) {
  ew_ctx *c = user;
  loom_expr *x = loom_te_at(te, c->a, idx, c->rank);
  if (!x)
    return NULL;
  loom_dtype t = x->dtype;
  const char *w = c->what;
  if (!strcmp(w, "relu"))
    return loom_te_bin(te, LOOM_EXPR_MAX, x, loom_te_const(te, t, 0));
  if (!strcmp(w, "sigmoid"))
    return loom_te_call1(te, LOOM_OP_SIGMOID, x);
  if (!strcmp(w, "tanh"))
    return loom_te_call1(te, LOOM_OP_TANH, x);
  if (!strcmp(w, "exp"))
    return loom_te_call1(te, LOOM_OP_EXP, x);
  if (!strcmp(w, "sqrt"))
    return loom_te_call1(te, LOOM_OP_SQRT, x);
  if (!strcmp(w, "negative"))
    return loom_te_sub(te, loom_te_const(te, t, 0), x);
  if (!strcmp(w, "abs")) {
    if (loom_dtype_is_float(t))
      return loom_te_call1(te, LOOM_OP_FABS, x);
    if (t.code == LOOM_DT_UINT)
      return x;
    return loom_te_select(te,
                          loom_te_bin(te, LOOM_EXPR_LT, x,
                                      loom_te_const(te, t, 0)),
                          loom_te_sub(te, loom_te_const(te, t, 0), x), x);
  }
  return x; /* identity */
}

/* lib names the library's operator, or is NULL where TE builds it. */
static loom_status unary(onnx_node *n, loom_te_tensor **out, const char *what,
                         const char *lib, bool is_float_only) {
  const loom_tensor_info *a = n->in[0];
  if (!node_has(n, 0))
    return node_error(n, "takes one input");
  if (is_float_only && !loom_dtype_is_float(a->dtype))
    return node_error(n, "takes a floating-point input");
  loom_te_tensor *x = node_arg(n, 0);
  if (lib && a->ndim)
    return node_apply(n, lib, &x, 1, out, "shape=%s dtype=%s",
                      node_shape_str(n, a->shape, a->ndim),
                      node_dtype_str(n, a->dtype));
  ew_ctx c = {0};
  c.n = n;
  c.a = x;
  c.what = what;
  c.rank = a->ndim;
  loom_expr *s[ONNX_MAX_RANK];
  node_shape_exprs(n, a->shape, a->ndim, s);
  *out = loom_te_compute(n->te, "compute", s, a->ndim, NULL, unary_body, &c);
  return LOOM_OK;
}

loom_status onnx_relu(onnx_node *n, loom_te_tensor **out) {
  return unary(n, out, "relu", "relu", false);
}
loom_status onnx_sigmoid(onnx_node *n, loom_te_tensor **out) {
  return unary(n, out, "sigmoid", "sigmoid", true);
}
loom_status onnx_tanh(onnx_node *n, loom_te_tensor **out) {
  return unary(n, out, "tanh", "tanh", true);
}
loom_status onnx_exp(onnx_node *n, loom_te_tensor **out) {
  return unary(n, out, "exp", "exp", true);
}
loom_status onnx_sqrt(onnx_node *n, loom_te_tensor **out) {
  return unary(n, out, "sqrt", NULL, true);
}
loom_status onnx_neg(onnx_node *n, loom_te_tensor **out) {
  return unary(n, out, "negative", NULL, false);
}
loom_status onnx_abs(onnx_node *n, loom_te_tensor **out) {
  return unary(n, out, "abs", NULL, false);
}
loom_status onnx_identity(onnx_node *n, loom_te_tensor **out) {
  return unary(n, out, "identity", NULL, false);
}

/* Dropout at inference is the identity; in training mode (a constant
 * training_mode that is true) it would draw a mask, which Loom does not. */
loom_status onnx_dropout(onnx_node *n, loom_te_tensor **out) {
  if (node_has(n, 2)) {
    int64_t mode[1];
    int count;
    TRY(node_const_ints(n, 2, "training_mode", mode, 1, &count));
    if (count == 1 && mode[0])
      return node_error(n, "training_mode is true; only inference is supported");
  }
  if (node_attr_int(n, "is_test", 1) == 0)
    return node_error(n, "is_test=0 asks for training; only inference is supported");
  return unary(n, out, "identity", NULL, false);
}

/* ---- Cast, CastLike ------------------------------------------------------------
 * The library's cast (T.Cast): a float made an integer is truncated toward
 * zero, one made bool is whether it is nonzero, and float16 and bfloat16
 * round to nearest even, as ONNX's reference casts. saturate concerns only
 * the float8 types, which Loom lacks. */

static loom_status cast_to(onnx_node *n, loom_dtype t, loom_te_tensor **out) {
  if (loom_dtype_eq(n->in[0]->dtype, t))
    return unary(n, out, "identity", NULL, false);
  return node_cast(n, node_arg(n, 0), t, out);
}

loom_status onnx_cast(onnx_node *n, loom_te_tensor **out) {
  if (!node_has(n, 0))
    return node_error(n, "takes one input");
  const Onnx__AttributeProto *to = node_attr(n, "to");
  loom_dtype t;
  if (!to)
    return node_error(n, "needs the attribute to");
  if (!onnx_dtype((int32_t)to->i, &t))
    return node_error(n, "to=%s is a type Loom lacks", onnx_dtype_name((int32_t)to->i));
  return cast_to(n, t, out);
}

loom_status onnx_cast_like(onnx_node *n, loom_te_tensor **out) {
  if (!node_has(n, 0) || !node_has(n, 1))
    return node_error(n, "takes an input and a tensor of the type to cast to");
  return cast_to(n, n->in[1]->dtype, out);
}

/* ---- Clip --------------------------------------------------------------------
 * min(max(x, lo), hi) as numpy's clip: a lo above hi gives hi. A bound
 * known at import is a constant; a bound the graph computes is a scalar
 * argument. */

static loom_expr *clip_body(loom_te *te, void *user, loom_expr *const *idx) {
  ew_ctx *c = user;
  loom_expr *x = loom_te_at(te, c->a, idx, c->rank);
  loom_expr *lo = c->lo_t ? loom_te_at(te, c->lo_t, NULL, 0) : c->lo;
  loom_expr *hi = c->hi_t ? loom_te_at(te, c->hi_t, NULL, 0) : c->hi;
  if (lo)
    x = loom_te_bin(te, LOOM_EXPR_MAX, x, lo);
  if (hi)
    x = loom_te_bin(te, LOOM_EXPR_MIN, x, hi);
  return x;
}

static loom_status clip_bound(onnx_node *n, int i, loom_expr **e,
                              loom_te_tensor **t) {
  if (!node_has(n, i))
    return LOOM_OK;
  const loom_tensor_info *b = n->in[i];
  if (b->ndim != 0 && onnx_numel(b) != 1)
    return node_error(n, "input %d (%s) must be a scalar", i,
                      i == 1 ? "min" : "max");
  if (!loom_dtype_eq(b->dtype, n->in[0]->dtype))
    return node_error(n, "input %d has another type than the input", i);
  if (n->data[i]) {
    *e = loom_te_const(n->te, b->dtype, onnx_tensor_get(n->data[i], 0));
    return LOOM_OK;
  }
  if (b->ndim != 0)
    return node_error(n, "input %d must be a scalar of rank 0", i);
  *t = node_arg(n, i);
  return LOOM_OK;
}

loom_status onnx_clip(onnx_node *n, loom_te_tensor **out) {
  const loom_tensor_info *a = n->in[0];
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  ew_ctx c = {0};
  c.n = n;
  c.a = node_arg(n, 0);
  c.rank = a->ndim;
  if (n->opset < 11) {
    double lo = node_attr_float(n, "min", -INFINITY);
    double hi = node_attr_float(n, "max", INFINITY);
    if (!loom_dtype_is_float(a->dtype))
      return node_error(n, "takes a floating-point input before opset 11");
    c.lo = isinf(lo) ? NULL : loom_te_const(n->te, a->dtype, lo);
    c.hi = isinf(hi) ? NULL : loom_te_const(n->te, a->dtype, hi);
  } else {
    if (node_attr(n, "min") || node_attr(n, "max"))
      return node_error(n, "attributes min and max are inputs from opset 11");
    TRY(clip_bound(n, 1, &c.lo, &c.lo_t));
    TRY(clip_bound(n, 2, &c.hi, &c.hi_t));
  }
  loom_expr *s[ONNX_MAX_RANK];
  node_shape_exprs(n, a->shape, a->ndim, s);
  *out = loom_te_compute(n->te, "compute", s, a->ndim, NULL, clip_body, &c);
  return LOOM_OK;
}
