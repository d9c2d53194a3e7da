/* Elementwise operators TE builds from a row of a table: math functions
 * and activations of one input (Log, Erf, LeakyRelu, ...), comparisons
 * and logic of two (Greater, And, ...), Pow and Mod, the variadic Max,
 * Min, Sum and Mean, and Where; numpy broadcasting between inputs. Each
 * computes in its input's dtype, as ONNX's reference does, but Pow of an
 * integer base, computed in float64 and truncated. */
#include "onnx_impl.h"

#include <string.h>

typedef enum {
  M_CEIL, M_FLOOR, M_LOG, M_SIN, M_COS, M_SINH, M_COSH, M_ERF, M_ROUND,
  M_RECIPROCAL, M_SIGN, M_NOT, M_SOFTPLUS, M_SOFTSIGN, M_LEAKY_RELU, M_ELU,
  M_SELU, M_HARD_SIGMOID, M_HARD_SWISH,
  M_GREATER, M_LESS, M_EQUAL, M_GREATER_EQUAL, M_LESS_EQUAL, M_AND, M_OR, M_XOR,
  M_POW, M_MOD, M_MAX, M_MIN, M_SUM, M_MEAN, M_WHERE,
} math_kind;

typedef struct math_ctx {
  onnx_node *n;
  math_kind kind;
  loom_te_tensor *in[ONNX_MAX_INPUTS];
  int n_in, rank;
  double alpha, beta; /* the activations' attributes */
  bool is_fmod;
} math_ctx;

static loom_expr *num(loom_te *te, loom_dtype t, double v) { return loom_te_const(te, t, v); }

static loom_expr *unary_of(loom_te *te, const math_ctx *c, loom_expr *x) {
  loom_dtype t = x->dtype;
  loom_expr *zero = num(te, t, 0), *one = num(te, t, 1);
  switch (c->kind) {
  case M_CEIL: return loom_te_call1(te, LOOM_OP_CEIL, x);
  case M_FLOOR: return loom_te_call1(te, LOOM_OP_FLOOR, x);
  case M_LOG: return loom_te_call1(te, LOOM_OP_LOG, x);
  case M_SIN: return loom_te_call1(te, LOOM_OP_SIN, x);
  case M_COS: return loom_te_call1(te, LOOM_OP_COS, x);
  case M_SINH: return loom_te_call1(te, LOOM_OP_SINH, x);
  case M_COSH: return loom_te_call1(te, LOOM_OP_COSH, x);
  case M_ERF: return loom_te_call1(te, LOOM_OP_ERF, x);
  /* half to even, as the default rounding mode rounds */
  case M_ROUND: return loom_te_call1(te, LOOM_OP_NEARBYINT, x);
  case M_RECIPROCAL: return loom_te_div(te, one, x);
  case M_SIGN:
    return loom_te_select(te, loom_te_bin(te, LOOM_EXPR_GT, x, zero), one,
                          loom_te_select(te, loom_te_bin(te, LOOM_EXPR_LT, x, zero),
                                         num(te, t, -1), zero));
  case M_NOT: return loom_te_bin(te, LOOM_EXPR_EQ, x, loom_te_const(te, t, 0));
  case M_SOFTPLUS:
    return loom_te_call1(te, LOOM_OP_LOG, loom_te_add(te, loom_te_call1(te, LOOM_OP_EXP, x), one));
  case M_SOFTSIGN:
    return loom_te_div(te, x, loom_te_add(te, one, loom_te_call1(te, LOOM_OP_FABS, x)));
  case M_LEAKY_RELU:
    return loom_te_select(te, loom_te_bin(te, LOOM_EXPR_LT, x, zero),
                          loom_te_mul(te, num(te, t, c->alpha), x), x);
  case M_ELU:
  case M_SELU: {
    loom_expr *neg = loom_te_mul(te, num(te, t, c->alpha),
                                 loom_te_sub(te, loom_te_call1(te, LOOM_OP_EXP, x), one));
    loom_expr *v = loom_te_select(te, loom_te_bin(te, c->kind == M_ELU ? LOOM_EXPR_LT
                                                                        : LOOM_EXPR_LE,
                                                  x, zero), neg, x);
    return c->kind == M_ELU ? v : loom_te_mul(te, num(te, t, c->beta), v);
  }
  case M_HARD_SIGMOID:
  case M_HARD_SWISH: {
    loom_expr *y = loom_te_add(te, loom_te_mul(te, num(te, t, c->alpha), x), num(te, t, c->beta));
    y = loom_te_bin(te, LOOM_EXPR_MAX, zero, loom_te_bin(te, LOOM_EXPR_MIN, one, y));
    return c->kind == M_HARD_SIGMOID ? y : loom_te_mul(te, x, y);
  }
  default:
    return NULL;
  }
}

