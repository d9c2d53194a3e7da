/* Reductions and the operators built from them: sum, max, min and mean
 * over an axis, pooling, softmax and log-softmax, layer and RMS norm. */
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ax_names[] = {"ax0", "ax1", "ax2", "ax3", "ax4",
                                       "ax5", "ax6", "ax7", "ax8", "ax9",
                                       "ax10", "ax11", "ax12", "ax13", "ax14",
                                       "ax15"};

typedef struct red_ctx {
  loom_te_tensor *x, *y, *z, *gamma, *beta;
  loom_te_tensor *e; /* softmax: exp(x - max) */
  loom_var *k[4];
  int axis, nk;
  loom_te_reducer r;
  loom_expr *count, *eps;
  int64_t stride, window;
  const char *what;
} red_ctx;

/* The index of x with the reduced axis put back at c->axis. */
static void full_index(loom_te *te, red_ctx *c, loom_expr *const *idx,
                       loom_expr **xi) {
  int n = loom_te_ndim(c->x);
  for (int i = 0, j = 0; i < n; i++)
    xi[i] = i == c->axis ? loom_te_ref(te, c->k[0]) : idx[j++];
}

static loom_expr *reduce_body(loom_te *te, void *user, loom_expr *const *idx) {
  red_ctx *c = user;
  loom_expr *xi[TE_MAX_RANK];
  full_index(te, c, idx, xi);
  loom_expr *v = loom_te_at(te, c->x, xi, loom_te_ndim(c->x));
  if (c->y) { /* sum of exp(x - max) or of (x - mean)^2 */
    loom_expr *m = loom_te_at(te, c->y, idx, loom_te_ndim(c->y));
    loom_expr *dv = loom_te_sub(te, v, m);
    v = !strcmp(c->what, "var") ? loom_te_mul(te, dv, dv)
                                : loom_te_call1(te, LOOM_OP_EXP, dv);
  } else if (!strcmp(c->what, "sq")) {
    v = loom_te_mul(te, v, v);
  }
  return loom_te_reduce(te, c->r, v, c->k, 1, NULL);
}

/* Reduces x over `axis` into a tensor of one rank less. y, when given, is
 * the per-row value subtracted first (what says how it is used). */
static loom_te_tensor *reduce_axis(loom_te *te, loom_te_tensor *x, int axis,
                                   loom_te_reducer r, loom_te_tensor *y,
                                   const char *what, const char *name) {
  red_ctx c = {0};
  c.x = x;
  c.y = y;
  c.axis = axis;
  c.r = r;
  c.what = what;
  char kn[8];
  snprintf(kn, sizeof kn, "k%d", axis);
  c.k[0] = loom_te_reduce_axis(te, loom_te_dim(x, axis),
                               !strcmp(what, "softmax") ? "k" : kn);
  int n = loom_te_ndim(x);
  loom_expr *shape[TE_MAX_RANK];
  for (int i = 0, j = 0; i < n; i++)
    if (i != axis)
      shape[j++] = loom_te_dim(x, i);
  return loom_te_compute(te, name, shape, n - 1,
                         !strcmp(what, "softmax") ? NULL : ax_names,
                         reduce_body, &c);
}

