/* Expression building for compute definitions: constants are folded and
 * identities dropped as TVM's operator overloads fold them, and a constant
 * meeting an operand of another dtype takes that dtype, as a Python scalar
 * does in TE. */
#include "te_impl.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

void *te_fail(loom_te *te, const char *fmt, ...) {
  if (te->error)
    return NULL;
  va_list ap;
  va_start(ap, fmt);
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  te->error = loom_arena_strdup(te->arena, buf);
  if (!te->error)
    te->error = "out of memory";
  return NULL;
}

loom_expr *loom_te_int(loom_te *te, int64_t v) {
  return loom_ir_int(te->arena, LOOM_INT32, v);
}

loom_expr *loom_te_const(loom_te *te, loom_dtype t, double v) {
  if (loom_dtype_is_float(t))
    return loom_ir_float(te->arena, t, v);
  /* Saturate rather than convert out of range, which C leaves undefined. */
  int64_t i = v != v                  ? 0
              : v >= 9.2233720368547758e18  ? INT64_MAX
              : v <= -9.2233720368547758e18 ? INT64_MIN
                                            : (int64_t)v;
  return loom_ir_int(te->arena, t, i);
}

loom_expr *loom_te_ref(loom_te *te, loom_var *v) {
  return v ? loom_ir_ref(te->arena, v) : NULL;
}

static bool is_int(const loom_expr *e, int64_t v) {
  return e->kind == LOOM_EXPR_INT && e->dtype.code != LOOM_DT_BOOL &&
         e->u.int_value == v;
}

static bool is_float(const loom_expr *e, double v) {
  return e->kind == LOOM_EXPR_FLOAT && e->u.float_value == v;
}

static bool is_const(const loom_expr *e) {
  return e->kind == LOOM_EXPR_INT || e->kind == LOOM_EXPR_FLOAT;
}

static bool is_bool(const loom_expr *e, int64_t v) {
  return e->kind == LOOM_EXPR_INT && e->dtype.code == LOOM_DT_BOOL &&
         e->u.int_value == v;
}

/* A constant re-made in dtype t. */
static loom_expr *retype(loom_te *te, loom_expr *c, loom_dtype t) {
  double v = c->kind == LOOM_EXPR_FLOAT ? c->u.float_value
                                        : (double)c->u.int_value;
  return loom_te_const(te, t, v);
}

static int64_t floordiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Folds two integer constants; returns 0 when the kind does not fold. */
static int fold_int(loom_expr_kind k, int64_t a, int64_t b, int64_t *r) {
  switch (k) {
  case LOOM_EXPR_ADD: return !__builtin_add_overflow(a, b, r);
  case LOOM_EXPR_SUB: return !__builtin_sub_overflow(a, b, r);
  case LOOM_EXPR_MUL: return !__builtin_mul_overflow(a, b, r);
  case LOOM_EXPR_MIN: *r = a < b ? a : b; return 1;
  case LOOM_EXPR_MAX: *r = a > b ? a : b; return 1;
  case LOOM_EXPR_FLOORDIV:
    if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
    *r = floordiv64(a, b);
    return 1;
  case LOOM_EXPR_FLOORMOD:
    if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
    *r = a - floordiv64(a, b) * b;
    return 1;
  default: return 0;
  }
}

static int fold_cmp(loom_expr_kind k, double a, double b, int64_t *r) {
  switch (k) {
  case LOOM_EXPR_EQ: *r = a == b; return 1;
  case LOOM_EXPR_NE: *r = a != b; return 1;
  case LOOM_EXPR_LT: *r = a < b; return 1;
  case LOOM_EXPR_LE: *r = a <= b; return 1;
  case LOOM_EXPR_GT: *r = a > b; return 1;
  case LOOM_EXPR_GE: *r = a >= b; return 1;
  default: return 0;
  }
}