static loom_expr *binary_of(loom_te *te, const math_ctx *c, loom_expr *x, loom_expr *y) {
  static const loom_expr_kind kinds[] = {
      [M_GREATER] = LOOM_EXPR_GT, [M_LESS] = LOOM_EXPR_LT, [M_EQUAL] = LOOM_EXPR_EQ,
      [M_GREATER_EQUAL] = LOOM_EXPR_GE, [M_LESS_EQUAL] = LOOM_EXPR_LE,
      [M_AND] = LOOM_EXPR_AND, [M_OR] = LOOM_EXPR_OR, [M_XOR] = LOOM_EXPR_NE,
      [M_MAX] = LOOM_EXPR_MAX, [M_MIN] = LOOM_EXPR_MIN, [M_SUM] = LOOM_EXPR_ADD,
      [M_MEAN] = LOOM_EXPR_ADD};
  loom_dtype t = x->dtype;
  if (c->kind == M_POW) {
    if (loom_dtype_is_float(t))
      return loom_te_call(te, LOOM_OP_POW, (loom_expr *[]){x, loom_te_cast(te, t, y)}, 2);
    loom_dtype f64 = LOOM_DTYPE(LOOM_DT_FLOAT, 64, 1);
    loom_expr *args[2] = {loom_te_cast(te, f64, x), loom_te_cast(te, f64, y)};
    return loom_te_cast(te, t, loom_te_call(te, LOOM_OP_POW, args, 2));
  }
  if (c->kind == M_MOD) {
    /* fmod=1: the sign of the dividend (C's fmod); fmod=0, integers only:
     * the sign of the divisor (Python's %) */
    if (!c->is_fmod)
      return loom_te_bin(te, LOOM_EXPR_FLOORMOD, x, y);
    if (loom_dtype_is_float(t))
      return loom_te_call(te, LOOM_OP_FMOD, (loom_expr *[]){x, y}, 2);
    return loom_te_bin(te, LOOM_EXPR_MOD, x, y);
  }
  return loom_te_bin(te, kinds[c->kind], x, y);
}

static loom_expr *math_body(loom_te *te, void *user, loom_expr *const *idx) {
  math_ctx *c = user;
  loom_expr *v[ONNX_MAX_INPUTS];
  for (int i = 0; i < c->n_in; i++)
    if (!(v[i] = node_bcast_at(c->n, c->in[i], idx, c->rank)))
      return NULL;
  if (c->kind == M_WHERE)
    return loom_te_select(te, v[0], v[1], v[2]);
  if (c->kind < M_GREATER)
    return unary_of(te, c, v[0]);
  loom_expr *r = v[0];
  for (int i = 1; i < c->n_in && r; i++)
    r = binary_of(te, c, r, v[i]);
  if (c->kind == M_MEAN && r)
    r = loom_te_div(te, r, num(te, r->dtype, c->n_in));
  return r;
}

/* The inputs' checks: how many (lo to hi), which dtypes, and which must
 * agree (from `same` on; the condition of Where is bool). */
typedef struct math_op {
  math_kind kind;
  int lo, hi;
  enum { ANY, FLOAT, BOOL, NUMERIC } dtypes;
  int same; /* the first input whose dtype the later ones share; -1: none */
  double alpha, beta;
  const char *alpha_name, *beta_name;
} math_op;

static loom_status build(onnx_node *n, const math_op *op, loom_te_tensor **out) {
  if (n->n_in < op->lo || n->n_in > op->hi || n->n_in > ONNX_MAX_INPUTS)
    return op->lo == op->hi ? node_error(n, "takes %d input%s", op->lo, op->lo == 1 ? "" : "s")
                            : node_error(n, "takes %d to %d inputs", op->lo, op->hi);
  for (int i = 0; i < n->n_in; i++)
    if (!node_has(n, i))
      return node_error(n, "input %d is missing", i);
  const loom_tensor_info *a = n->in[op->same >= 0 ? op->same : 0];
  bool is_float = loom_dtype_is_float(a->dtype), is_bool = a->dtype.code == LOOM_DT_BOOL;
  if ((op->dtypes == FLOAT && !is_float) || (op->dtypes == BOOL && !is_bool) ||
      (op->dtypes == NUMERIC && is_bool))
    return node_error(n, "takes %s inputs", op->dtypes == FLOAT ? "floating-point"
                                            : op->dtypes == BOOL ? "bool"
                                                                 : "numeric");
  for (int i = op->same + 1; op->same >= 0 && i < n->n_in; i++)
    if (!loom_dtype_eq(n->in[i]->dtype, a->dtype))
      return node_error(n, "input %d has another type than input %d", i, op->same);
  if (op->kind == M_WHERE && n->in[0]->dtype.code != LOOM_DT_BOOL)
    return node_error(n, "the condition must be bool");
  if (op->kind == M_MOD && !node_attr_int(n, "fmod", 0) && is_float)
    return node_error(n, "fmod=0 takes integers; a float remainder needs fmod=1");
  math_ctx c = {.n = n, .kind = op->kind, .n_in = n->n_in};
  c.alpha = op->alpha_name ? node_attr_float(n, op->alpha_name, op->alpha) : op->alpha;
  c.beta = op->beta_name ? node_attr_float(n, op->beta_name, op->beta) : op->beta;
  c.is_fmod = node_attr_int(n, "fmod", 0);
  /* The broadcast shape of every input. */
  int64_t shape[ONNX_MAX_RANK];
  loom_tensor_info acc = *n->in[0];
  for (int i = 0; i < n->n_in; i++) {
    c.in[i] = node_arg(n, i);
    if (i) {
      int64_t s[ONNX_MAX_RANK];
      TRY(node_bcast_shape(n, &acc, n->in[i], s, &acc.ndim));
      memcpy(shape, s, sizeof s);
      acc.shape = shape;
    }
  }
  if (n->n_in == 1)
    memcpy(shape, acc.shape, sizeof(int64_t) * (size_t)acc.ndim);
  c.rank = acc.ndim;
  loom_expr *s[ONNX_MAX_RANK];
  node_shape_exprs(n, shape, c.rank, s);
  *out = loom_te_compute(n->te, "compute", s, c.rank, NULL, math_body, &c);
  return LOOM_OK;
}