/* Parses shape, dtype and axis; axis=all gives *axis = -1. */
static loom_status shape_axis(const loom_te_args *args, int64_t *s, int *n,
                              int *axis, loom_dtype *t, loom_diag *d) {
  int64_t ax;
  const char *as;
  TRY(loom_te_args_ints(args, "shape", s, TE_MAX_RANK, n, d));
  TRY(loom_te_args_str(args, "axis", &as, d));
  if (!strcmp(as, "all") && strncmp(args->op->name, "arg", 3) &&
      strncmp(args->op->name, "softmax", 7) &&
      strcmp(args->op->name, "log_softmax")) {
    TRY(loom_te_args_dtype(args, "dtype", t, d));
    *axis = -1;
    return LOOM_OK;
  }
  TRY(loom_te_args_int(args, "axis", &ax, d));
  TRY(loom_te_args_dtype(args, "dtype", t, d));
  for (int i = 0; i < *n; i++)
    if (s[i] < 1)
      return loom_diag_error(d, (loom_loc){0}, "%s: extents are at least 1",
                             args->op->name);
  if (ax < 0)
    ax += *n;
  if (ax < 0 || ax >= *n || *n < 2)
    return loom_diag_error(d, (loom_loc){0},
                           "%s: axis must name one of the %d dimensions of "
                           "shape, which needs at least 2",
                           args->op->name, *n);
  *axis = (int)ax;
  return LOOM_OK;
}

static loom_expr *divide_body(loom_te *te, void *user, loom_expr *const *idx) {
  red_ctx *c = user;
  return loom_te_div(te, loom_te_at(te, c->x, idx, loom_te_ndim(c->x)),
                     c->count);
}

typedef struct all_ctx {
  loom_te_tensor *x;
  loom_var *k[TE_MAX_RANK];
  loom_te_reducer r;
} all_ctx;

static loom_expr *all_body(loom_te *te, void *user, loom_expr *const *idx) {
  (void)idx;
  all_ctx *c = user;
  int n = loom_te_ndim(c->x);
  loom_expr *xi[TE_MAX_RANK];
  for (int i = 0; i < n; i++)
    xi[i] = loom_te_ref(te, c->k[i]);
  return loom_te_reduce(te, c->r, loom_te_at(te, c->x, xi, n), c->k, n, NULL);
}

/* A reduction over every axis into a scalar (topi's axis=None). */
static loom_te_tensor *reduce_all(loom_te *te, loom_te_tensor *x,
                                  loom_te_reducer r) {
  all_ctx c = {0};
  c.x = x;
  c.r = r;
  for (int i = 0; i < loom_te_ndim(x); i++) {
    char kn[16];
    snprintf(kn, sizeof kn, "k%d", i);
    c.k[i] = loom_te_reduce_axis(te, loom_te_dim(x, i), kn);
  }
  return loom_te_compute(te, "A_red", NULL, 0, NULL, all_body, &c);
}

typedef struct arg_ctx {
  loom_te_tensor *x;
  loom_var *k;
  int axis;
  bool is_min, keepdims;
  loom_te_comm_reducer r;
} arg_ctx;

/* topi's argmax / argmin combiner over (index, value) pairs: the value
 * that wins the comparison keeps its index, and on a tie the smaller index
 * stays, so the first extreme is found whatever the reduction order. */
static bool arg_reducer(loom_te *te, arg_ctx *c, loom_dtype t) {
  loom_var **v = loom_arena_alloc(te->arena, sizeof *v * 4);
  loom_expr **e = loom_arena_alloc(te->arena, sizeof *e * 4);
  if (!v || !e)
    return false;
  v[0] = loom_ir_var(te->arena, "lhs_idx", LOOM_INT32);
  v[1] = loom_ir_var(te->arena, "lhs_val", t);
  v[2] = loom_ir_var(te->arena, "rhs_idx", LOOM_INT32);
  v[3] = loom_ir_var(te->arena, "rhs_val", t);
  if (!v[0] || !v[1] || !v[2] || !v[3])
    return false;
  loom_expr *li = loom_te_ref(te, v[0]), *lv = loom_te_ref(te, v[1]);
  loom_expr *ri = loom_te_ref(te, v[2]), *rv = loom_te_ref(te, v[3]);
  loom_expr_kind cmp = c->is_min ? LOOM_EXPR_LT : LOOM_EXPR_GT;
  loom_expr *wins = loom_te_bin(te, cmp, lv, rv);
  loom_expr *tie = loom_te_bin(te, LOOM_EXPR_AND,
                               loom_te_bin(te, LOOM_EXPR_EQ, lv, rv),
                               loom_te_bin(te, LOOM_EXPR_LT, li, ri));
  e[0] = loom_te_select(te, loom_te_bin(te, LOOM_EXPR_OR, wins, tie), li, ri);
  e[1] = loom_te_select(te, wins, lv, rv);
  e[2] = loom_te_int(te, -1);
  e[3] = c->is_min ? loom_te_max_value(te, t) : loom_te_min_value(te, t);
  c->r.n = 2;
  c->r.lhs = v;
  c->r.rhs = v + 2;
  c->r.result = e;
  c->r.identity = e + 2;
  return true;
}

