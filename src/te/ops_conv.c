/* Convolutions and pooling in topi's formulation: a padding stage, then one
 * reduction (and for average pooling a division). */
#include "ops.h"

#include <string.h>

typedef struct conv_ctx {
  loom_te_tensor *x, *w;
  loom_var *r[4]; /* channel, then one per spatial dim */
  int nsp;        /* spatial dims: 1, 2 or 3 */
  bool is_nhwc, is_depthwise, is_transpose;
  int64_t stride, dilation, groups, cin, cout, k;
} conv_ctx;

/* Spatial input index: out * stride + r * dilation, the term with the
 * larger coefficient first, as TVM's canonical simplifier orders them. */
static loom_expr *spatial(loom_te *te, conv_ctx *c, loom_expr *o, int i) {
  loom_expr *x = loom_te_mul(te, o, ops_int(te, c->stride));
  loom_expr *y = loom_te_mul(te, loom_te_ref(te, c->r[i + 1]),
                             ops_int(te, c->dilation));
  return c->dilation > c->stride ? loom_te_add(te, y, x)
                                 : loom_te_add(te, x, y);
}

static loom_expr *conv_body(loom_te *te, void *user, loom_expr *const *idx) {
  conv_ctx *c = user;
  int n = c->nsp + 2;
  loom_expr *xi[5], *wi[5];
  /* Output and input axes: N C spatial... (NCHW) or N spatial... C (NHWC). */
  int ch = c->is_nhwc ? n - 1 : 1, sp0 = c->is_nhwc ? 1 : 2;
  loom_expr *oc = idx[ch];
  loom_expr *rc = c->is_depthwise ? oc : loom_te_ref(te, c->r[0]);
  if (c->groups > 1)
    rc = loom_te_add(te, loom_te_mul(te, loom_te_bin(te, LOOM_EXPR_FLOORDIV, oc,
                                                   ops_int(te, c->cout / c->groups)),
                                     ops_int(te, c->cin / c->groups)),
                     rc);
  xi[0] = idx[0];
  xi[ch] = rc;
  for (int i = 0; i < c->nsp; i++)
    xi[sp0 + i] = c->is_transpose
                      ? loom_te_add(te, idx[sp0 + i], loom_te_ref(te, c->r[i + 1]))
                      : spatial(te, c, idx[sp0 + i], i);
  if (c->is_depthwise) {
    /* HWC1 (NHWC) or C1HW (NCHW) */
    int hw0 = c->is_nhwc ? 0 : 2;
    for (int i = 0; i < c->nsp; i++)
      wi[hw0 + i] = loom_te_ref(te, c->r[i + 1]);
    wi[c->is_nhwc ? c->nsp : 0] = oc;
    wi[c->is_nhwc ? c->nsp + 1 : 1] = ops_int(te, 0);
  } else if (c->is_nhwc) {
    /* HWIO */
    for (int i = 0; i < c->nsp; i++)
      wi[i] = loom_te_ref(te, c->r[i + 1]);
    wi[c->nsp] = loom_te_ref(te, c->r[0]);
    wi[c->nsp + 1] = oc;
  } else {
    /* OIHW */
    wi[0] = oc;
    wi[1] = loom_te_ref(te, c->r[0]);
    for (int i = 0; i < c->nsp; i++)
      wi[2 + i] = loom_te_ref(te, c->r[i + 1]);
  }
  loom_expr *p = loom_te_mul(te, loom_te_at(te, c->x, xi, n),
                             loom_te_at(te, c->w, wi, n));
  loom_var *axes[4];
  int na = 0;
  if (c->is_nhwc) {
    for (int i = 0; i < c->nsp; i++)
      axes[na++] = c->r[i + 1];
    if (!c->is_depthwise)
      axes[na++] = c->r[0];
  } else {
    if (!c->is_depthwise)
      axes[na++] = c->r[0];
    for (int i = 0; i < c->nsp; i++)
      axes[na++] = c->r[i + 1];
  }
  return loom_te_sum(te, p, axes, na, NULL);
}

typedef struct dil_ctx {
  loom_te_tensor *x;
  int64_t stride, k;
} dil_ctx;

/* topi's dilate: the input spread out by the stride, zeros between. */
static loom_expr *dilate_body(loom_te *te, void *user, loom_expr *const *idx) {
  dil_ctx *c = user;
  loom_expr *xi[4] = {idx[0], idx[1], NULL, NULL}, *cond = NULL;
  for (int i = 2; i < 4; i++) {
    xi[i] = loom_te_bin(te, LOOM_EXPR_FLOORDIV, idx[i], ops_int(te, c->stride));
    if (c->stride == 1)
      continue;
    loom_expr *on = loom_te_bin(
        te, LOOM_EXPR_EQ,
        loom_te_bin(te, LOOM_EXPR_FLOORMOD, idx[i], ops_int(te, c->stride)),
        ops_int(te, 0));
    cond = cond ? loom_te_bin(te, LOOM_EXPR_AND, cond, on) : on;
  }
  loom_expr *v = loom_te_at(te, c->x, xi, 4);
  return cond ? loom_te_if_then_else(te, cond, v,
                                     loom_te_const(te, loom_te_dtype(c->x), 0))
              : v;
}

