/* Helpers the operator builders share: inputs, padding, activations and
 * the final create_prim_func. */
#include "ops.h"

#include <string.h>

loom_expr *ops_int(loom_te *te, int64_t v) { return loom_te_int(te, v); }

loom_status ops_out_dtype(const loom_te_args *args, loom_dtype in,
                          loom_dtype *out, loom_diag *d) {
  const char *s;
  TRY(loom_te_args_str(args, "out_dtype", &s, d));
  if (!*s) {
    *out = in;
    return LOOM_OK;
  }
  return loom_te_args_dtype(args, "out_dtype", out, d);
}

/* Inside a TE script the inputs are the script's tensors, which must be
 * what the settings (derived from them) describe. */
static loom_te_tensor *given_input(loom_te *te, const int64_t *shape,
                                   int ndim, loom_dtype t) {
  int i = te->next_given++;
  if (i >= te->n_given)
    return te_fail(te, "the operator takes more than the %d tensors given",
                   te->n_given);
  loom_te_tensor *x = te->given[i];
  bool is_same = loom_te_ndim(x) == ndim && loom_dtype_eq(loom_te_dtype(x), t);
  for (int k = 0; is_same && k < ndim; k++) {
    int64_t v;
    is_same = loom_ir_is_const_int(loom_te_dim(x, k), &v) && v == shape[k];
  }
  if (!is_same) {
    char buf[LOOM_DTYPE_STRLEN];
    return te_fail(te, "tensor %d ('%s') does not have the shape and dtype "
                   "(%s, rank %d) the operator expects there", i,
                   loom_te_name(x), loom_dtype_str(t, buf), ndim);
  }
  return x;
}

loom_te_tensor *ops_input(loom_te *te, const char *name, const int64_t *shape,
                          int ndim, loom_dtype t) {
  if (te->given)
    return given_input(te, shape, ndim, t);
  return loom_te_placeholder_c(te, name, shape, ndim, t);
}

loom_status ops_finish(loom_te *te, loom_te_tensor *const *t, int n,
                       loom_func **out, loom_diag *d) {
  if (te->given) {
    *out = NULL;
    te->applied = t[n - 1];
    if (te->error)
      return loom_diag_error(d, (loom_loc){0}, "%s", te->error);
    return LOOM_OK;
  }
  return loom_te_create_prim_func(te, t, n, out, d);
}

static const char *const activations[] = {"none", "relu", "gelu", "silu",
                                          "sigmoid", "tanh", "exp", NULL};

bool ops_is_activation(const char *name) {
  for (int i = 0; activations[i]; i++)
    if (!strcmp(activations[i], name))
      return true;
  return false;
}

/* gelu is the erf form topi builds: x * 0.5 * (1 + erf(x / sqrt 2)). */
loom_expr *ops_activation(loom_te *te, const char *name, loom_expr *x) {
  if (!x)
    return NULL;
  loom_dtype t = x->dtype;
  if (!strcmp(name, "relu"))
    return loom_te_bin(te, LOOM_EXPR_MAX, x, loom_te_const(te, t, 0));
  if (!strcmp(name, "gelu")) {
    loom_expr *e = loom_te_call1(
        te, LOOM_OP_ERF,
        loom_te_mul(te, x, loom_te_const(te, t, 0.70710678118654757)));
    return loom_te_mul(te, loom_te_mul(te, x, loom_te_const(te, t, 0.5)),
                       loom_te_add(te, loom_te_const(te, t, 1), e));
  }
  if (!strcmp(name, "silu"))
    return loom_te_mul(te, x, loom_te_call1(te, LOOM_OP_SIGMOID, x));
  if (!strcmp(name, "sigmoid"))
    return loom_te_call1(te, LOOM_OP_SIGMOID, x);
  if (!strcmp(name, "tanh"))
    return loom_te_call1(te, LOOM_OP_TANH, x);
  if (!strcmp(name, "exp"))
    return loom_te_call1(te, LOOM_OP_EXP, x);
  return x;
}

typedef struct pad_ctx {
  loom_te_tensor *x;
  const int64_t *before, *after;
  loom_expr *value;
} pad_ctx;

/* topi's pad: in-range points read the input, the rest take the value. */
static loom_expr *pad_body(loom_te *te, void *user, loom_expr *const *idx) {
  pad_ctx *p = user;
  int n = loom_te_ndim(p->x);
  loom_expr *src[TE_MAX_RANK], *cond = NULL;
  for (int i = 0; i < n; i++) {
    src[i] = loom_te_sub(te, idx[i], ops_int(te, p->before[i]));
    if (!p->before[i] && !p->after[i])
      continue;
    loom_expr *lo = loom_te_bin(te, LOOM_EXPR_LE, ops_int(te, p->before[i]),
                                idx[i]);
    loom_expr *hi = loom_te_bin(
        te, LOOM_EXPR_LT, idx[i],
        loom_te_add(te, loom_te_dim(p->x, i), ops_int(te, p->before[i])));
    cond = cond ? loom_te_bin(te, LOOM_EXPR_AND, cond, lo) : lo;
    cond = loom_te_bin(te, LOOM_EXPR_AND, cond, hi);
  }
  loom_expr *v = loom_te_at(te, p->x, src, n);
  return cond ? loom_te_if_then_else(te, cond, v, p->value) : v;
}

loom_te_tensor *ops_pad(loom_te *te, loom_te_tensor *x, const int64_t *before,
                        const int64_t *after, loom_expr *value,
                        const char *name) {
  if (!x)
    return NULL;
  int n = loom_te_ndim(x);
  loom_expr *shape[TE_MAX_RANK];
  for (int i = 0; i < n; i++)
    shape[i] = loom_te_add(te, loom_te_dim(x, i),
                           ops_int(te, before[i] + after[i]));
  pad_ctx p = {x, before, after, value};
  return loom_te_compute(te, name, shape, n, NULL, pad_body, &p);
}