static loom_expr *arg_body(loom_te *te, void *user, loom_expr *const *idx) {
  arg_ctx *c = user;
  int n = loom_te_ndim(c->x);
  loom_expr *xi[TE_MAX_RANK];
  for (int i = 0, j = 0; i < n; i++) {
    if (i == c->axis) {
      xi[i] = loom_te_ref(te, c->k);
      j += c->keepdims;
    } else {
      xi[i] = idx[j++];
    }
  }
  loom_expr *src[2] = {loom_te_ref(te, c->k), loom_te_at(te, c->x, xi, n)};
  return loom_te_comm_reduce(te, &c->r, src, &c->k, 1, NULL);
}

static loom_expr *copy_body(loom_te *te, void *user, loom_expr *const *idx) {
  loom_te_tensor *x = user;
  return loom_te_at(te, x, idx, loom_te_ndim(x));
}

/* topi's argmax / argmin (CommReduceIdx): a stage "<x>_red_temp" reducing
 * (index, value) pairs into two outputs, then "<x>_red" taking the index. */
static loom_te_tensor *arg_reduce(loom_te *te, loom_te_tensor *x, int axis,
                                  bool keepdims, bool is_min) {
  arg_ctx c = {0};
  c.x = x;
  c.axis = axis;
  c.is_min = is_min;
  c.keepdims = keepdims;
  char kn[8];
  snprintf(kn, sizeof kn, "k%d", axis);
  c.k = loom_te_reduce_axis(te, loom_te_dim(x, axis), kn);
  if (!arg_reducer(te, &c, loom_te_dtype(x)))
    return te_fail(te, "out of memory");
  int n = loom_te_ndim(x), m = 0;
  loom_expr *shape[TE_MAX_RANK];
  for (int i = 0; i < n; i++)
    if (i != axis || keepdims)
      shape[m++] = i == axis ? ops_int(te, 1) : loom_te_dim(x, i);
  const char *base = loom_te_name(x);
  const char *tn = loom_arena_printf(te->arena, "%s_red_temp", base);
  const char *rn = loom_arena_printf(te->arena, "%s_red", base);
  if (!tn || !rn)
    return te_fail(te, "out of memory");
  loom_te_tensor *tmp = loom_te_compute(te, tn, shape, m, ax_names, arg_body,
                                        &c);
  if (!tmp)
    return NULL;
  return loom_te_compute(te, rn, shape, m, ax_names, copy_body, tmp);
}

loom_status op_argreduce(loom_te *te, const loom_te_args *args,
                         loom_func **out, loom_diag *d) {
  int64_t s[TE_MAX_RANK], keepdims;
  int n, axis;
  loom_dtype t;
  TRY(shape_axis(args, s, &n, &axis, &t, d));
  TRY(loom_te_args_int(args, "keepdims", &keepdims, d));
  loom_te_tensor *a = ops_input(te, "A", s, n, t);
  loom_te_tensor *all[2] = {a, arg_reduce(te, a, axis, keepdims != 0,
                                          !strcmp(args->op->name, "argmin"))};
  return ops_finish(te, all, 2, out, d);
}

