/* Network operators on NCHW tensors, or NHWC ones where the importer
 * stores them channels-last (n->is_nhwc; their checks and messages speak
 * of the model's NCHW): Conv (the library's conv2d or depthwise_conv2d, a
 * bias stage after it), the pools (the library's where its square,
 * symmetric NCHW form fits, TE otherwise), BatchNormalization in its
 * inference form, and Softmax. */
#include "onnx_impl.h"

#include <stdio.h>
#include <string.h>

/* A 2-D window over the spatial dimensions, in H, W order. */
typedef struct window {
  int64_t in[2], k[2], stride[2], dilation[2], lo[2], hi[2], out[2];
} window;

static loom_status ints_attr(onnx_node *n, const char *name, int64_t *out,
                             int want, int64_t dflt) {
  int64_t v[4];
  int got = node_attr_ints(n, name, v, 4);
  if (got == -2)
    return LOOM_ERROR;
  if (got < 0) {
    for (int i = 0; i < want; i++)
      out[i] = dflt;
    return LOOM_OK;
  }
  if (got != want)
    return node_error(n, "%s has %d values; a 2-D window takes %d", name, got,
                      want);
  memcpy(out, v, sizeof *v * (size_t)want);
  return LOOM_OK;
}

/* Reads strides, dilations, pads and auto_pad against the input x (NCHW)
 * and the kernel extents; computes the result's extents. */
static loom_status read_window(onnx_node *n, const loom_tensor_info *x,
                               window *w) {
  int64_t pads[4];
  TRY(ints_attr(n, "strides", w->stride, 2, 1));
  TRY(ints_attr(n, "dilations", w->dilation, 2, 1));
  TRY(ints_attr(n, "pads", pads, 4, 0));
  const char *auto_pad = node_attr_str(n, "auto_pad", "NOTSET");
  if (node_attr_int(n, "ceil_mode", 0) != 0)
    return node_error(n, "ceil_mode=%lld is not supported (only 0)",
                      (long long)node_attr_int(n, "ceil_mode", 0));
  for (int i = 0; i < 2; i++) {
    w->in[i] = x->shape[2 + i];
    if (w->stride[i] < 1 || w->dilation[i] < 1 || w->k[i] < 1 ||
        pads[i] < 0 || pads[i + 2] < 0)
      return node_error(n, "kernel extents, strides and dilations must be "
                        "at least 1 and pads at least 0");
    int64_t ext = (w->k[i] - 1) * w->dilation[i] + 1;
    if (!strcmp(auto_pad, "NOTSET")) {
      w->lo[i] = pads[i];
      w->hi[i] = pads[i + 2];
    } else if (!strcmp(auto_pad, "VALID")) {
      w->lo[i] = w->hi[i] = 0;
    } else if (!strcmp(auto_pad, "SAME_UPPER") ||
               !strcmp(auto_pad, "SAME_LOWER")) {
      int64_t out = (w->in[i] + w->stride[i] - 1) / w->stride[i];
      int64_t total = (out - 1) * w->stride[i] + ext - w->in[i];
      if (total < 0)
        total = 0;
      int64_t small = total / 2;
      bool is_upper = auto_pad[5] == 'U';
      w->lo[i] = is_upper ? small : total - small;
      w->hi[i] = total - w->lo[i];
    } else {
      return node_error(n, "auto_pad=%s is not supported; write NOTSET, "
                        "VALID, SAME_UPPER or SAME_LOWER", auto_pad);
    }
    int64_t span = w->in[i] + w->lo[i] + w->hi[i];
    if (span < ext)
      return node_error(n, "the window (extent %lld) does not fit the padded "
                        "input (%lld) in spatial dimension %d",
                        (long long)ext, (long long)span, i);
    w->out[i] = (span - ext) / w->stride[i] + 1;
  }
  return LOOM_OK;
}

static loom_status need_nchw(onnx_node *n, const loom_tensor_info *x) {
  if (!x || x->ndim != 4)
    return node_error(n, "only 2-D windows over NCHW inputs are supported "
                      "(the input has rank %d)", x ? x->ndim : 0);
  return LOOM_OK;
}