/* The identities TVM's TryConstFold applies; NULL when none does. */
static loom_expr *identity(loom_te *te, loom_expr_kind k, loom_expr *x,
                           loom_expr *y) {
  bool fl = loom_dtype_is_float(x->dtype);
  bool x0 = fl ? is_float(x, 0) : is_int(x, 0);
  bool y0 = fl ? is_float(y, 0) : is_int(y, 0);
  bool x1 = fl ? is_float(x, 1) : is_int(x, 1);
  bool y1 = fl ? is_float(y, 1) : is_int(y, 1);
  switch (k) {
  case LOOM_EXPR_ADD: return x0 ? y : y0 ? x : NULL;
  case LOOM_EXPR_SUB: return y0 ? x : NULL;
  case LOOM_EXPR_MUL:
    if (x1) return y;
    if (y1) return x;
    if (!fl && (x0 || y0)) return loom_te_const(te, x->dtype, 0);
    return NULL;
  case LOOM_EXPR_DIV:
  case LOOM_EXPR_FLOORDIV: return y1 ? x : NULL;
  case LOOM_EXPR_FLOORMOD:
    return !fl && y1 ? loom_te_const(te, x->dtype, 0) : NULL;
  case LOOM_EXPR_AND:
    return is_bool(x, 1) ? y : is_bool(y, 1) ? x : NULL;
  case LOOM_EXPR_OR:
    return is_bool(x, 0) ? y : is_bool(y, 0) ? x : NULL;
  default: return NULL;
  }
}

loom_expr *loom_te_bin(loom_te *te, loom_expr_kind k, loom_expr *x,
                       loom_expr *y) {
  if (!x || !y)
    return NULL;
  if (!loom_dtype_eq(x->dtype, y->dtype)) {
    if (is_const(y) && !is_const(x))
      y = retype(te, y, x->dtype);
    else if (is_const(x) && !is_const(y))
      x = retype(te, x, y->dtype);
    else if (is_const(x) && is_const(y) && loom_dtype_is_float(y->dtype))
      x = retype(te, x, y->dtype);
    else if (is_const(x) && is_const(y))
      y = retype(te, y, x->dtype);
    else {
      char a[LOOM_DTYPE_STRLEN], b[LOOM_DTYPE_STRLEN];
      return te_fail(te, "operands of '%s' have different dtypes (%s and %s); "
                         "cast one of them",
                     loom_expr_kind_name(k), loom_dtype_str(x->dtype, a),
                     loom_dtype_str(y->dtype, b));
    }
    if (!x || !y)
      return NULL;
  }
  int64_t r;
  if (x->kind == LOOM_EXPR_INT && y->kind == LOOM_EXPR_INT &&
      x->dtype.code != LOOM_DT_BOOL) {
    if (fold_int(k, x->u.int_value, y->u.int_value, &r))
      return loom_ir_int(te->arena, x->dtype, r);
    if (fold_cmp(k, (double)x->u.int_value, (double)y->u.int_value, &r))
      return loom_ir_int(te->arena, LOOM_BOOL, r);
  }
  if (x->kind == LOOM_EXPR_FLOAT && y->kind == LOOM_EXPR_FLOAT) {
    double a = x->u.float_value, b = y->u.float_value;
    switch (k) {
    case LOOM_EXPR_ADD: return loom_ir_float(te->arena, x->dtype, a + b);
    case LOOM_EXPR_SUB: return loom_ir_float(te->arena, x->dtype, a - b);
    case LOOM_EXPR_MUL: return loom_ir_float(te->arena, x->dtype, a * b);
    default: break;
    }
  }
  loom_expr *id = identity(te, k, x, y);
  if (id)
    return id;
  return loom_ir_binary(te->arena, k, x, y);
}

loom_expr *loom_te_add(loom_te *te, loom_expr *x, loom_expr *y) {
  return loom_te_bin(te, LOOM_EXPR_ADD, x, y);
}
loom_expr *loom_te_sub(loom_te *te, loom_expr *x, loom_expr *y) {
  return loom_te_bin(te, LOOM_EXPR_SUB, x, y);
}
loom_expr *loom_te_mul(loom_te *te, loom_expr *x, loom_expr *y) {
  return loom_te_bin(te, LOOM_EXPR_MUL, x, y);
}
loom_expr *loom_te_div(loom_te *te, loom_expr *x, loom_expr *y) {
  return loom_te_bin(te, LOOM_EXPR_DIV, x, y);
}