loom_status op_reduce(loom_te *te, const loom_te_args *args, loom_func **out,
                      loom_diag *d) {
  int64_t s[TE_MAX_RANK];
  int n, axis;
  loom_dtype t;
  TRY(shape_axis(args, s, &n, &axis, &t, d));
  const char *w = args->op->name;
  loom_te_reducer r = !strcmp(w, "max")                          ? LOOM_TE_MAX
                      : !strcmp(w, "min")                        ? LOOM_TE_MIN
                      : !strcmp(w, "prod")                       ? LOOM_TE_PROD
                                                                 : LOOM_TE_SUM;
  loom_te_tensor *a = ops_input(te, "A", s, n, t);
  loom_te_tensor *y = axis < 0 ? reduce_all(te, a, r)
                               : reduce_axis(te, a, axis, r, NULL, "", "A_red");
  int m = axis < 0 ? 0 : n - 1;
  loom_expr *shape[TE_MAX_RANK];
  for (int i = 0; y && i < m; i++)
    shape[i] = loom_te_dim(y, i);
  if (!strcmp(w, "mean")) {
    red_ctx c = {0};
    c.x = y;
    double count = 1;
    for (int i = 0; i < n; i++)
      count *= axis < 0 || i == axis ? (double)s[i] : 1;
    c.count = loom_te_const(te, t, count);
    y = loom_te_compute(te, "T_divide", shape, m, ax_names, divide_body, &c);
  }
  loom_te_tensor *all[2] = {a, y};
  return ops_finish(te, all, 2, out, d);
}

/* ---- softmax ------------------------------------------------------------------ */

static loom_expr *softmax_body(loom_te *te, void *user, loom_expr *const *idx) {
  red_ctx *c = user;
  int n = loom_te_ndim(c->x);
  loom_expr *ri[TE_MAX_RANK];
  for (int i = 0, j = 0; i < n; i++)
    if (i != c->axis)
      ri[j++] = idx[i];
  loom_expr *s = loom_te_at(te, c->z, ri, n - 1);
  if (c->e)
    return loom_te_div(te, loom_te_at(te, c->e, idx, n), s);
  loom_expr *x = loom_te_at(te, c->x, idx, n);
  loom_expr *m = loom_te_at(te, c->y, ri, n - 1);
  if (!strcmp(c->what, "log_softmax"))
    return loom_te_sub(te, loom_te_sub(te, x, m),
                       loom_te_call1(te, LOOM_OP_LOG, s));
  return loom_te_div(te, loom_te_call1(te, LOOM_OP_EXP, loom_te_sub(te, x, m)),
                     s);
}

static loom_expr *exp_body(loom_te *te, void *user, loom_expr *const *idx) {
  red_ctx *c = user;
  int n = loom_te_ndim(c->x);
  loom_expr *ri[TE_MAX_RANK];
  for (int i = 0, j = 0; i < n; i++)
    if (i != c->axis)
      ri[j++] = idx[i];
  return loom_te_call1(te, LOOM_OP_EXP,
                       loom_te_sub(te, loom_te_at(te, c->x, idx, n),
                                   loom_te_at(te, c->y, ri, n - 1)));
}

loom_status op_softmax(loom_te *te, const loom_te_args *args, loom_func **out,
                       loom_diag *d) {
  int64_t s[TE_MAX_RANK];
  int n, axis;
  loom_dtype t;
  TRY(shape_axis(args, s, &n, &axis, &t, d));
  red_ctx c = {0};
  c.what = args->op->name;
  c.x = ops_input(te, "A", s, n, t);
  c.axis = axis;
  c.y = reduce_axis(te, c.x, axis, LOOM_TE_MAX, NULL, "softmax",
                    "T_softmax_maxelem");
  loom_expr *shape[TE_MAX_RANK];
  for (int i = 0; i < n; i++)
    shape[i] = ops_int(te, s[i]);
  if (!strcmp(c.what, "softmax")) {
    /* topi's softmax keeps exp(x - max) in a stage that the sum and the
     * normalization both read; log_softmax recomputes it in the sum. */
    c.e = loom_te_compute(te, "T_softmax_exp", shape, n, NULL, exp_body, &c);
    c.z = reduce_axis(te, c.e, axis, LOOM_TE_SUM, NULL, "softmax",
                      "T_softmax_expsum");
  } else {
    c.z = reduce_axis(te, c.x, axis, LOOM_TE_SUM, c.y, "softmax", "compute");
  }
  loom_te_tensor *y = loom_te_compute(
      te, !strcmp(c.what, "softmax") ? "T_softmax_norm" : "compute", shape, n,
      NULL, softmax_body, &c);
  loom_te_set_attr_int(te, y, "axis", axis);
  loom_te_tensor *all[2] = {c.x, y};
  return ops_finish(te, all, 2, out, d);
}