/* Input i as the model has it: a channels-last one (NHWC, or a weight HWIO
 * or HWC1) with its extents put back in NCHW (OIHW) order in shape. */
static loom_tensor_info model_info(const onnx_node *n, int i, int64_t *shape) {
  static const int64_t data[4] = {0, 3, 1, 2}, hwio[4] = {3, 2, 0, 1},
                       hwc1[4] = {2, 3, 0, 1};
  loom_tensor_info t = *n->in[i];
  if (!n->is_nhwc || t.ndim != 4)
    return t;
  bool is_depthwise = i == 1 && node_attr_int(n, "group", 1) > 1;
  const int64_t *from = i == 0 ? data : is_depthwise ? hwc1 : hwio;
  for (int a = 0; a < 4; a++)
    shape[a] = t.shape[from[a]];
  t.shape = shape;
  return t;
}

/* The axis of the channels, and of the first spatial dimension. */
static int channel_axis(const onnx_node *n, int rank) {
  return n->is_nhwc ? rank - 1 : 1;
}
static int spatial_axis(const onnx_node *n) { return n->is_nhwc ? 1 : 2; }

/* ---- Conv ------------------------------------------------------------------------ */

typedef struct nn_ctx {
  onnx_node *n;
  loom_te_tensor *x, *y, *p[4];
  window w;
  loom_var *r[2];
  bool is_max, count_pad;
  double eps;
  int axis; /* of the channels */
  int sp;   /* of the first spatial dimension */
} nn_ctx;

static loom_expr *bias_body(loom_te *te, void *user, loom_expr *const *idx) {
  nn_ctx *c = user;
  return loom_te_add(te, loom_te_at(te, c->y, idx, 4),
                     loom_te_cast(te, loom_te_dtype(c->y),
                                  loom_te_at(te, c->p[0], &idx[c->axis], 1)));
}

loom_status onnx_conv(onnx_node *n, loom_te_tensor **out) {
  int64_t xs[4], ws[4];
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  loom_tensor_info xi = model_info(n, 0, xs), wi;
  const loom_tensor_info *x = &xi, *wt = NULL;
  if (node_has(n, 1)) {
    wi = model_info(n, 1, ws);
    wt = &wi;
  }
  TRY(need_nchw(n, x));
  if (!wt || wt->ndim != 4)
    return node_error(n, "the weight must be an OIHW tensor of rank 4");
  if (!loom_dtype_eq(x->dtype, wt->dtype) || !loom_dtype_is_float(x->dtype))
    return node_error(n, "X and W must have the same floating-point type");
  window w;
  TRY(ints_attr(n, "kernel_shape", w.k, 2, 0));
  if (!node_attr(n, "kernel_shape"))
    memcpy(w.k, &wt->shape[2], sizeof w.k);
  if (w.k[0] != wt->shape[2] || w.k[1] != wt->shape[3])
    return node_error(n, "kernel_shape differs from the weight's extents");
  TRY(read_window(n, x, &w));
  int64_t C = x->shape[1], K = wt->shape[0], g = node_attr_int(n, "group", 1);
  if (g < 1 || C % g || K % g || wt->shape[1] != C / g)
    return node_error(n, "group=%lld does not fit %lld input channels, %lld "
                      "output channels and a weight of %lld input channels",
                      (long long)g, (long long)C, (long long)K,
                      (long long)wt->shape[1]);
  bool is_depthwise = g > 1 && g == C && K == C;
  loom_te_tensor *in[2] = {node_arg(n, 0), node_arg(n, 1)}, *y;
  loom_dtype acc = node_acc_dtype(n, x->dtype);
  TRY(node_apply(n, is_depthwise ? "depthwise_conv2d" : "conv2d", in, 2, &y,
                 "N=%lld C=%lld H=%lld W=%lld K=%lld R=%lld,%lld "
                 "stride=%lld,%lld pad=%lld,%lld,%lld,%lld "
                 "dilation=%lld,%lld groups=%lld layout=%s dtype=%s out_dtype=%s",
                 (long long)x->shape[0], (long long)C, (long long)w.in[0],
                 (long long)w.in[1], (long long)K, (long long)w.k[0],
                 (long long)w.k[1], (long long)w.stride[0],
                 (long long)w.stride[1], (long long)w.lo[0],
                 (long long)w.lo[1], (long long)w.hi[0], (long long)w.hi[1],
                 (long long)w.dilation[0], (long long)w.dilation[1],
                 (long long)(is_depthwise ? 1 : g), n->is_nhwc ? "NHWC" : "NCHW",
                 node_dtype_str(n, x->dtype), node_dtype_str(n, acc)));
  if (!node_has(n, 2))
    return node_cast(n, y, x->dtype, out);
  const loom_tensor_info *b = n->in[2];
  if (b->ndim != 1 || b->shape[0] != K || !loom_dtype_eq(b->dtype, x->dtype))
    return node_error(n, "the bias must be a vector of the %lld output "
                      "channels", (long long)K);
  nn_ctx c = {0};
  c.y = y;
  c.p[0] = node_arg(n, 2);
  c.axis = channel_axis(n, 4);
  loom_expr *shape[4];
  for (int i = 0; i < 4; i++)
    shape[i] = loom_te_dim(y, i);
  y = loom_te_compute(n->te, "T_add", shape, 4, NULL, bias_body, &c);
  return y ? node_cast(n, y, x->dtype, out) : LOOM_NOMEM;
}

