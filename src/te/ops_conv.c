/* Convolutions and pooling in topi's formulation: a padding stage, then one
 * reduction (and for average pooling a division). */
#include "ops.h"

#include <string.h>

typedef struct conv_ctx {
  loom_te_tensor *x, *w;
  loom_var *r[4]; /* channel, then one per spatial dim */
  int nsp;        /* spatial dims: 1, 2 or 3 */
  bool is_nhwc, is_depthwise, is_transpose;
  int64_t groups, cin, cout;
  loom_dtype out; /* out_dtype: the products are cast to it, as topi's are */
  /* Per spatial dimension, in D, H, W order. */
  int64_t stride[3], dilation[3], k[3];
} conv_ctx;

/* Spatial input index: out * stride + r * dilation, the term with the
 * larger coefficient first, as TVM's canonical simplifier orders them. */
static loom_expr *spatial(loom_te *te, conv_ctx *c, loom_expr *o, int i) {
  loom_expr *x = loom_te_mul(te, o, ops_int(te, c->stride[i]));
  loom_expr *y = loom_te_mul(te, loom_te_ref(te, c->r[i + 1]),
                             ops_int(te, c->dilation[i]));
  return c->dilation[i] > c->stride[i] ? loom_te_add(te, y, x)
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
  loom_expr *p = loom_te_mul(te, loom_te_cast(te, c->out, loom_te_at(te, c->x, xi, n)),
                             loom_te_cast(te, c->out, loom_te_at(te, c->w, wi, n)));
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
  const int64_t *stride, *k; /* per spatial dimension */
} dil_ctx;