/* ---- layer norm and RMS norm over the last axis ------------------------------ */

static loom_expr *norm_body(loom_te *te, void *user, loom_expr *const *idx) {
  red_ctx *c = user;
  int n = loom_te_ndim(c->x);
  loom_expr *x = loom_te_at(te, c->x, idx, n);
  loom_expr *g = loom_te_at(te, c->gamma, &idx[n - 1], 1);
  loom_expr *sq = loom_te_at(te, c->z, idx, n - 1);
  loom_expr *r = loom_te_call1(
      te, LOOM_OP_RSQRT, loom_te_add(te, loom_te_div(te, sq, c->count), c->eps));
  if (!c->y) /* RMS norm */
    return loom_te_mul(te, loom_te_mul(te, x, r), g);
  loom_expr *m = loom_te_at(te, c->y, idx, n - 1);
  return loom_te_add(te, loom_te_mul(te, loom_te_mul(te, loom_te_sub(te, x, m), r),
                                     g),
                     loom_te_at(te, c->beta, &idx[n - 1], 1));
}

typedef struct rms_ctx {
  loom_te_tensor *x, *y, *w; /* operands of the stage being built */
  loom_dtype t;
  loom_expr *count, *eps;
  int kind; /* which stage: see rms_body */
} rms_ctx;

enum { RMS_CAST, RMS_SQUARE, RMS_RSQRT, RMS_SCALE };

static loom_expr *rms_body(loom_te *te, void *user, loom_expr *const *idx) {
  rms_ctx *c = user;
  int n = loom_te_ndim(c->x);
  loom_expr *x = loom_te_at(te, c->x, idx, n);
  switch (c->kind) {
  case RMS_CAST: return loom_te_cast(te, c->t, x);
  case RMS_SQUARE: return loom_te_mul(te, x, x);
  case RMS_RSQRT:
    return loom_te_call1(te, LOOM_OP_RSQRT,
                         loom_te_add(te, loom_te_div(te, x, c->count), c->eps));
  default: /* rsqrt[row] * x * w[last] */
    return loom_te_mul(te, loom_te_mul(te, loom_te_at(te, c->y, idx, n - 1),
                                       x),
                       loom_te_at(te, c->w, &idx[n - 1], 1));
  }
}

static loom_te_tensor *rms_stage(loom_te *te, rms_ctx *c, int kind,
                                 loom_te_tensor *x, loom_dtype t,
                                 const char *name) {
  loom_expr *shape[TE_MAX_RANK];
  int n = loom_te_ndim(x);
  for (int i = 0; i < n; i++)
    shape[i] = loom_te_dim(x, i);
  c->kind = kind;
  c->x = x;
  c->t = t;
  return loom_te_compute(te, name, shape, n, ax_names, rms_body, c);
}

/* RMS norm over the last axis as topi builds it: in float32 (casts in and
 * out, even when the data is float32), the squares, their sum, the
 * reciprocal root, and the scaled product. */