#define OP1(fn, kind, dtypes)                                                                \
  loom_status fn(onnx_node *n, loom_te_tensor **out) {                                       \
    static const math_op op = {kind, 1, 1, dtypes, 0, 0, 0, NULL, NULL};                     \
    return build(n, &op, out);                                                               \
  }
#define OP_ACT(fn, kind, alpha, alpha_name, beta, beta_name)                                 \
  loom_status fn(onnx_node *n, loom_te_tensor **out) {                                       \
    static const math_op op = {kind, 1, 1, FLOAT, 0, alpha, beta, alpha_name, beta_name};    \
    return build(n, &op, out);                                                               \
  }
#define OP2(fn, kind, dtypes, same)                                                          \
  loom_status fn(onnx_node *n, loom_te_tensor **out) {                                       \
    static const math_op op = {kind, 2, 2, dtypes, same, 0, 0, NULL, NULL};                  \
    return build(n, &op, out);                                                               \
  }
#define OPN(fn, kind, dtypes)                                                                \
  loom_status fn(onnx_node *n, loom_te_tensor **out) {                                       \
    static const math_op op = {kind, 1, ONNX_MAX_INPUTS, dtypes, 0, 0, 0, NULL, NULL};       \
    return build(n, &op, out);                                                               \
  }

OP1(onnx_ceil, M_CEIL, FLOAT)
OP1(onnx_floor, M_FLOOR, FLOAT)
OP1(onnx_log, M_LOG, FLOAT)
OP1(onnx_sin, M_SIN, FLOAT)
OP1(onnx_cos, M_COS, FLOAT)
OP1(onnx_sinh, M_SINH, FLOAT)
OP1(onnx_cosh, M_COSH, FLOAT)
OP1(onnx_erf, M_ERF, FLOAT)
OP1(onnx_round, M_ROUND, FLOAT)
OP1(onnx_reciprocal, M_RECIPROCAL, FLOAT)
OP1(onnx_sign, M_SIGN, NUMERIC)
OP1(onnx_not, M_NOT, BOOL)
OP1(onnx_softplus, M_SOFTPLUS, FLOAT)
OP1(onnx_softsign, M_SOFTSIGN, FLOAT)
OP_ACT(onnx_leaky_relu, M_LEAKY_RELU, 0.01, "alpha", 0, NULL)
OP_ACT(onnx_elu, M_ELU, 1.0, "alpha", 0, NULL)
OP_ACT(onnx_selu, M_SELU, 1.67326319217681884765625, "alpha", 1.05070102214813232421875, "gamma")
OP_ACT(onnx_hard_sigmoid, M_HARD_SIGMOID, 0.2, "alpha", 0.5, "beta")
OP_ACT(onnx_hard_swish, M_HARD_SWISH, 1.0 / 6, NULL, 0.5, NULL)
OP2(onnx_greater, M_GREATER, NUMERIC, 0)
OP2(onnx_less, M_LESS, NUMERIC, 0)
OP2(onnx_equal, M_EQUAL, ANY, 0)
OP2(onnx_greater_equal, M_GREATER_EQUAL, NUMERIC, 0)
OP2(onnx_less_equal, M_LESS_EQUAL, NUMERIC, 0)
OP2(onnx_and, M_AND, BOOL, 0)
OP2(onnx_or, M_OR, BOOL, 0)
OP2(onnx_xor, M_XOR, BOOL, 0)
OP2(onnx_pow, M_POW, NUMERIC, -1)
OP2(onnx_mod, M_MOD, NUMERIC, 0)
OPN(onnx_max, M_MAX, NUMERIC)
OPN(onnx_min, M_MIN, NUMERIC)
OPN(onnx_sum, M_SUM, NUMERIC)
OPN(onnx_mean, M_MEAN, FLOAT)

loom_status onnx_where(onnx_node *n, loom_te_tensor **out) {
  static const math_op op = {M_WHERE, 3, 3, ANY, 1, 0, 0, NULL, NULL};
  return build(n, &op, out);
}