/* ---- pools ---------------------------------------------------------------------- */

static loom_expr *pad_body(loom_te *te, void *user, loom_expr *const *idx) {
  nn_ctx *c = user;
  loom_expr *xi[4] = {idx[0], idx[1], idx[2], idx[3]}, *cond = NULL;
  for (int i = 0; i < 2; i++) {
    loom_expr *lo = loom_te_int(te, c->w.lo[i]), *at = idx[c->sp + i];
    xi[c->sp + i] = loom_te_sub(te, at, lo);
    if (!c->w.lo[i] && !c->w.hi[i])
      continue;
    loom_expr *in = loom_te_bin(
        te, LOOM_EXPR_AND, loom_te_bin(te, LOOM_EXPR_LE, lo, at),
        loom_te_bin(te, LOOM_EXPR_LT, at,
                    loom_te_int(te, c->w.in[i] + c->w.lo[i])));
    cond = cond ? loom_te_bin(te, LOOM_EXPR_AND, cond, in) : in;
  }
  loom_dtype t = loom_te_dtype(c->x);
  loom_expr *fill = c->is_max ? loom_te_min_value(te, t)
                              : loom_te_const(te, t, 0);
  return loom_te_if_then_else(te, cond, loom_te_at(te, c->x, xi, 4), fill);
}

static loom_expr *pool_body(loom_te *te, void *user, loom_expr *const *idx) {
  nn_ctx *c = user;
  loom_expr *xi[4] = {idx[0], idx[1], idx[2], idx[3]};
  for (int i = 0; i < 2; i++)
    xi[c->sp + i] = loom_te_add(
        te, loom_te_mul(te, idx[c->sp + i], loom_te_int(te, c->w.stride[i])),
        loom_te_mul(te, loom_te_ref(te, c->r[i]),
                    loom_te_int(te, c->w.dilation[i])));
  return loom_te_reduce(te, c->is_max ? LOOM_TE_MAX : LOOM_TE_SUM,
                        loom_te_at(te, c->y, xi, 4), c->r, 2, NULL);
}

/* The number of input points (not padding) under the window at out. */
static loom_expr *window_count(loom_te *te, const window *w, int i,
                               loom_expr *out) {
  loom_expr *start = loom_te_sub(
      te, loom_te_mul(te, out, loom_te_int(te, w->stride[i])),
      loom_te_int(te, w->lo[i]));
  loom_expr *end = loom_te_add(te, start, loom_te_int(te, w->k[i]));
  loom_expr *hi = loom_te_bin(te, LOOM_EXPR_MIN, end, loom_te_int(te, w->in[i]));
  loom_expr *lo = loom_te_bin(te, LOOM_EXPR_MAX, start, loom_te_int(te, 0));
  return loom_te_sub(te, hi, lo);
}