static loom_status rms_norm(loom_te *te, const int64_t *s, int n, loom_dtype t,
                            double eps, loom_func **out, loom_diag *d) {
  loom_te_tensor *a = ops_input(te, "A", s, n, t);
  loom_te_tensor *g = ops_input(te, "gamma", &s[n - 1], 1, t);
  rms_ctx c = {0};
  c.count = loom_te_const(te, LOOM_FLOAT32, (double)s[n - 1]);
  c.eps = loom_te_const(te, LOOM_FLOAT32, eps);
  loom_te_tensor *x = rms_stage(te, &c, RMS_CAST, a, LOOM_FLOAT32, "T_cast");
  loom_te_tensor *sq = rms_stage(te, &c, RMS_SQUARE, x, LOOM_FLOAT32,
                                 "T_multiply");
  loom_te_tensor *sum = reduce_axis(te, sq, n - 1, LOOM_TE_SUM, NULL, "",
                                    "T_multiply_red");
  loom_te_tensor *r = rms_stage(te, &c, RMS_RSQRT, sum, LOOM_FLOAT32, "rsqrt");
  loom_te_tensor *w = rms_stage(te, &c, RMS_CAST, g, LOOM_FLOAT32, "T_cast");
  c.y = r;
  c.w = w;
  loom_te_tensor *y = rms_stage(te, &c, RMS_SCALE, x, LOOM_FLOAT32,
                                "T_rms_norm");
  y = rms_stage(te, &c, RMS_CAST, y, t, "T_cast");
  loom_te_tensor *all[3] = {a, g, y};
  return ops_finish(te, all, 3, out, d);
}

