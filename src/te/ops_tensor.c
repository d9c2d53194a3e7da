/* Elementwise, broadcast and layout operators: unary activations, binary
 * arithmetic with numpy broadcasting, cast, transpose, reshape, concatenate
 * and pad. */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ew_ctx {
  loom_te_tensor *a, *b;
  const char *what;
  loom_dtype t;
  int64_t perm[TE_MAX_RANK], split;
  int64_t out[TE_MAX_RANK]; /* a binary operator's result shape */
  int axis;
} ew_ctx;

static loom_status shape_key(const loom_te_args *args, const char *key,
                             int64_t *s, int *n, loom_diag *d) {
  TRY(loom_te_args_ints(args, key, s, TE_MAX_RANK, n, d));
  for (int i = 0; i < *n; i++)
    if (s[i] < 1)
      return loom_diag_error(d, (loom_loc){0},
                             "%s: %s has extent %lld; extents are at least 1",
                             args->op->name, key, (long long)s[i]);
  return LOOM_OK;
}

static void const_shape(loom_te *te, const int64_t *s, int n, loom_expr **out) {
  for (int i = 0; i < n; i++)
    out[i] = ops_int(te, s[i]);
}

static const char *const ax_names[] = {"ax0", "ax1", "ax2", "ax3", "ax4",
                                       "ax5", "ax6", "ax7", "ax8", "ax9",
                                       "ax10", "ax11", "ax12", "ax13", "ax14",
                                       "ax15"};

/* ---- unary ---------------------------------------------------------------- */

static loom_expr *unary_body(loom_te *te, void *user, loom_expr *const *idx) {
  ew_ctx *c = user;
  loom_expr *x = loom_te_at(te, c->a, idx, loom_te_ndim(c->a));
  if (!strcmp(c->what, "cast"))
    return loom_te_cast(te, c->t, x);
  return ops_activation(te, c->what, x);
}