static loom_expr *avg_body(loom_te *te, void *user, loom_expr *const *idx) {
  nn_ctx *c = user;
  loom_dtype t = loom_te_dtype(c->y);
  loom_expr *count;
  if (c->count_pad)
    count = loom_te_const(te, t, (double)(c->w.k[0] * c->w.k[1]));
  else
    count = loom_te_cast(te, t,
                         loom_te_mul(te, window_count(te, &c->w, 0, idx[c->sp]),
                                     window_count(te, &c->w, 1, idx[c->sp + 1])));
  return loom_te_div(te, loom_te_at(te, c->y, idx, 4), count);
}

/* The library's pools take a square input and window with one stride and
 * one padding on every side, and count the padding in an average. */
static bool fits_library(const window *w, const loom_tensor_info *x,
                         bool is_max, bool count_pad) {
  bool is_padded = w->lo[0] || w->lo[1] || w->hi[0] || w->hi[1];
  return x->shape[2] == x->shape[3] && w->k[0] == w->k[1] &&
         w->stride[0] == w->stride[1] && w->dilation[0] == 1 &&
         w->dilation[1] == 1 && w->lo[0] == w->lo[1] && w->lo[0] == w->hi[0] &&
         w->lo[0] == w->hi[1] && w->lo[0] < w->k[0] &&
         (is_max || count_pad || !is_padded);
}

static loom_status pool(onnx_node *n, loom_te_tensor **out, bool is_max) {
  int64_t xs[4];
  if (!node_has(n, 0))
    return node_error(n, "takes an input");
  loom_tensor_info xi = model_info(n, 0, xs);
  const loom_tensor_info *x = &xi;
  TRY(need_nchw(n, x));
  if (!node_attr(n, "kernel_shape"))
    return node_error(n, "attribute kernel_shape is required");
  nn_ctx c = {0};
  c.is_max = is_max;
  c.count_pad = node_attr_int(n, "count_include_pad", 0) != 0;
  TRY(ints_attr(n, "kernel_shape", c.w.k, 2, 1));
  TRY(read_window(n, x, &c.w));
  if (!is_max && !loom_dtype_is_float(x->dtype))
    return node_error(n, "takes a floating-point input");
  loom_te_tensor *in = node_arg(n, 0);
  c.sp = spatial_axis(n);
  if (!n->is_nhwc && fits_library(&c.w, x, is_max, c.count_pad))
    return node_apply(n, is_max ? "max_pool2d" : "avg_pool2d", &in, 1, out,
                      "shape=%s kernel=%lld stride=%lld pad=%lld dtype=%s",
                      node_shape_str(n, x->shape, 4), (long long)c.w.k[0],
                      (long long)c.w.stride[0], (long long)c.w.lo[0],
                      node_dtype_str(n, x->dtype));
  c.x = in;
  loom_expr *ps[4];
  ps[0] = loom_te_int(n->te, x->shape[0]);
  ps[channel_axis(n, 4)] = loom_te_int(n->te, x->shape[1]);
  for (int i = 0; i < 2; i++)
    ps[c.sp + i] = loom_te_int(n->te, c.w.in[i] + c.w.lo[i] + c.w.hi[i]);
  bool is_padded = c.w.lo[0] || c.w.lo[1] || c.w.hi[0] || c.w.hi[1];
  c.y = is_padded ? loom_te_compute(n->te, "pad_temp", ps, 4, NULL, pad_body, &c)
                  : in;
  c.r[0] = loom_te_reduce_axis(n->te, loom_te_int(n->te, c.w.k[0]), "rv0");
  c.r[1] = loom_te_reduce_axis(n->te, loom_te_int(n->te, c.w.k[1]), "rv1");
  loom_expr *shape[4] = {ps[0], ps[1], ps[2], ps[3]};
  for (int i = 0; i < 2; i++)
    shape[c.sp + i] = loom_te_int(n->te, c.w.out[i]);
  c.y = loom_te_compute(n->te, is_max ? "pool_max" : "pool_sum", shape, 4,
                        NULL, pool_body, &c);
  if (!is_max)
    c.y = loom_te_compute(n->te, "pool_avg", shape, 4, NULL, avg_body, &c);
  *out = c.y;
  return LOOM_OK;
}