/* The IOHW weight as OIHW with the kernel flipped. */
static loom_expr *flip_body(loom_te *te, void *user, loom_expr *const *idx) {
  dil_ctx *c = user;
  loom_expr *wi[4] = {idx[1], idx[0],
                      loom_te_sub(te, ops_int(te, c->k - 1), idx[2]),
                      loom_te_sub(te, ops_int(te, c->k - 1), idx[3])};
  return loom_te_at(te, c->x, wi, 4);
}

static loom_status conv_keys(const loom_te_args *args, int64_t *v,
                             const char *const *keys, int n, loom_diag *d) {
  for (int i = 0; i < n; i++) {
    TRY(loom_te_args_int(args, keys[i], &v[i], d));
    int64_t least = !strcmp(keys[i], "pad") ? 0 : 1;
    if (v[i] < least)
      return loom_diag_error(d, (loom_loc){0}, "%s: %s=%lld must be at least %lld",
                             args->op->name, keys[i], (long long)v[i],
                             (long long)least);
  }
  return LOOM_OK;
}

static loom_status build_conv(loom_te *te, const loom_te_args *args, int nsp,
                              bool is_depthwise, bool is_transpose,
                              loom_func **out, loom_diag *d) {
  static const char *const keys[] = {"N", "C", "H", "K", "R", "stride", "pad",
                                     "dilation", "groups"};
  int64_t v[9];
  const char *layout = "NCHW";
  loom_dtype t;
  TRY(conv_keys(args, v, keys, 9, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  TRY(loom_te_args_str(args, "layout", &layout, d));
  conv_ctx c = {0};
  c.nsp = nsp;
  c.is_nhwc = layout[0] == 'N' && layout[1] != 'C';
  if (strlen(layout) != (size_t)nsp + 2 || layout[0] != 'N' ||
      (is_transpose && c.is_nhwc))
    return loom_diag_error(d, (loom_loc){0}, "%s: layout=%s is not supported; "
                           "write %s", args->op->name, layout,
                           nsp == 1 ? "NCW or NWC" : nsp == 2 ? "NCHW or NHWC"
                                                              : "NCDHW or NDHWC");
  int64_t N = v[0], C = v[1], H = v[2], K = v[3], R = v[4];
  c.stride = v[5];
  c.dilation = v[7];
  c.groups = v[8];
  c.k = R;
  c.cin = C;
  c.cout = is_depthwise ? C : K;
  c.is_depthwise = is_depthwise;
  c.is_transpose = is_transpose;
  int64_t pad = v[6];
  if (C % c.groups || c.cout % c.groups)
    return loom_diag_error(d, (loom_loc){0},
                           "%s: groups=%lld must divide C=%lld and K=%lld",
                           args->op->name, (long long)c.groups, (long long)C,
                           (long long)K);
  int64_t ext = (R - 1) * c.dilation + 1;
  int64_t o = is_transpose ? (H - 1) * c.stride - 2 * pad + R
                           : (H + 2 * pad - ext) / c.stride + 1;
  if ((!is_transpose && H + 2 * pad < ext) || o < 1 ||
      (is_transpose && (pad > R - 1 || c.dilation != 1 || c.groups != 1)))
    return loom_diag_error(d, (loom_loc){0},
                           "%s: the window (R=%lld, dilation=%lld, pad=%lld) "
                           "does not fit the input (H=%lld)",
                           args->op->name, (long long)R, (long long)c.dilation,
                           (long long)pad, (long long)H);
  int n = nsp + 2, ch = c.is_nhwc ? n - 1 : 1, sp0 = c.is_nhwc ? 1 : 2;
  int64_t xs[5], ws[5];
  xs[0] = N;
  xs[ch] = C;
  for (int i = 0; i < nsp; i++)
    xs[sp0 + i] = H;
  if (is_depthwise) {
    int hw0 = c.is_nhwc ? 0 : 2;
    for (int i = 0; i < nsp; i++)
      ws[hw0 + i] = R;
    ws[c.is_nhwc ? nsp : 0] = C;
    ws[c.is_nhwc ? nsp + 1 : 1] = 1;
  } else if (is_transpose) {
    ws[0] = C;
    ws[1] = K;
    for (int i = 0; i < nsp; i++)
      ws[2 + i] = R;
  } else if (c.is_nhwc) {
    for (int i = 0; i < nsp; i++)
      ws[i] = R;
    ws[nsp] = C / c.groups;
    ws[nsp + 1] = K;
  } else {
    ws[0] = K;
    ws[1] = C / c.groups;
    for (int i = 0; i < nsp; i++)
      ws[2 + i] = R;
  }
  loom_te_tensor *x = ops_input(te, "A", xs, n, t);
  loom_te_tensor *w = ops_input(te, "W", ws, n, t);
  c.w = w;
  const char *pname = c.is_nhwc && nsp == 2 ? "PaddedInput" : "pad_temp";
  if (is_transpose) {
    /* As topi builds it: dilate, pad by k - 1 - pad, flip the kernel, then
     * a stride-1 convolution. */
    dil_ctx dc = {x, c.stride, R};
    loom_expr *shape[4] = {ops_int(te, N), ops_int(te, C),
                           ops_int(te, (H - 1) * c.stride + 1),
                           ops_int(te, (H - 1) * c.stride + 1)};
    loom_te_tensor *dil = loom_te_compute(te, "data_dilate", shape, 4, NULL,
                                          dilate_body, &dc);
    int64_t before[4] = {0, 0, R - 1 - pad, R - 1 - pad};
    c.x = ops_pad(te, dil, before, before, loom_te_const(te, t, 0), "data_pad");
    static const char *const kn[] = {"o", "i", "h", "w"};
    loom_expr *kshape[4] = {ops_int(te, K), ops_int(te, C), ops_int(te, R),
                            ops_int(te, R)};
    dc.x = c.w;
    c.w = loom_te_compute(te, "kernel_transform", kshape, 4, kn, flip_body,
                          &dc);
  } else {
    int64_t before[5] = {0}, after[5] = {0};
    for (int i = 0; i < nsp; i++)
      before[sp0 + i] = after[sp0 + i] = pad;
    /* topi pads even when the padding is zero. */
    c.x = ops_pad(te, x, before, after, loom_te_const(te, t, 0), pname);
  }
  static const char *const rn_nchw[] = {"rc", "ry", "rx", "rz"};
  static const char *const rn_dw[] = {"rc", "di", "dj", "dk"};
  static const char *const rn_tr[] = {"dc", "dh", "dw", "dd"};
  const char *const *rn = is_depthwise ? rn_dw : is_transpose ? rn_tr : rn_nchw;
  c.r[0] = loom_te_reduce_axis(te, ops_int(te, C / c.groups), rn[0]);
  for (int i = 0; i < nsp; i++)
    c.r[i + 1] = loom_te_reduce_axis(te, ops_int(te, R), rn[i + 1]);
  loom_expr *shape[5];
  shape[0] = ops_int(te, N);
  shape[ch] = ops_int(te, c.cout);
  for (int i = 0; i < nsp; i++)
    shape[sp0 + i] = ops_int(te, o);
  static const char *const an_nchw[] = {"nn", "ff", "yy", "xx", "zz"};
  static const char *const an_nhwc[] = {"nn", "yy", "xx", "zz", "ff"};
  static const char *const an_dw[] = {"b", "i", "j", "k", "c"};
  static const char *const an_tr[] = {"b", "c", "h", "w"};
  const char *an[5];
  for (int i = 0; i < n; i++)
    an[i] = is_transpose ? an_tr[i]
            : is_depthwise && c.is_nhwc ? (i == n - 1 ? "c" : an_dw[i])
            : c.is_nhwc               ? (i == n - 1 ? "ff" : an_nhwc[i])
                                      : an_nchw[i];
  char name[40];
  if (is_depthwise)
    snprintf(name, sizeof name, "DepthwiseConv2d");
  else if (is_transpose)
    snprintf(name, sizeof name, "compute");
  else if (c.is_nhwc && nsp == 3)
    snprintf(name, sizeof name, "conv3d_ndhwc");
  else if (c.is_nhwc)
    snprintf(name, sizeof name, "Conv%ddOutput", nsp);
  else
    snprintf(name, sizeof name, "conv%dd_%s", nsp,
             nsp == 1 ? "ncw" : nsp == 2 ? "nchw" : "ncdhw");
  loom_te_tensor *y = loom_te_compute(te, name, shape, n, an, conv_body, &c);
  loom_te_tensor *all[3] = {x, w, y};
  return ops_finish(te, all, 3, out, d);
}

loom_status op_conv1d(loom_te *te, const loom_te_args *args, loom_func **out,
                      loom_diag *d) {
  return build_conv(te, args, 1, false, false, out, d);
}
loom_status op_conv2d(loom_te *te, const loom_te_args *args, loom_func **out,
                      loom_diag *d) {
  return build_conv(te, args, 2, false, false, out, d);
}
loom_status op_conv3d(loom_te *te, const loom_te_args *args, loom_func **out,
                      loom_diag *d) {
  return build_conv(te, args, 3, false, false, out, d);
}
loom_status op_depthwise_conv2d(loom_te *te, const loom_te_args *args,
                                loom_func **out, loom_diag *d) {
  return build_conv(te, args, 2, true, false, out, d);
}
loom_status op_conv2d_transpose(loom_te *te, const loom_te_args *args,
                                loom_func **out, loom_diag *d) {
  return build_conv(te, args, 2, false, true, out, d);
}