loom_status op_unary(loom_te *te, const loom_te_args *args, loom_func **out,
                     loom_diag *d) {
  int64_t s[TE_MAX_RANK];
  int n;
  ew_ctx c = {0};
  loom_dtype t;
  TRY(shape_key(args, "shape", s, &n, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  c.what = args->op->name;
  if (!strcmp(c.what, "cast"))
    TRY(loom_te_args_dtype(args, "out_dtype", &c.t, d));
  c.a = ops_input(te, "A", s, n, t);
  loom_expr *shape[TE_MAX_RANK];
  const_shape(te, s, n, shape);
  loom_te_tensor *y = loom_te_compute(te, "compute", shape, n, NULL,
                                      unary_body, &c);
  loom_te_tensor *all[2] = {c.a, y};
  return ops_finish(te, all, 2, out, d);
}

/* ---- binary with broadcasting ------------------------------------------- */

/* x read at the result's point idx: a dimension of extent 1 that the
 * result widens reads at 0; one the result keeps reads at its own index, as
 * TVM's topi broadcasts (so that equal shapes read elementwise). */
static loom_expr *bcast(loom_te *te, loom_te_tensor *x, loom_expr *const *idx,
                        const int64_t *out, int n) {
  int m = loom_te_ndim(x);
  loom_expr *xi[TE_MAX_RANK];
  for (int i = 0; i < m; i++) {
    int64_t e;
    bool is_one = loom_ir_is_const_int(loom_te_dim(x, i), &e) && e == 1;
    xi[i] = is_one && out[n - m + i] != 1 ? ops_int(te, 0) : idx[n - m + i];
  }
  return loom_te_at(te, x, xi, m);
}

static loom_expr *binary_body(loom_te *te, void *user, loom_expr *const *idx) {
  ew_ctx *c = user;
  int n = c->axis;
  loom_expr *x = bcast(te, c->a, idx, c->out, n);
  loom_expr *y = bcast(te, c->b, idx, c->out, n);
  if (!strcmp(c->what, "add"))
    return loom_te_add(te, x, y);
  if (!strcmp(c->what, "subtract"))
    return loom_te_sub(te, x, y);
  if (!strcmp(c->what, "multiply"))
    return loom_te_mul(te, x, y);
  if (!strcmp(c->what, "divide"))
    return loom_te_div(te, x, y);
  if (!strcmp(c->what, "maximum"))
    return loom_te_bin(te, LOOM_EXPR_MAX, x, y);
  return loom_te_bin(te, LOOM_EXPR_MIN, x, y);
}

loom_status op_binary(loom_te *te, const loom_te_args *args, loom_func **out,
                      loom_diag *d) {
  int64_t sa[TE_MAX_RANK], sb[TE_MAX_RANK], so[TE_MAX_RANK] = {0};
  int na, nb;
  loom_dtype t;
  TRY(shape_key(args, "a_shape", sa, &na, d));
  TRY(shape_key(args, "b_shape", sb, &nb, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int64_t x = i - (n - na) >= 0 ? sa[i - (n - na)] : 1;
    int64_t y = i - (n - nb) >= 0 ? sb[i - (n - nb)] : 1;
    if (x != y && x != 1 && y != 1)
      return loom_diag_error(d, (loom_loc){0},
                             "%s: shapes do not broadcast: extent %lld against "
                             "%lld in dimension %d of the result",
                             args->op->name, (long long)x, (long long)y, i);
    so[i] = x > y ? x : y;
  }
  ew_ctx c = {0};
  c.what = args->op->name;
  c.axis = n;
  memcpy(c.out, so, sizeof so);
  c.a = ops_input(te, "A", sa, na, t);
  c.b = ops_input(te, "B", sb, nb, t);
  loom_expr *shape[TE_MAX_RANK];
  const_shape(te, so, n, shape);
  char name[32];
  snprintf(name, sizeof name, "T_%s", c.what);
  loom_te_tensor *y = loom_te_compute(te, name, shape, n, ax_names,
                                      binary_body, &c);
  loom_te_tensor *all[3] = {c.a, c.b, y};
  return ops_finish(te, all, 3, out, d);
}

/* ---- transpose ------------------------------------------------------------ */

static loom_expr *transpose_body(loom_te *te, void *user,
                                 loom_expr *const *idx) {
  ew_ctx *c = user;
  int n = loom_te_ndim(c->a);
  loom_expr *xi[TE_MAX_RANK];
  for (int i = 0; i < n; i++)
    xi[c->perm[i]] = idx[i];
  return loom_te_at(te, c->a, xi, n);
}

loom_status op_transpose(loom_te *te, const loom_te_args *args,
                         loom_func **out, loom_diag *d) {
  int64_t s[TE_MAX_RANK];
  int n, np;
  ew_ctx c = {0};
  loom_dtype t;
  TRY(shape_key(args, "shape", s, &n, d));
  TRY(loom_te_args_ints(args, "axes", c.perm, TE_MAX_RANK, &np, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  bool seen[TE_MAX_RANK] = {0};
  bool ok = np == n;
  for (int i = 0; ok && i < n; i++) {
    ok = c.perm[i] >= 0 && c.perm[i] < n && !seen[c.perm[i]];
    if (ok)
      seen[c.perm[i]] = true;
  }
  if (!ok)
    return loom_diag_error(d, (loom_loc){0},
                           "transpose: axes must be a permutation of 0..%d",
                           n - 1);
  c.a = ops_input(te, "A", s, n, t);
  loom_expr *shape[TE_MAX_RANK];
  for (int i = 0; i < n; i++)
    shape[i] = ops_int(te, s[c.perm[i]]);
  loom_te_tensor *y = loom_te_compute(te, "T_transpose", shape, n, ax_names,
                                      transpose_body, &c);
  loom_te_tensor *all[2] = {c.a, y};
  return ops_finish(te, all, 2, out, d);
}

/* ---- reshape ----------------------------------------------------------------
 * The row-major position of the output element, re-split over the input. */

typedef struct reshape_ctx {
  loom_te_tensor *a;
  const int64_t *out_shape;
  int out_n;
} reshape_ctx;

static loom_expr *reshape_body(loom_te *te, void *user, loom_expr *const *idx) {
  reshape_ctx *c = user;
  loom_expr *flat = NULL;
  for (int i = 0; i < c->out_n; i++)
    flat = flat ? loom_te_add(te, loom_te_mul(te, flat,
                                              ops_int(te, c->out_shape[i])),
                              idx[i])
                : idx[i];
  int n = loom_te_ndim(c->a);
  loom_expr *xi[TE_MAX_RANK];
  int64_t stride = 1;
  for (int i = n - 1; i >= 0; i--) {
    int64_t e;
    loom_ir_is_const_int(loom_te_dim(c->a, i), &e);
    loom_expr *q = loom_te_bin(te, LOOM_EXPR_FLOORDIV, flat, ops_int(te, stride));
    xi[i] = i ? loom_te_bin(te, LOOM_EXPR_FLOORMOD, q, ops_int(te, e)) : q;
    stride *= e;
  }
  return loom_te_at(te, c->a, xi, n);
}

loom_status op_reshape(loom_te *te, const loom_te_args *args, loom_func **out,
                       loom_diag *d) {
  int64_t s[TE_MAX_RANK], o[TE_MAX_RANK];
  int n, no;
  loom_dtype t;
  TRY(shape_key(args, "shape", s, &n, d));
  TRY(shape_key(args, "new_shape", o, &no, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  int64_t ps = 1, po = 1;
  for (int i = 0; i < n; i++)
    ps *= s[i];
  for (int i = 0; i < no; i++)
    po *= o[i];
  if (ps != po)
    return loom_diag_error(d, (loom_loc){0},
                           "reshape: shape has %lld elements but new_shape has "
                           "%lld", (long long)ps, (long long)po);
  reshape_ctx c = {ops_input(te, "A", s, n, t), o, no};
  loom_expr *shape[TE_MAX_RANK];
  const_shape(te, o, no, shape);
  loom_te_tensor *y = loom_te_compute(te, "T_reshape", shape, no, ax_names,
                                      reshape_body, &c);
  loom_te_tensor *all[2] = {c.a, y};
  return ops_finish(te, all, 2, out, d);
}

/* ---- concatenate ------------------------------------------------------------ */

static loom_expr *concat_body(loom_te *te, void *user, loom_expr *const *idx) {
  ew_ctx *c = user;
  int n = loom_te_ndim(c->a);
  loom_expr *bi[TE_MAX_RANK];
  for (int i = 0; i < n; i++)
    bi[i] = i == c->axis ? loom_te_sub(te, idx[i], ops_int(te, c->split)) : idx[i];
  /* topi tests the later input first: split <= i picks B. */
  loom_expr *cond = loom_te_bin(te, LOOM_EXPR_LE, ops_int(te, c->split),
                                idx[c->axis]);
  return loom_te_if_then_else(te, cond, loom_te_at(te, c->b, bi, n),
                              loom_te_at(te, c->a, idx, n));
}

loom_status op_concatenate(loom_te *te, const loom_te_args *args,
                           loom_func **out, loom_diag *d) {
  int64_t sa[TE_MAX_RANK], sb[TE_MAX_RANK], axis;
  int na, nb;
  loom_dtype t;
  TRY(shape_key(args, "a_shape", sa, &na, d));
  TRY(shape_key(args, "b_shape", sb, &nb, d));
  TRY(loom_te_args_int(args, "axis", &axis, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  if (axis < 0)
    axis += na;
  bool ok = na == nb && axis >= 0 && axis < na;
  for (int i = 0; ok && i < na; i++)
    ok = i == axis || sa[i] == sb[i];
  if (!ok)
    return loom_diag_error(d, (loom_loc){0},
                           "concatenate: a_shape and b_shape must agree except "
                           "along axis, which must be one of their dimensions");
  ew_ctx c = {0};
  c.axis = (int)axis;
  c.split = sa[axis];
  c.a = ops_input(te, "A", sa, na, t);
  c.b = ops_input(te, "B", sb, nb, t);
  loom_expr *shape[TE_MAX_RANK];
  const_shape(te, sa, na, shape);
  shape[axis] = ops_int(te, sa[axis] + sb[axis]);
  loom_te_tensor *y = loom_te_compute(te, "T_concat", shape, na, ax_names,
                                      concat_body, &c);
  loom_te_tensor *all[3] = {c.a, c.b, y};
  return ops_finish(te, all, 3, out, d);
}

/* ---- pad ----------------------------------------------------------------------- */

loom_status op_pad(loom_te *te, const loom_te_args *args, loom_func **out,
                   loom_diag *d) {
  int64_t s[TE_MAX_RANK], before[TE_MAX_RANK] = {0}, after[TE_MAX_RANK] = {0};
  int64_t p[TE_MAX_RANK];
  int n, np;
  loom_dtype t;
  const char *value;
  TRY(shape_key(args, "shape", s, &n, d));
  TRY(loom_te_args_ints(args, "pad", p, TE_MAX_RANK, &np, d));
  TRY(loom_te_args_str(args, "value", &value, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  for (int i = 0; i < np; i++)
    if (p[i] < 0 || np > n)
      return loom_diag_error(d, (loom_loc){0},
                             "pad: pad gives the padding of the last "
                             "dimensions, at most %d values of at least 0", n);
  for (int i = 0; i < np; i++)
    before[n - np + i] = after[n - np + i] = p[i];
  char *end;
  double v = strtod(value, &end);
  if (end == value || *end)
    return loom_diag_error(d, (loom_loc){0}, "pad: value=%s is not a number",
                           value);
  if (!loom_dtype_is_float(t)) {
    loom_expr *lo = loom_te_min_value(te, t), *hi = loom_te_max_value(te, t);
    if (!lo || !hi)
      return LOOM_NOMEM;
    if (v != floor(v) || v < (double)lo->u.int_value ||
        v > (double)hi->u.int_value)
      return loom_diag_error(d, (loom_loc){0},
                             "pad: value=%s is not a value of the dtype",
                             value);
  }
  loom_te_tensor *a = ops_input(te, "A", s, n, t);
  loom_te_tensor *y = ops_pad(te, a, before, after, loom_te_const(te, t, v),
                              "PadInput");
  loom_te_tensor *all[2] = {a, y};
  return ops_finish(te, all, 2, out, d);
}