loom_status onnx_max_pool(onnx_node *n, loom_te_tensor **out) {
  return pool(n, out, true);
}
loom_status onnx_average_pool(onnx_node *n, loom_te_tensor **out) {
  return pool(n, out, false);
}

/* The mean over every spatial dimension, kept as extents of 1. */
static loom_expr *global_body(loom_te *te, void *user, loom_expr *const *idx) {
  nn_ctx *c = user;
  loom_expr *xi[ONNX_MAX_RANK];
  int rank = loom_te_ndim(c->x);
  loom_var *axes[ONNX_MAX_RANK];
  xi[0] = idx[0];
  xi[c->axis] = idx[c->axis];
  for (int i = 0; i < rank - 2; i++) {
    char name[8];
    snprintf(name, sizeof name, "rv%d", i);
    axes[i] = loom_te_reduce_axis(te, loom_te_dim(c->x, c->sp + i), name);
    xi[c->sp + i] = loom_te_ref(te, axes[i]);
  }
  return loom_te_sum(te, loom_te_at(te, c->x, xi, rank), axes, rank - 2, NULL);
}

static loom_expr *mean_body(loom_te *te, void *user, loom_expr *const *idx) {
  nn_ctx *c = user;
  int rank = loom_te_ndim(c->y);
  int64_t count = 1;
  for (int i = 0; i < rank - 2; i++) {
    int64_t e;
    loom_ir_is_const_int(loom_te_dim(c->x, c->sp + i), &e);
    count *= e;
  }
  return loom_te_div(te, loom_te_at(te, c->y, idx, rank),
                     loom_te_const(te, loom_te_dtype(c->y), (double)count));
}

loom_status onnx_global_average_pool(onnx_node *n, loom_te_tensor **out) {
  const loom_tensor_info *x = n->in[0];
  if (!x || x->ndim < 3 || !loom_dtype_is_float(x->dtype))
    return node_error(n, "takes a floating-point input of rank 3 or more");
  nn_ctx c = {0};
  c.x = node_arg(n, 0);
  c.axis = channel_axis(n, x->ndim);
  c.sp = spatial_axis(n);
  if (!n->is_nhwc && x->ndim == 4 && x->shape[2] == x->shape[3])
    return node_apply(n, "global_avg_pool2d", &c.x, 1, out, "shape=%s dtype=%s",
                      node_shape_str(n, x->shape, 4),
                      node_dtype_str(n, x->dtype));
  int64_t shape[ONNX_MAX_RANK];
  for (int i = 0; i < x->ndim; i++)
    shape[i] = i == 0 || i == c.axis ? x->shape[i] : 1;
  loom_expr *s[ONNX_MAX_RANK];
  node_shape_exprs(n, shape, x->ndim, s);
  c.y = loom_te_compute(n->te, "adaptive_pool_sum", s, x->ndim, NULL,
                        global_body, &c);
  *out = loom_te_compute(n->te, "adaptive_pool_avg", s, x->ndim, NULL,
                         mean_body, &c);
  return LOOM_OK;
}

/* ---- BatchNormalization -----------------------------------------------------
 * The inference form: (x - mean) / sqrt(var + epsilon) * scale + B, per
 * channel (axis 1), in the order ONNX's reference computes it. */