loom_expr *loom_te_cast(loom_te *te, loom_dtype t, loom_expr *x) {
  if (!x)
    return NULL;
  if (loom_dtype_eq(x->dtype, t))
    return x;
  if (is_const(x) && x->dtype.code != LOOM_DT_BOOL)
    return retype(te, x, t);
  return loom_ir_cast(te->arena, t, x);
}

static loom_expr *unify_branches(loom_te *te, loom_expr **t, loom_expr **f) {
  if (!*t || !*f)
    return NULL;
  if (loom_dtype_eq((*t)->dtype, (*f)->dtype))
    return *t;
  if (is_const(*f))
    *f = retype(te, *f, (*t)->dtype);
  else if (is_const(*t))
    *t = retype(te, *t, (*f)->dtype);
  else
    return te_fail(te, "the branches of a condition have different dtypes");
  return *t;
}

loom_expr *loom_te_if_then_else(loom_te *te, loom_expr *c, loom_expr *t,
                                loom_expr *f) {
  if (!c || !unify_branches(te, &t, &f))
    return NULL;
  if (is_bool(c, 1))
    return t;
  if (is_bool(c, 0))
    return f;
  loom_expr *args[3] = {c, t, f};
  return loom_ir_call(te->arena, t->dtype, LOOM_OP_IF_THEN_ELSE, args, 3);
}

loom_expr *loom_te_select(loom_te *te, loom_expr *c, loom_expr *t,
                          loom_expr *f) {
  if (!c || !unify_branches(te, &t, &f))
    return NULL;
  return loom_ir_select(te->arena, c, t, f);
}

loom_expr *loom_te_call(loom_te *te, loom_op op, loom_expr *const *args,
                        int n) {
  for (int i = 0; i < n; i++)
    if (!args[i])
      return NULL;
  const loom_op_info *info = &loom_op_table[op];
  if (info->arity >= 0 && info->arity != n)
    return te_fail(te, "T.%s takes %d argument%s, not %d", info->name,
                   info->arity, info->arity == 1 ? "" : "s", n);
  if (n == 0)
    return te_fail(te, "T.%s needs arguments", info->name);
  loom_dtype t = args[0]->dtype;
  if (info->result == LOOM_RESULT_BOOL)
    t = LOOM_BOOL;
  else if (info->result == LOOM_RESULT_ARG1 && n > 1)
    t = args[1]->dtype;
  return loom_ir_call(te->arena, t, op, (loom_expr **)args, n);
}

loom_expr *loom_te_call1(loom_te *te, loom_op op, loom_expr *x) {
  return loom_te_call(te, op, &x, 1);
}

/* The extreme finite values, as TVM's min_value / max_value give them. */
static double extreme(loom_dtype t, bool is_max) {
  if (t.code == LOOM_DT_FLOAT || t.code == LOOM_DT_BFLOAT) {
    double m = t.bits == 16 ? (t.code == LOOM_DT_BFLOAT ? 3.3895313892515355e38
                                                        : 65504.0)
               : t.bits == 32 ? (double)FLT_MAX
                              : DBL_MAX;
    return is_max ? m : -m;
  }
  if (t.code == LOOM_DT_UINT)
    return is_max ? ldexp(1, t.bits) - 1 : 0;
  if (t.code == LOOM_DT_BOOL)
    return is_max ? 1 : 0;
  return is_max ? ldexp(1, t.bits - 1) - 1 : -ldexp(1, t.bits - 1);
}

loom_expr *loom_te_min_value(loom_te *te, loom_dtype t) {
  if (t.code == LOOM_DT_INT && t.bits == 64) /* not exact as a double */
    return loom_ir_int(te->arena, t, INT64_MIN);
  return loom_te_const(te, t, extreme(t, false));
}

loom_expr *loom_te_max_value(loom_te *te, loom_dtype t) {
  if (t.code == LOOM_DT_INT && t.bits == 64)
    return loom_ir_int(te->arena, t, INT64_MAX);
  if (t.code == LOOM_DT_UINT && t.bits == 64)
    return loom_ir_int(te->arena, t, -1); /* all bits set */
  return loom_te_const(te, t, extreme(t, true));
}