/* topi's dilate: the input spread out by the stride, zeros between. */
static loom_expr *dilate_body(loom_te *te, void *user, loom_expr *const *idx) {
  dil_ctx *c = user;
  loom_expr *xi[4] = {idx[0], idx[1], NULL, NULL}, *cond = NULL;
  for (int i = 2; i < 4; i++) {
    int64_t st = c->stride[i - 2];
    xi[i] = loom_te_bin(te, LOOM_EXPR_FLOORDIV, idx[i], ops_int(te, st));
    if (st == 1)
      continue;
    loom_expr *on = loom_te_bin(
        te, LOOM_EXPR_EQ,
        loom_te_bin(te, LOOM_EXPR_FLOORMOD, idx[i], ops_int(te, st)),
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
                      loom_te_sub(te, ops_int(te, c->k[0] - 1), idx[2]),
                      loom_te_sub(te, ops_int(te, c->k[1] - 1), idx[3])};
  return loom_te_at(te, c->x, wi, 4);
}

static loom_status conv_keys(const loom_te_args *args, int64_t *v,
                             const char *const *keys, int n, loom_diag *d) {
  for (int i = 0; i < n; i++) {
    TRY(loom_te_args_int(args, keys[i], &v[i], d));
    if (v[i] < 1)
      return loom_diag_error(d, (loom_loc){0}, "%s: %s=%lld must be at least 1",
                             args->op->name, keys[i], (long long)v[i]);
  }
  return LOOM_OK;
}

/* A per-dimension key, as topi takes stride, padding and dilation: one
 * value for every spatial dimension, or one per dimension (D, H, W order),
 * or for pad also 2 * nsp values, the befores then the afters (topi's
 * front, top, left, back, bottom, right). before gets the values and,
 * for pad, after the afters. */
static loom_status dim_key(const loom_te_args *args, const char *key, int nsp,
                           int64_t least, int64_t *before, int64_t *after,
                           loom_diag *d) {
  int64_t v[6];
  int n;
  bool is_pad = after != NULL;
  TRY(loom_te_args_ints(args, key, v, is_pad ? 2 * nsp : nsp, &n, d));
  if (n != 1 && n != nsp && !(is_pad && n == 2 * nsp))
    return loom_diag_error(d, (loom_loc){0},
                           "%s: %s takes 1 or %d values%s", args->op->name,
                           key, nsp, is_pad && nsp > 1 ? (nsp == 2 ? " (or 4: "
                           "top, left, bottom, right)" : " (or 6: front, top, "
                           "left, back, bottom, right)") : "");
  for (int i = 0; i < n; i++)
    if (v[i] < least)
      return loom_diag_error(d, (loom_loc){0},
                             "%s: %s=%lld must be at least %lld",
                             args->op->name, key, (long long)v[i],
                             (long long)least);
  for (int i = 0; i < nsp; i++) {
    before[i] = v[n == 1 ? 0 : i];
    if (is_pad)
      after[i] = v[n == 1 ? 0 : n == nsp ? i : nsp + i];
  }
  return LOOM_OK;
}

/* The input's spatial extents: H alone (1-D), or D / H / W where an empty
 * D or W takes H's value. */
static loom_status in_extents(const loom_te_args *args, int nsp, int64_t *in,
                              loom_diag *d) {
  static const char *const keys3[] = {"D", "H", "W"};
  const char *const *keys = nsp == 3 ? keys3 : nsp == 2 ? keys3 + 1 : keys3 + 1;
  int64_t h;
  TRY(loom_te_args_int(args, "H", &h, d));
  for (int i = 0; i < nsp; i++) {
    const char *s;
    in[i] = h;
    if (strcmp(keys[i], "H")) {
      TRY(loom_te_args_str(args, keys[i], &s, d));
      if (*s)
        TRY(loom_te_args_int(args, keys[i], &in[i], d));
    }
    if (in[i] < 1)
      return loom_diag_error(d, (loom_loc){0}, "%s: %s=%lld must be at least 1",
                             args->op->name, keys[i], (long long)in[i]);
  }
  return LOOM_OK;
}

static loom_status build_conv(loom_te *te, const loom_te_args *args, int nsp,
                              bool is_depthwise, bool is_transpose,
                              loom_func **out, loom_diag *d) {
  static const char *const keys[] = {"N", "C", "K", "groups"};
  int64_t v[4], in[3], before[3], after[3];
  const char *layout = "NCHW";
  loom_dtype t;
  conv_ctx c = {0};
  TRY(conv_keys(args, v, keys, 4, d));
  TRY(in_extents(args, nsp, in, d));
  TRY(dim_key(args, "R", nsp, 1, c.k, NULL, d));
  TRY(dim_key(args, "stride", nsp, 1, c.stride, NULL, d));
  TRY(dim_key(args, "dilation", nsp, 1, c.dilation, NULL, d));
  TRY(dim_key(args, "pad", nsp, 0, before, after, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  TRY(ops_out_dtype(args, t, &c.out, d));
  TRY(loom_te_args_str(args, "layout", &layout, d));
  c.nsp = nsp;
  c.is_nhwc = layout[0] == 'N' && layout[1] != 'C';
  if (strlen(layout) != (size_t)nsp + 2 || layout[0] != 'N' ||
      (is_transpose && c.is_nhwc))
    return loom_diag_error(d, (loom_loc){0}, "%s: layout=%s is not supported; "
                           "write %s", args->op->name, layout,
                           nsp == 1 ? "NCW or NWC" : nsp == 2 ? "NCHW or NHWC"
                                                              : "NCDHW or NDHWC");
  int64_t N = v[0], C = v[1], K = v[2];
  c.groups = v[3];
  c.cin = C;
  c.cout = is_depthwise ? C : K;
  c.is_depthwise = is_depthwise;
  c.is_transpose = is_transpose;
  if (C % c.groups || c.cout % c.groups)
    return loom_diag_error(d, (loom_loc){0},
                           "%s: groups=%lld must divide C=%lld and K=%lld",
                           args->op->name, (long long)c.groups, (long long)C,
                           (long long)K);
  if (is_transpose && c.groups != 1)
    return loom_diag_error(d, (loom_loc){0}, "%s: groups must be 1",
                           args->op->name);
  int64_t o[3];
  for (int i = 0; i < nsp; i++) {
    int64_t ext = (c.k[i] - 1) * c.dilation[i] + 1;
    o[i] = is_transpose
               ? (in[i] - 1) * c.stride[i] - before[i] - after[i] + c.k[i]
               : (in[i] + before[i] + after[i] - ext) / c.stride[i] + 1;
    if ((!is_transpose && in[i] + before[i] + after[i] < ext) || o[i] < 1 ||
        (is_transpose && (before[i] > c.k[i] - 1 || after[i] > c.k[i] - 1 ||
                          c.dilation[i] != 1)))
      return loom_diag_error(d, (loom_loc){0},
                             "%s: in spatial dimension %d the window (R=%lld, "
                             "dilation=%lld, pad=%lld,%lld) does not fit the "
                             "input (%lld)",
                             args->op->name, i, (long long)c.k[i],
                             (long long)c.dilation[i], (long long)before[i],
                             (long long)after[i], (long long)in[i]);
  }
  int n = nsp + 2, ch = c.is_nhwc ? n - 1 : 1, sp0 = c.is_nhwc ? 1 : 2;
  int64_t xs[5], ws[5];
  xs[0] = N;
  xs[ch] = C;
  for (int i = 0; i < nsp; i++)
    xs[sp0 + i] = in[i];
  if (is_depthwise) {
    int hw0 = c.is_nhwc ? 0 : 2;
    for (int i = 0; i < nsp; i++)
      ws[hw0 + i] = c.k[i];
    ws[c.is_nhwc ? nsp : 0] = C;
    ws[c.is_nhwc ? nsp + 1 : 1] = 1;
  } else if (is_transpose) {
    ws[0] = C;
    ws[1] = K;
    for (int i = 0; i < nsp; i++)
      ws[2 + i] = c.k[i];
  } else if (c.is_nhwc) {
    for (int i = 0; i < nsp; i++)
      ws[i] = c.k[i];
    ws[nsp] = C / c.groups;
    ws[nsp + 1] = K;
  } else {
    ws[0] = K;
    ws[1] = C / c.groups;
    for (int i = 0; i < nsp; i++)
      ws[2 + i] = c.k[i];
  }
  loom_te_tensor *x = ops_input(te, "A", xs, n, t);
  loom_te_tensor *w = ops_input(te, "W", ws, n, t);
  c.w = w;
  const char *pname = is_depthwise ? "PaddedInput" : "pad_temp";
  if (is_transpose) {
    /* As topi builds it: dilate, pad by k - 1 - pad, flip the kernel, then
     * a stride-1 convolution. */
    dil_ctx dc = {x, c.stride, c.k};
    loom_expr *shape[4] = {ops_int(te, N), ops_int(te, C),
                           ops_int(te, (in[0] - 1) * c.stride[0] + 1),
                           ops_int(te, (in[1] - 1) * c.stride[1] + 1)};
    loom_te_tensor *dil = loom_te_compute(te, "data_dilate", shape, 4, NULL,
                                          dilate_body, &dc);
    int64_t pb[4] = {0, 0, c.k[0] - 1 - before[0], c.k[1] - 1 - before[1]};
    int64_t pa[4] = {0, 0, c.k[0] - 1 - after[0], c.k[1] - 1 - after[1]};
    c.x = ops_pad(te, dil, pb, pa, loom_te_const(te, t, 0), "data_pad");
    static const char *const kn[] = {"o", "i", "h", "w"};
    loom_expr *kshape[4] = {ops_int(te, K), ops_int(te, C),
                            ops_int(te, c.k[0]), ops_int(te, c.k[1])};
    dc.x = c.w;
    c.w = loom_te_compute(te, "kernel_transform", kshape, 4, kn, flip_body,
                          &dc);
    for (int i = 0; i < nsp; i++)
      c.stride[i] = 1;
  } else {
    int64_t pb[5] = {0}, pa[5] = {0};
    for (int i = 0; i < nsp; i++) {
      pb[sp0 + i] = before[i];
      pa[sp0 + i] = after[i];
    }
    /* topi pads even when the padding is zero. */
    c.x = ops_pad(te, x, pb, pa, loom_te_const(te, t, 0), pname);
  }
  static const char *const rn_nchw[] = {"rc", "ry", "rx", "rz"};
  static const char *const rn_dw[] = {"rc", "di", "dj", "dk"};
  static const char *const rn_tr[] = {"dc", "dh", "dw", "dd"};
  const char *const *rn = is_depthwise ? rn_dw : is_transpose ? rn_tr : rn_nchw;
  c.r[0] = loom_te_reduce_axis(te, ops_int(te, C / c.groups), rn[0]);
  for (int i = 0; i < nsp; i++)
    c.r[i + 1] = loom_te_reduce_axis(te, ops_int(te, c.k[i]), rn[i + 1]);
  loom_expr *shape[5];
  shape[0] = ops_int(te, N);
  shape[ch] = ops_int(te, c.cout);
  for (int i = 0; i < nsp; i++)
    shape[sp0 + i] = ops_int(te, o[i]);
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
  else if (nsp == 2 && c.groups > 1)
    snprintf(name, sizeof name, "group_conv2d_%s", c.is_nhwc ? "nhwc" : "nchw");
  else
    snprintf(name, sizeof name, "conv%dd_%s", nsp,
             c.is_nhwc ? (nsp == 1 ? "nwc" : nsp == 2 ? "nhwc" : "ndhwc")
                       : (nsp == 1 ? "ncw" : nsp == 2 ? "nchw" : "ncdhw"));
  loom_te_tensor *y = loom_te_compute(te, name, shape, n, an, conv_body, &c);
  /* topi's conv2d_nhwc marks its filter free to re-layout. */
  if (c.is_nhwc && nsp == 2 && !is_depthwise)
    loom_te_set_layout_free(te, y, w);
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