static loom_expr *bn_body(loom_te *te, void *user, loom_expr *const *idx) {
  nn_ctx *c = user;
  loom_expr *ch = idx[c->axis];
  loom_dtype t = loom_te_dtype(c->x);
  loom_expr *x = loom_te_at(te, c->x, idx, loom_te_ndim(c->x));
  loom_expr *scale = loom_te_at(te, c->p[0], &ch, 1);
  loom_expr *bias = loom_te_at(te, c->p[1], &ch, 1);
  loom_expr *mean = loom_te_at(te, c->p[2], &ch, 1);
  loom_expr *var = loom_te_at(te, c->p[3], &ch, 1);
  loom_expr *den = loom_te_call1(
      te, LOOM_OP_SQRT, loom_te_add(te, var, loom_te_const(te, t, c->eps)));
  loom_expr *v = loom_te_div(te, loom_te_sub(te, x, mean), den);
  return loom_te_add(te, loom_te_mul(te, v, scale), bias);
}

loom_status onnx_batch_norm(onnx_node *n, loom_te_tensor **out) {
  const loom_tensor_info *x = n->in[0];
  if (n->n_in != 5)
    return node_error(n, "takes five inputs: X, scale, B, mean, var");
  if (node_attr_int(n, "training_mode", 0) != 0)
    return node_error(n, "training_mode=%lld is not supported (only 0)",
                      (long long)node_attr_int(n, "training_mode", 0));
  if (!x || x->ndim < 2 || !loom_dtype_is_float(x->dtype))
    return node_error(n, "takes a floating-point input of rank 2 or more");
  nn_ctx c = {0};
  c.eps = node_attr_float(n, "epsilon", 1e-5);
  c.x = node_arg(n, 0);
  c.axis = channel_axis(n, x->ndim);
  for (int i = 1; i < 5; i++) {
    const loom_tensor_info *p = n->in[i];
    int64_t channels = x->shape[c.axis];
    if (!p || p->ndim != 1 || p->shape[0] != channels ||
        !loom_dtype_eq(p->dtype, x->dtype))
      return node_error(n, "input %d must be a vector of the %lld channels, "
                        "of the input's type", i, (long long)channels);
    c.p[i - 1] = node_arg(n, i);
  }
  loom_expr *s[ONNX_MAX_RANK];
  node_shape_exprs(n, x->shape, x->ndim, s);
  *out = loom_te_compute(n->te, "T_batch_norm", s, x->ndim, NULL, bn_body, &c);
  return LOOM_OK;
}

/* ---- Softmax -----------------------------------------------------------------
 * Over one axis (opset 13's form). Before opset 13 the axis splits the
 * input into rows of everything after it, the same thing only when the
 * axis is the last. */
/* Softmax and LogSoftmax: the library's, over one axis (before opset 13
 * ONNX flattens the axes from axis on; only the last is taken then). */
static loom_status softmax(onnx_node *n, const char *lib, loom_te_tensor **out) {
  const loom_tensor_info *x = n->in[0];
  if (!x || !loom_dtype_is_float(x->dtype))
    return node_error(n, "takes a floating-point input");
  int64_t axis = node_attr_int(n, "axis", n->opset < 13 ? 1 : -1);
  int ax;
  TRY(node_axis(n, "axis", axis, x->ndim, &ax));
  if (n->opset < 13 && ax != x->ndim - 1)
    return node_error(n, "axis=%lld is not supported before opset 13 (only "
                      "the last axis)", (long long)axis);
  if (x->ndim < 2)
    return node_error(n, "an input of rank %d is not supported (rank 2 or "
                      "more)", x->ndim);
  loom_te_tensor *in = node_arg(n, 0);
  return node_apply(n, lib, &in, 1, out, "shape=%s axis=%d dtype=%s",
                    node_shape_str(n, x->shape, x->ndim), ax,
                    node_dtype_str(n, x->dtype));
}

loom_status onnx_softmax(onnx_node *n, loom_te_tensor **out) {
  return softmax(n, "softmax", out);
}
loom_status onnx_log_softmax(onnx_node *n, loom_te_tensor **out) {
  return softmax(n, "log_softmax", out);
}