loom_status op_norm(loom_te *te, const loom_te_args *args, loom_func **out,
                    loom_diag *d) {
  int64_t s[TE_MAX_RANK];
  int n;
  loom_dtype t;
  const char *eps;
  TRY(loom_te_args_ints(args, "shape", s, TE_MAX_RANK, &n, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  TRY(loom_te_args_str(args, "eps", &eps, d));
  char *end;
  double e = strtod(eps, &end);
  if (n < 2 || end == eps || *end)
    return loom_diag_error(d, (loom_loc){0},
                           "%s: shape needs at least 2 dimensions and eps a "
                           "number", args->op->name);
  for (int i = 0; i < n; i++)
    if (s[i] < 1)
      return loom_diag_error(d, (loom_loc){0}, "%s: extents are at least 1",
                             args->op->name);
  bool is_layer = !strcmp(args->op->name, "layer_norm");
  if (!is_layer)
    return rms_norm(te, s, n, t, e, out, d);
  red_ctx c = {0};
  c.x = ops_input(te, "A", s, n, t);
  c.gamma = ops_input(te, "gamma", &s[n - 1], 1, t);
  c.beta = is_layer ? ops_input(te, "beta", &s[n - 1], 1, t) : NULL;
  c.count = loom_te_const(te, t, (double)s[n - 1]);
  c.eps = loom_te_const(te, t, e);
  loom_expr *shape[TE_MAX_RANK];
  for (int i = 0; i < n; i++)
    shape[i] = ops_int(te, s[i]);
  if (is_layer) {
    loom_te_tensor *sum = reduce_axis(te, c.x, n - 1, LOOM_TE_SUM, NULL, "",
                                      "A_sum");
    red_ctx mc = {0};
    mc.x = sum;
    mc.count = c.count;
    c.y = loom_te_compute(te, "A_mean", shape, n - 1, ax_names, divide_body,
                          &mc);
    c.z = reduce_axis(te, c.x, n - 1, LOOM_TE_SUM, c.y, "var", "A_var_sum");
  } else {
    c.z = reduce_axis(te, c.x, n - 1, LOOM_TE_SUM, NULL, "sq", "A_sq_sum");
  }
  loom_te_tensor *y = loom_te_compute(te, is_layer ? "T_layer_norm"
                                                   : "T_rms_norm",
                                      shape, n, ax_names, norm_body, &c);
  loom_te_tensor *all[4] = {c.x, c.gamma, is_layer ? c.beta : y, y};
  return ops_finish(te, all, is_layer ? 4 : 3, out, d);
}

/* ---- pooling (NCHW) ------------------------------------------------------------ */

static loom_expr *pool_body(loom_te *te, void *user, loom_expr *const *idx) {
  red_ctx *c = user;
  loom_expr *xi[4] = {idx[0], idx[1], NULL, NULL};
  for (int i = 0; i < 2; i++)
    xi[2 + i] = loom_te_add(te, loom_te_mul(te, idx[2 + i],
                                            ops_int(te, c->stride)),
                            loom_te_ref(te, c->k[i]));
  return loom_te_reduce(te, c->r, loom_te_at(te, c->x, xi, 4), c->k, 2, NULL);
}

loom_status op_pool(loom_te *te, const loom_te_args *args, loom_func **out,
                    loom_diag *d) {
  int64_t s[TE_MAX_RANK], k, stride, pad;
  int n;
  loom_dtype t;
  const char *w = args->op->name;
  bool is_global = !strncmp(w, "global", 6), is_max = strstr(w, "max") != NULL;
  TRY(loom_te_args_ints(args, "shape", s, 4, &n, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  if (n != 4 || s[0] < 1 || s[1] < 1 || s[2] < 1 || s[3] < 1 || s[2] != s[3])
    return loom_diag_error(d, (loom_loc){0},
                           "%s: shape is N,C,H,W with H equal to W", w);
  if (is_global) {
    k = stride = s[2];
    pad = 0;
  } else {
    TRY(loom_te_args_int(args, "kernel", &k, d));
    TRY(loom_te_args_int(args, "stride", &stride, d));
    TRY(loom_te_args_int(args, "pad", &pad, d));
    if (k < 1 || stride < 1 || pad < 0 || pad >= k || s[2] + 2 * pad < k)
      return loom_diag_error(d, (loom_loc){0},
                             "%s: kernel and stride are at least 1 and pad "
                             "less than kernel, and the window must fit",
                             w);
  }
  red_ctx c = {0};
  loom_te_tensor *a = ops_input(te, "A", s, 4, t);
  int64_t before[4] = {0, 0, pad, pad};
  loom_expr *fill = is_max ? loom_te_min_value(te, t) : loom_te_const(te, t, 0);
  c.x = pad ? ops_pad(te, a, before, before, fill, "pad_temp") : a;
  c.stride = stride;
  c.r = is_max ? LOOM_TE_MAX : LOOM_TE_SUM;
  c.k[0] = loom_te_reduce_axis(te, ops_int(te, k), "rv0");
  c.k[1] = loom_te_reduce_axis(te, ops_int(te, k), "rv1");
  int64_t o = (s[2] + 2 * pad - k) / stride + 1;
  loom_expr *shape[4] = {ops_int(te, s[0]), ops_int(te, s[1]), ops_int(te, o),
                         ops_int(te, o)};
  const char *rname = is_global ? "adaptive_pool_sum"
                      : is_max  ? "pool_max"
                                : "pool_sum";
  loom_te_tensor *y = loom_te_compute(te, rname, shape, 4, ax_names, pool_body,
                                      &c);
  if (is_max) {
    loom_te_set_attr_str(te, y, "schedule_rule", "meta_schedule.pool_max");
  } else {
    red_ctx dc = {0};
    dc.x = y;
    dc.count = loom_te_const(te, t, (double)(k * k));
    const char *aname = is_global ? "adaptive_pool_avg" : "pool_avg";
    y = loom_te_compute(te, aname, shape, 4, ax_names, divide_body, &dc);
    char rule[64];
    snprintf(rule, sizeof rule, "meta_schedule.%s", aname);
    loom_te_set_attr_str(te, y, "schedule_rule", rule);
  }
  loom_te_tensor *all[2] = {a, y};
  return ops_finish(te, all, 2, out, d);
}
