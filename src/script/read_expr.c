/* Expressions of TVMScript: Python operators and literals, names, loads and
 * the typing rules (T.* functions are in read_call.c). Literal typing
 * follows TVM: a bare Python number stays a literal (folded in Python) until
 * it meets a typed operand, whose dtype it then takes. */
#include "script/read.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- literals ------------------------------------------------------------ */

bool rd_int_fits(loom_dtype t, int64_t v) {
  switch ((loom_dtype_code)t.code) {
  case LOOM_DT_BOOL: return v == 0 || v == 1;
  case LOOM_DT_INT:
    if (t.bits >= 64)
      return true;
    return v >= -(INT64_C(1) << (t.bits - 1)) &&
           v <= (INT64_C(1) << (t.bits - 1)) - 1;
  case LOOM_DT_UINT:
    if (v < 0)
      return false;
    return t.bits >= 63 || v <= (INT64_C(1) << t.bits) - 1;
  default: return false;
  }
}

static const char *dts(loom_dtype t, char buf[LOOM_DTYPE_STRLEN]) {
  return loom_dtype_str(t, buf);
}

static loom_status int_range_error(rd_ctx *c, loom_loc loc, loom_dtype t,
                                   int64_t v) {
  char b[LOOM_DTYPE_STRLEN];
  if (t.code == LOOM_DT_INT && t.bits == 32)
    return rd_error(c, loc,
                    "integer %lld does not fit in int32; write "
                    "T.int64(%lld) for a 64-bit constant",
                    (long long)v, (long long)v);
  if (t.code == LOOM_DT_BOOL)
    return rd_error(c, loc, "%lld is not a bool; use True or False",
                    (long long)v);
  if (t.code == LOOM_DT_UINT)
    return rd_error(c, loc, "%lld does not fit in %s (range 0 to %llu)",
                    (long long)v, dts(t, b),
                    t.bits >= 64
                        ? (unsigned long long)UINT64_MAX
                        : (unsigned long long)((UINT64_C(1) << t.bits) - 1));
  if (t.code == LOOM_DT_INT)
    return rd_error(c, loc, "%lld does not fit in %s (range %lld to %lld)",
                    (long long)v, dts(t, b),
                    (long long)(-(INT64_C(1) << (t.bits - 1))),
                    (long long)((INT64_C(1) << (t.bits - 1)) - 1));
  return rd_error(c, loc, "%lld is not a value of %s", (long long)v, dts(t, b));
}

static loom_expr *scalar_const(rd_ctx *c, loom_dtype t, int64_t i, double f,
                               bool is_float) {
  if (loom_dtype_is_float(t))
    return loom_ir_float(c->a, t, is_float ? f : (double)i);
  return loom_ir_int(c->a, t, i);
}

loom_status rd_materialize(rd_ctx *c, const rd_val *v, const loom_dtype *want,
                           loom_expr **out) {
  if (v->kind == RV_IR) {
    *out = v->e;
    return LOOM_OK;
  }
  loom_dtype t = v->kind == RV_INT     ? LOOM_INT32
                 : v->kind == RV_FLOAT ? LOOM_FLOAT32
                                       : LOOM_BOOL;
  if (want)
    t = *want;
  loom_dtype s = loom_dtype_with_lanes(t, 1);
  char b[LOOM_DTYPE_STRLEN];
  loom_expr *e;
  if (s.code == LOOM_DT_HANDLE || s.code == LOOM_DT_VOID)
    return rd_error(c, v->loc, "a number cannot be a %s value", dts(s, b));
  if (loom_dtype_is_float(s)) {
    e = scalar_const(c, s, v->i, v->f, v->kind == RV_FLOAT);
  } else if (v->kind == RV_FLOAT) {
    return rd_error(c, v->loc,
                    "%g is not an integer; a %s value is expected here", v->f,
                    dts(s, b));
  } else {
    if (!rd_int_fits(s, v->i))
      return int_range_error(c, v->loc, s, v->i);
    e = loom_ir_int(c->a, s, v->i);
  }
  if (e && t.lanes > 1)
    e = loom_ir_broadcast(c->a, e, t.lanes);
  if (!e)
    return LOOM_NOMEM;
  *out = e;
  return LOOM_OK;
}

loom_expr *rd_cast(rd_ctx *c, loom_dtype t, loom_expr *v) {
  if (!v || loom_dtype_eq(v->dtype, t))
    return v;
  if (t.lanes > 1 && v->dtype.lanes == 1) {
    loom_expr *s = rd_cast(c, loom_dtype_with_lanes(t, 1), v);
    return loom_ir_broadcast(c->a, s, t.lanes);
  }
  if (t.lanes == 1 && v->dtype.lanes == 1) {
    if (v->kind == LOOM_EXPR_INT) {
      int64_t x = v->u.int_value;
      if (loom_dtype_is_float(t))
        return loom_ir_float(c->a, t, (double)x);
      if (t.code == LOOM_DT_BOOL)
        return loom_ir_int(c->a, t, x != 0);
      if (loom_dtype_is_int(t) && rd_int_fits(t, x))
        return loom_ir_int(c->a, t, x);
    }
    if (v->kind == LOOM_EXPR_FLOAT) {
      double x = v->u.float_value;
      if (loom_dtype_is_float(t))
        return loom_ir_float(c->a, t, x);
      if (loom_dtype_is_int(t) && x > -9.2e18 && x < 9.2e18 &&
          rd_int_fits(t, (int64_t)x))
        return loom_ir_int(c->a, t, (int64_t)x);
    }
  }
  return loom_ir_cast(c->a, t, v);
}

/* ---- operator typing ----------------------------------------------------- */

static bool is_const(const loom_expr *e) {
  return e->kind == LOOM_EXPR_INT || e->kind == LOOM_EXPR_FLOAT;
}

static bool same_family(loom_dtype a, loom_dtype b) {
  return (loom_dtype_is_int(a) && loom_dtype_is_int(b)) ||
         (loom_dtype_is_float(a) && loom_dtype_is_float(b));
}

/* Makes the operands of a binary operator agree, as far as TVM does without
 * surprising anyone: a scalar meets a vector by broadcast; two numbers of one
 * family and different widths meet at the wider when one side is a
 * constant. Anything else is an error naming both dtypes. */
loom_status rd_match_types(rd_ctx *c, loom_loc loc, const char *op,
                           loom_expr **pa, loom_expr **pb) {
  loom_expr *a = *pa, *b = *pb;
  char ba[LOOM_DTYPE_STRLEN], bb[LOOM_DTYPE_STRLEN];
  if (loom_dtype_eq(a->dtype, b->dtype))
    return LOOM_OK;
  loom_dtype ea = loom_dtype_with_lanes(a->dtype, 1);
  loom_dtype eb = loom_dtype_with_lanes(b->dtype, 1);
  if (a->dtype.lanes != b->dtype.lanes) {
    if (a->dtype.lanes == 1 && loom_dtype_eq(ea, eb))
      a = loom_ir_broadcast(c->a, a, b->dtype.lanes);
    else if (b->dtype.lanes == 1 && loom_dtype_eq(ea, eb))
      b = loom_ir_broadcast(c->a, b, a->dtype.lanes);
    if (!a || !b)
      return LOOM_NOMEM;
    *pa = a;
    *pb = b;
    if (loom_dtype_eq(a->dtype, b->dtype))
      return LOOM_OK;
  }
  if (same_family(ea, eb) && a->dtype.lanes == b->dtype.lanes &&
      (is_const(a) || is_const(b))) {
    if (ea.bits < eb.bits)
      a = rd_cast(c, b->dtype, a);
    else if (eb.bits < ea.bits)
      b = rd_cast(c, a->dtype, b);
    else if (is_const(a))
      a = rd_cast(c, b->dtype, a);
    else
      b = rd_cast(c, a->dtype, b);
    if (!a || !b)
      return LOOM_NOMEM;
    *pa = a;
    *pb = b;
    return LOOM_OK;
  }
  return rd_error(c, loc,
                  "dtype mismatch in '%s': %s vs %s; convert one side with "
                  "T.Cast(\"%s\", ...)",
                  op, dts(a->dtype, ba), dts(b->dtype, bb), ba);
}

/* Materializes the literal side of a binary operator with the dtype of the
 * other side. A float literal next to an integer makes the integer side
 * float32, as TVM does. */
loom_status rd_operands(rd_ctx *c, loom_loc loc, const char *op,
                        const rd_val *a, const rd_val *b, loom_expr **x,
                        loom_expr **y) {
  if (a->kind == RV_IR && b->kind == RV_IR) {
    *x = a->e;
    *y = b->e;
  } else {
    bool lit_is_a = a->kind != RV_IR;
    const rd_val *lit = lit_is_a ? a : b;
    loom_expr *ir = lit_is_a ? b->e : a->e;
    loom_dtype t = ir->dtype;
    loom_expr *l;
    if (lit->kind == RV_FLOAT && !loom_dtype_is_float(t) &&
        t.code != LOOM_DT_HANDLE) {
      t = loom_dtype_with_lanes(LOOM_FLOAT32, t.lanes);
      if (!(ir = rd_cast(c, t, ir)))
        return LOOM_NOMEM;
    }
    if (lit->kind == RV_BOOL && t.code != LOOM_DT_BOOL &&
        !loom_dtype_is_int(t) && !loom_dtype_is_float(t))
      t = LOOM_BOOL;
    TRY(rd_materialize(c, lit, &t, &l));
    *x = lit_is_a ? l : ir;
    *y = lit_is_a ? ir : l;
  }
  return rd_match_types(c, loc, op, x, y);
}

/* ---- Python-level folding of literals ------------------------------------ */

static bool is_lit(const rd_val *v) { return v->kind != RV_IR; }

static double lit_f(const rd_val *v) {
  return v->kind == RV_FLOAT ? v->f : (double)v->i;
}

static void set_int(rd_val *out, int64_t i, loom_loc loc) {
  out->kind = RV_INT;
  out->i = i;
  out->e = NULL;
  out->loc = loc;
}

static void set_float(rd_val *out, double f, loom_loc loc) {
  out->kind = RV_FLOAT;
  out->f = f;
  out->e = NULL;
  out->loc = loc;
}

static void set_bool(rd_val *out, bool b, loom_loc loc) {
  out->kind = RV_BOOL;
  out->i = b;
  out->e = NULL;
  out->loc = loc;
}

static int64_t floordiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    q--;
  return q;
}

static loom_status too_large(rd_ctx *c, loom_loc loc) {
  return rd_error(c, loc, "integer arithmetic overflows 64 bits");
}

static loom_status fold_int(rd_ctx *c, loom_loc loc, py_op op, int64_t x,
                            int64_t y, rd_val *out) {
  int64_t r = 0;
  switch (op) {
  case PY_OP_ADD:
    if (__builtin_add_overflow(x, y, &r))
      return too_large(c, loc);
    break;
  case PY_OP_SUB:
    if (__builtin_sub_overflow(x, y, &r))
      return too_large(c, loc);
    break;
  case PY_OP_MUL:
    if (__builtin_mul_overflow(x, y, &r))
      return too_large(c, loc);
    break;
  case PY_OP_FLOORDIV:
  case PY_OP_MOD:
    if (y == 0)
      return rd_error(c, loc, "division by zero");
    if (x == INT64_MIN && y == -1)
      return too_large(c, loc);
    r = floordiv64(x, y);
    if (op == PY_OP_MOD)
      r = x - r * y;
    break;
  case PY_OP_DIV:
    if (y == 0)
      return rd_error(c, loc, "division by zero");
    set_float(out, (double)x / (double)y, loc);
    return LOOM_OK;
  case PY_OP_POW:
    if (y < 0) {
      set_float(out, pow((double)x, (double)y), loc);
      return LOOM_OK;
    }
    r = 1;
    for (int64_t k = 0; k < y; k++) {
      if (__builtin_mul_overflow(r, x, &r))
        return too_large(c, loc);
      if (r == 0 || r == 1)
        break;
    }
    break;
  case PY_OP_LSHIFT:
    if (y < 0 || y > 62 ||
        (x != 0 && (x > (INT64_MAX >> y) || x < (INT64_MIN >> y))))
      return y < 0 ? rd_error(c, loc, "negative shift count")
                   : too_large(c, loc);
    r = x * (INT64_C(1) << y);
    break;
  case PY_OP_RSHIFT:
    if (y < 0)
      return rd_error(c, loc, "negative shift count");
    r = y > 63 ? (x < 0 ? -1 : 0) : x >> y;
    break;
  case PY_OP_BITAND: r = x & y; break;
  case PY_OP_BITOR: r = x | y; break;
  case PY_OP_BITXOR: r = x ^ y; break;
  case PY_OP_LT: set_bool(out, x < y, loc); return LOOM_OK;
  case PY_OP_LE: set_bool(out, x <= y, loc); return LOOM_OK;
  case PY_OP_GT: set_bool(out, x > y, loc); return LOOM_OK;
  case PY_OP_GE: set_bool(out, x >= y, loc); return LOOM_OK;
  case PY_OP_EQ: set_bool(out, x == y, loc); return LOOM_OK;
  case PY_OP_NE: set_bool(out, x != y, loc); return LOOM_OK;
  default:
    return rd_error(c, loc, "operator '%s' is not supported on numbers",
                    py_op_text(op));
  }
  set_int(out, r, loc);
  return LOOM_OK;
}

static loom_status fold_float(rd_ctx *c, loom_loc loc, py_op op, double x,
                              double y, rd_val *out) {
  switch (op) {
  case PY_OP_ADD: set_float(out, x + y, loc); return LOOM_OK;
  case PY_OP_SUB: set_float(out, x - y, loc); return LOOM_OK;
  case PY_OP_MUL: set_float(out, x * y, loc); return LOOM_OK;
  case PY_OP_DIV:
  case PY_OP_FLOORDIV:
  case PY_OP_MOD:
    if (y == 0)
      return rd_error(c, loc, "division by zero");
    if (op == PY_OP_DIV)
      set_float(out, x / y, loc);
    else if (op == PY_OP_FLOORDIV)
      set_float(out, floor(x / y), loc);
    else
      set_float(out, x - floor(x / y) * y, loc);
    return LOOM_OK;
  case PY_OP_POW: set_float(out, pow(x, y), loc); return LOOM_OK;
  case PY_OP_LT: set_bool(out, x < y, loc); return LOOM_OK;
  case PY_OP_LE: set_bool(out, x <= y, loc); return LOOM_OK;
  case PY_OP_GT: set_bool(out, x > y, loc); return LOOM_OK;
  case PY_OP_GE: set_bool(out, x >= y, loc); return LOOM_OK;
  case PY_OP_EQ: set_bool(out, x == y, loc); return LOOM_OK;
  case PY_OP_NE: set_bool(out, x != y, loc); return LOOM_OK;
  default:
    return rd_error(c, loc, "operator '%s' is not supported on floats",
                    py_op_text(op));
  }
}

static loom_status fold(rd_ctx *c, loom_loc loc, py_op op, const rd_val *a,
                        const rd_val *b, rd_val *out) {
  if (a->kind == RV_FLOAT || b->kind == RV_FLOAT)
    return fold_float(c, loc, op, lit_f(a), lit_f(b), out);
  return fold_int(c, loc, op, a->i, b->i, out);
}

/* ---- building operators -------------------------------------------------- */

loom_status rd_ir_val(loom_expr *e, loom_loc loc, rd_val *out) {
  if (!e)
    return LOOM_NOMEM;
  out->kind = RV_IR;
  out->e = e;
  out->loc = loc;
  return LOOM_OK;
}

static loom_expr_kind binop_kind(py_op op) {
  switch (op) {
  case PY_OP_ADD: return LOOM_EXPR_ADD;
  case PY_OP_SUB: return LOOM_EXPR_SUB;
  case PY_OP_MUL: return LOOM_EXPR_MUL;
  case PY_OP_DIV: return LOOM_EXPR_DIV;
  case PY_OP_FLOORDIV: return LOOM_EXPR_FLOORDIV;
  case PY_OP_MOD: return LOOM_EXPR_FLOORMOD;
  case PY_OP_LT: return LOOM_EXPR_LT;
  case PY_OP_LE: return LOOM_EXPR_LE;
  case PY_OP_GT: return LOOM_EXPR_GT;
  case PY_OP_GE: return LOOM_EXPR_GE;
  case PY_OP_EQ: return LOOM_EXPR_EQ;
  case PY_OP_NE: return LOOM_EXPR_NE;
  case PY_OP_AND: return LOOM_EXPR_AND;
  case PY_OP_OR: return LOOM_EXPR_OR;
  default: return LOOM_EXPR_COUNT_;
  }
}

static int binop_intrinsic(py_op op) {
  switch (op) {
  case PY_OP_POW: return LOOM_OP_POW;
  case PY_OP_LSHIFT: return LOOM_OP_SHIFT_LEFT;
  case PY_OP_RSHIFT: return LOOM_OP_SHIFT_RIGHT;
  case PY_OP_BITAND: return LOOM_OP_BITWISE_AND;
  case PY_OP_BITOR: return LOOM_OP_BITWISE_OR;
  case PY_OP_BITXOR: return LOOM_OP_BITWISE_XOR;
  default: return -1;
  }
}

static const char *kind_text(loom_expr_kind k) {
  switch (k) {
  case LOOM_EXPR_MIN: return "T.min";
  case LOOM_EXPR_MAX: return "T.max";
  case LOOM_EXPR_DIV: return "/";
  case LOOM_EXPR_MOD: return "T.truncmod";
  case LOOM_EXPR_FLOORDIV: return "//";
  case LOOM_EXPR_FLOORMOD: return "%";
  case LOOM_EXPR_ADD: return "+";
  case LOOM_EXPR_SUB: return "-";
  case LOOM_EXPR_MUL: return "*";
  case LOOM_EXPR_EQ: return "==";
  case LOOM_EXPR_NE: return "!=";
  case LOOM_EXPR_LT: return "<";
  case LOOM_EXPR_LE: return "<=";
  case LOOM_EXPR_GT: return ">";
  case LOOM_EXPR_GE: return ">=";
  case LOOM_EXPR_AND: return "and";
  case LOOM_EXPR_OR: return "or";
  default: return loom_expr_kind_name(k);
  }
}

loom_status rd_need_bool(rd_ctx *c, loom_loc loc, const char *what,
                         const loom_expr *e) {
  char b[LOOM_DTYPE_STRLEN];
  if (e->dtype.code == LOOM_DT_BOOL)
    return LOOM_OK;
  return rd_error(c, loc, "%s needs a bool operand, got %s", what,
                  dts(e->dtype, b));
}

/* Builds an IR binary node of kind k from two values, at least one IR. */
loom_status rd_ir_binary(rd_ctx *c, loom_loc loc, loom_expr_kind k,
                         const rd_val *a, const rd_val *b, rd_val *out) {
  const char *op = kind_text(k);
  loom_expr *x, *y;
  if (k == LOOM_EXPR_AND || k == LOOM_EXPR_OR) {
    char what[16];
    snprintf(what, sizeof what, "'%s'", op);
    if (a->kind == RV_IR)
      TRY(rd_need_bool(c, a->loc, what, a->e));
    if (b->kind == RV_IR)
      TRY(rd_need_bool(c, b->loc, what, b->e));
  }
  TRY(rd_operands(c, loc, op, a, b, &x, &y));
  char bx[LOOM_DTYPE_STRLEN];
  if ((x->dtype.code == LOOM_DT_HANDLE || x->dtype.code == LOOM_DT_VOID) &&
      k != LOOM_EXPR_EQ && k != LOOM_EXPR_NE)
    return rd_error(c, loc, "operator '%s' cannot take a %s operand", op,
                    dts(x->dtype, bx));
  return rd_ir_val(loom_ir_binary(c->a, k, x, y), loc, out);
}

static loom_status ir_intrinsic2(rd_ctx *c, loom_loc loc, loom_op op,
                                 const rd_val *a, const rd_val *b,
                                 rd_val *out) {
  loom_expr *x, *y;
  TRY(rd_operands(c, loc, loom_op_table[op].name, a, b, &x, &y));
  loom_expr *args[2] = {x, y};
  return rd_ir_val(loom_ir_call(c->a, x->dtype, op, args, 2), loc, out);
}

static loom_status binary(rd_ctx *c, loom_loc loc, py_op op, const rd_val *a,
                          const rd_val *b, rd_val *out) {
  if (op == PY_OP_AND || op == PY_OP_OR) {
    if (is_lit(a) && is_lit(b)) {
      bool ta = a->kind == RV_FLOAT ? a->f != 0 : a->i != 0;
      *out = (op == PY_OP_AND) == ta ? *b : *a; /* Python's and/or */
      return LOOM_OK;
    }
    return rd_ir_binary(c, loc, binop_kind(op), a, b, out);
  }
  if (is_lit(a) && is_lit(b))
    return fold(c, loc, op, a, b, out);
  if (op == PY_OP_MATMUL)
    return rd_error(c, loc, "operator '@' is not supported");
  int intrinsic = binop_intrinsic(op);
  if (intrinsic >= 0)
    return ir_intrinsic2(c, loc, (loom_op)intrinsic, a, b, out);
  loom_expr_kind k = binop_kind(op);
  if (k == LOOM_EXPR_COUNT_)
    return rd_error(c, loc, "operator '%s' is not supported in TensorIR",
                    py_op_text(op));
  return rd_ir_binary(c, loc, k, a, b, out);
}

/* ---- names, loads and subscripts ----------------------------------------- */

static loom_status eval_name(rd_ctx *c, const py_expr *e, rd_val *out) {
  const char *name = e->u.name;
  const rd_sym *s = name ? rd_lookup(c, name) : NULL;
  if (s && s->kind == SYM_VAR)
    return rd_ir_val(loom_ir_ref(c->a, s->var), e->loc, out);
  if (s && s->kind == SYM_BUFFER)
    return rd_error(c, e->loc,
                    "buffer '%s' is not a value; load an element as %s[...] or "
                    "take its pointer as %s.data",
                    name, name, name);
  if (!name)
    return rd_error(c, e->loc, "unknown name");
  if (c->define_unknown_names) {
    loom_dtype t = LOOM_INT32;
    for (int i = 0; i < c->declared.n; i++)
      if (!strcmp(RD_AT(c->declared, rd_declared, i).name, name))
        t = RD_AT(c->declared, rd_declared, i).dtype;
    loom_var *v = loom_ir_var(c->a, name, t);
    if (!v)
      return LOOM_NOMEM;
    TRY(rd_define_var(c, v->name, v));
    return rd_ir_val(loom_ir_ref(c->a, v), e->loc, out);
  }
  if (!strcmp(name, "T") || !strcmp(name, "I"))
    return rd_error(c, e->loc, "'%s' is a module, not a value", name);
  return rd_error(c, e->loc, "unknown name '%s'", name);
}

loom_status rd_indices(rd_ctx *c, const py_expr *sub, loom_buffer *b,
                       loom_expr ***out, int *n) {
  const py_expr *idx = sub->u.sub.index;
  py_expr *const *items = NULL;
  int k = 1;
  if (!idx)
    return rd_error(c, sub->loc, "missing index");
  if (idx->kind == PY_TUPLE) {
    items = idx->u.seq.items;
    k = idx->u.seq.n_items;
  }
  if (k != b->ndim)
    return rd_error(c, idx->loc,
                    "buffer '%s' has %d dimension%s, indexed with %d", b->name,
                    b->ndim, b->ndim == 1 ? "" : "s", k);
  loom_expr **xs =
      k ? loom_arena_alloc(c->a, sizeof(loom_expr *) * (size_t)k) : NULL;
  if (k && !xs)
    return LOOM_NOMEM;
  for (int i = 0; i < k; i++) {
    const py_expr *ie = items ? items[i] : idx;
    if (!ie)
      return rd_error(c, idx->loc, "missing index");
    if (ie->kind == PY_SLICE)
      return rd_error(c, ie->loc,
                      "a slice cannot be loaded or stored; slices belong in "
                      "T.reads, T.writes and T.match_buffer");
    TRY(rd_int_expr(c, ie, NULL, &xs[i]));
  }
  *out = xs;
  *n = k;
  return LOOM_OK;
}

loom_status rd_buffer_ref(rd_ctx *c, const py_expr *e, loom_buffer **out) {
  if (!e || e->kind != PY_NAME || !e->u.name)
    return rd_error(c, e ? e->loc : (loom_loc){c->file, 0, 0},
                    "expected a buffer name");
  const rd_sym *s = rd_lookup(c, e->u.name);
  if (!s)
    return rd_error(c, e->loc, "unknown buffer '%s'", e->u.name);
  if (s->kind != SYM_BUFFER)
    return rd_error(c, e->loc, "'%s' is a variable, not a buffer", e->u.name);
  *out = s->buffer;
  return LOOM_OK;
}

static loom_status eval_subscript(rd_ctx *c, const py_expr *e, rd_val *out) {
  loom_buffer *b;
  TRY(rd_buffer_ref(c, e->u.sub.value, &b));
  loom_expr **idx;
  int n;
  TRY(rd_indices(c, e, b, &idx, &n));
  return rd_ir_val(loom_ir_load(c->a, b, idx, n), e->loc, out);
}

static loom_status eval_attribute(rd_ctx *c, const py_expr *e, rd_val *out) {
  const py_expr *v = e->u.attr.value;
  const char *attr = e->u.attr.name ? e->u.attr.name : "";
  if (v && v->kind == PY_NAME && v->u.name) {
    const rd_sym *s = rd_lookup(c, v->u.name);
    if (s && s->kind == SYM_BUFFER) {
      if (!strcmp(attr, "data"))
        return rd_ir_val(loom_ir_ref(c->a, s->buffer->data), e->loc, out);
      /* A view's offset in elements, as the tensor intrinsics' fragment
       * indices and access pointers use it (0 for a buffer of its own). */
      if (!strcmp(attr, "elem_offset"))
        return rd_ir_val(s->buffer->elem_offset ? s->buffer->elem_offset
                                                : loom_ir_int(c->a, LOOM_INT32, 0),
                         e->loc, out);
      return rd_error(c, e->u.attr.name_loc,
                      "buffer '%s' has no field '%s' usable here; only "
                      "%s.data and %s.elem_offset are",
                      v->u.name, attr, v->u.name, v->u.name);
    }
  }
  char buf[96];
  const char *t = rd_t_name(e, buf, sizeof buf);
  if (t) {
    loom_dtype dt;
    if (loom_dtype_parse(t, strlen(t), &dt))
      return rd_error(c, e->loc,
                      "T.%s is a type; write T.%s(value) for a constant", t, t);
    return rd_error(c, e->loc, "T.%s is not a TVMScript value", t);
  }
  return rd_error(c, e->loc, "'.%s' is not supported here", attr);
}

/* ---- operators on values ------------------------------------------------- */

static loom_status eval_unary(rd_ctx *c, const py_expr *e, rd_val *out) {
  rd_val a;
  const py_expr *arg = e->u.unary.a;
  /* -9223372036854775808 is int64's minimum although its digits alone do
   * not fit: TVM prints T.int64(-9223372036854775808). */
  if (e->u.unary.op == PY_OP_NEG && arg->kind == PY_INT && arg->u.num.is_big &&
      arg->u.num.text && !strcmp(arg->u.num.text, "9223372036854775808")) {
    set_int(out, INT64_MIN, e->loc);
    return LOOM_OK;
  }
  TRY(rd_eval(c, arg, &a));
  py_op op = e->u.unary.op;
  loom_loc loc = e->loc;
  if (is_lit(&a)) {
    *out = a;
    out->loc = loc;
    switch (op) {
    case PY_OP_POS: return LOOM_OK;
    case PY_OP_NEG:
      if (a.kind == RV_FLOAT) {
        out->f = -a.f;
        return LOOM_OK;
      }
      if (a.i == INT64_MIN)
        return too_large(c, loc);
      set_int(out, -a.i, loc);
      return LOOM_OK;
    case PY_OP_INVERT:
      if (a.kind == RV_FLOAT)
        return rd_error(c, loc, "'~' needs an integer");
      set_int(out, ~a.i, loc);
      return LOOM_OK;
    case PY_OP_NOT:
      set_bool(out, a.kind == RV_FLOAT ? a.f == 0 : a.i == 0, loc);
      return LOOM_OK;
    default: return rd_error(c, loc, "unsupported unary operator");
    }
  }
  loom_expr *x = a.e;
  switch (op) {
  case PY_OP_POS: *out = a; return LOOM_OK;
  case PY_OP_NEG:
    /* TVM negates by multiplying with -1, folding constants. */
    if (x->kind == LOOM_EXPR_INT && x->u.int_value != INT64_MIN &&
        x->dtype.code == LOOM_DT_INT)
      return rd_ir_val(loom_ir_int(c->a, x->dtype, -x->u.int_value), loc, out);
    if (x->kind == LOOM_EXPR_FLOAT)
      return rd_ir_val(loom_ir_float(c->a, x->dtype, -x->u.float_value), loc,
                       out);
    if (loom_dtype_is_int(x->dtype) || loom_dtype_is_float(x->dtype)) {
      rd_val m;
      set_int(&m, -1, loc);
      return rd_ir_binary(c, loc, LOOM_EXPR_MUL, &a, &m, out);
    }
    return rd_error(c, loc, "'-' needs a number");
  case PY_OP_NOT:
    TRY(rd_need_bool(c, e->u.unary.a->loc, "'not'", x));
    return rd_ir_val(loom_ir_not(c->a, x), loc, out);
  case PY_OP_INVERT: {
    char b[LOOM_DTYPE_STRLEN];
    if (!loom_dtype_is_int(x->dtype))
      return rd_error(c, loc, "'~' needs an integer, got %s", dts(x->dtype, b));
    return rd_ir_val(loom_ir_call(c->a, x->dtype, LOOM_OP_BITWISE_NOT, &x, 1),
                     loc, out);
  }
  default: return rd_error(c, loc, "unsupported unary operator");
  }
}

static loom_status eval_compare(rd_ctx *c, const py_expr *e, rd_val *out) {
  int n = e->u.compare.n_ops;
  if (n < 1 || !e->u.compare.operands || !e->u.compare.ops)
    return rd_error(c, e->loc, "malformed comparison");
  rd_val left, acc;
  TRY(rd_eval(c, e->u.compare.operands[0], &left));
  for (int i = 0; i < n; i++) {
    py_op op = e->u.compare.ops[i];
    const py_expr *re = e->u.compare.operands[i + 1];
    if (!re)
      return rd_error(c, e->loc, "malformed comparison");
    if (op == PY_OP_IN || op == PY_OP_NOT_IN || op == PY_OP_IS ||
        op == PY_OP_IS_NOT)
      return rd_error(c, re->loc, "'%s' is not supported in TensorIR",
                      py_op_text(op));
    rd_val right, one;
    TRY(rd_eval(c, re, &right));
    TRY(binary(c, i == 0 ? e->loc : left.loc, op, &left, &right, &one));
    if (i == 0)
      acc = one;
    else
      TRY(binary(c, e->loc, PY_OP_AND, &acc, &one, &acc));
    left = right;
  }
  *out = acc;
  return LOOM_OK;
}

/* Two branches that must agree, a literal taking the other's dtype. */
loom_status rd_branches(rd_ctx *c, loom_loc loc, const char *what,
                        const py_expr *t, const py_expr *f, loom_expr **x,
                        loom_expr **y) {
  rd_val a, b;
  TRY(rd_eval(c, t, &a));
  TRY(rd_eval(c, f, &b));
  if (a.kind != RV_IR && b.kind != RV_IR) {
    TRY(rd_materialize(c, &a, NULL, x));
    TRY(rd_materialize(c, &b, NULL, y));
    return rd_match_types(c, loc, what, x, y);
  }
  return rd_operands(c, loc, what, &a, &b, x, y);
}

static loom_status eval_ifexp(rd_ctx *c, const py_expr *e, rd_val *out) {
  rd_val cond;
  TRY(rd_eval(c, e->u.ifexp.cond, &cond));
  if (is_lit(&cond)) {
    bool t = cond.kind == RV_FLOAT ? cond.f != 0 : cond.i != 0;
    return rd_eval(c, t ? e->u.ifexp.t : e->u.ifexp.f, out);
  }
  TRY(rd_need_bool(c, cond.loc, "a conditional expression", cond.e));
  loom_expr *x, *y;
  TRY(rd_branches(c, e->loc, "if-else", e->u.ifexp.t, e->u.ifexp.f, &x, &y));
  return rd_ir_val(loom_ir_select(c->a, cond.e, x, y), e->loc, out);
}

static bool is_chain_link(const py_expr *e) {
  return e && (e->kind == PY_BINOP || e->kind == PY_BOOLOP);
}

/* A left-nested chain of binary operators (a + b + c + ..., a and b and
 * ...), as generated code writes thousands of terms. The parser nests such
 * chains by their length, so the chain is walked down its left spine with a
 * heap stack rather than recursion, and only genuine nesting counts toward
 * the depth limit; the chain's own length has a separate, larger limit. */
static loom_status eval_chain(rd_ctx *c, const py_expr *e, rd_val *out) {
  int n = 0;
  for (const py_expr *x = e; is_chain_link(x); x = x->u.bin.a)
    if (++n > LOOM_SCRIPT_MAX_CHAIN)
      return rd_error(c, e->loc,
                      "chain of operators too long (limit is %d terms)",
                      LOOM_SCRIPT_MAX_CHAIN);
  const py_expr **links = malloc(sizeof *links * (size_t)n);
  if (!links)
    return LOOM_NOMEM;
  int k = 0;
  for (const py_expr *x = e; is_chain_link(x); x = x->u.bin.a)
    links[k++] = x;
  rd_val acc;
  loom_status st = rd_eval(c, links[n - 1]->u.bin.a, &acc);
  for (int i = n - 1; i >= 0 && st == LOOM_OK; i--) {
    const py_expr *link = links[i];
    py_op op = link->u.bin.op;
    if (link->kind == PY_BOOLOP && op != PY_OP_AND && op != PY_OP_OR) {
      st = rd_error(c, link->loc, "malformed boolean operator");
      break;
    }
    rd_val b, r;
    st = rd_eval(c, link->u.bin.b, &b);
    if (st == LOOM_OK)
      st = binary(c, link->loc, op, &acc, &b, &r);
    if (st == LOOM_OK && r.kind == RV_IR && !r.e)
      st = LOOM_NOMEM;
    acc = r;
  }
  free(links);
  if (st == LOOM_OK)
    *out = acc;
  return st;
}

static loom_status eval_kind(rd_ctx *c, const py_expr *e, rd_val *out) {
  switch (e->kind) {
  case PY_NAME: return eval_name(c, e, out);
  case PY_ATTRIBUTE: return eval_attribute(c, e, out);
  case PY_CALL: return rd_eval_call(c, e, out);
  case PY_SUBSCRIPT: return eval_subscript(c, e, out);
  case PY_INT:
    if (e->u.num.is_big)
      return rd_error(c, e->loc, "integer literal %s is too large",
                      e->u.num.text ? e->u.num.text : "");
    set_int(out, e->u.num.int_value, e->loc);
    return LOOM_OK;
  case PY_FLOAT: set_float(out, e->u.float_value, e->loc); return LOOM_OK;
  case PY_TRUE:
  case PY_FALSE: set_bool(out, e->kind == PY_TRUE, e->loc); return LOOM_OK;
  case PY_BINOP:
  case PY_BOOLOP: return eval_chain(c, e, out);
  case PY_UNARY: return eval_unary(c, e, out);
  case PY_COMPARE: return eval_compare(c, e, out);
  case PY_IFEXP: return eval_ifexp(c, e, out);
  case PY_STR:
    return rd_error(c, e->loc, "a string is not a TensorIR expression here");
  case PY_NONE: return rd_error(c, e->loc, "None is not a TensorIR expression");
  case PY_TUPLE:
  case PY_LIST:
    return rd_error(c, e->loc, "a %s is not a TensorIR expression here",
                    e->kind == PY_TUPLE ? "tuple" : "list");
  case PY_DICT:
    return rd_error(c, e->loc, "a dict is not a TensorIR expression here");
  case PY_LAMBDA:
    return rd_error(c, e->loc, "lambda is not supported in TensorIR");
  case PY_SLICE:
    return rd_error(c, e->loc,
                    "a slice belongs only in T.reads, T.writes and "
                    "T.match_buffer regions");
  }
  return rd_error(c, e->loc, "unsupported expression");
}

loom_status rd_eval(rd_ctx *c, const py_expr *e, rd_val *out) {
  if (!e)
    return rd_error(c, (loom_loc){c->file, 0, 0}, "missing expression");
  if (c->expr_depth >= LOOM_SCRIPT_MAX_DEPTH)
    return rd_error(c, e->loc, "expression nested too deeply (limit is %d)",
                    LOOM_SCRIPT_MAX_DEPTH);
  c->expr_depth++;
  loom_status st = eval_kind(c, e, out);
  c->expr_depth--;
  if (st == LOOM_OK && out->kind == RV_IR && !out->e)
    return LOOM_NOMEM;
  return st;
}

loom_status rd_expr(rd_ctx *c, const py_expr *e, const loom_dtype *want,
                    loom_expr **out) {
  rd_val v;
  TRY(rd_eval(c, e, &v));
  return rd_materialize(c, &v, want, out);
}

loom_status rd_int_expr(rd_ctx *c, const py_expr *e, const loom_dtype *want,
                        loom_expr **out) {
  TRY(rd_expr(c, e, want, out));
  char b[LOOM_DTYPE_STRLEN];
  if (!loom_dtype_is_int((*out)->dtype) || (*out)->dtype.lanes != 1) {
    if (loom_dtype_is_int((*out)->dtype) && (*out)->kind == LOOM_EXPR_RAMP)
      return LOOM_OK; /* a vector index */
    return rd_error(c, e->loc, "expected an integer, got %s",
                    dts((*out)->dtype, b));
  }
  return LOOM_OK;
}

loom_status rd_bool_expr(rd_ctx *c, const py_expr *e, loom_expr **out) {
  rd_val v;
  TRY(rd_eval(c, e, &v));
  if (v.kind == RV_INT && (v.i == 0 || v.i == 1))
    v.kind = RV_BOOL;
  loom_dtype t = LOOM_BOOL;
  TRY(rd_materialize(c, &v, v.kind == RV_IR ? NULL : &t, out));
  char b[LOOM_DTYPE_STRLEN];
  if ((*out)->dtype.code != LOOM_DT_BOOL)
    return rd_error(c, e->loc, "expected a bool condition, got %s",
                    dts((*out)->dtype, b));
  return LOOM_OK;
}

loom_status rd_const_int(rd_ctx *c, const py_expr *e, const char *what,
                         int64_t *out) {
  rd_val v;
  TRY(rd_eval(c, e, &v));
  if (v.kind == RV_INT || v.kind == RV_BOOL) {
    *out = v.i;
    return LOOM_OK;
  }
  if (v.kind == RV_IR && v.e->kind == LOOM_EXPR_INT) {
    *out = v.e->u.int_value;
    return LOOM_OK;
  }
  return rd_error(c, e->loc, "%s must be a constant integer", what);
}

/* ---- strings holding expressions ----------------------------------------- */

loom_status rd_parse_string_expr(rd_ctx *c, const py_expr *str,
                                 const py_expr **out) {
  const char *s = str->u.str ? str->u.str : "";
  loom_diag d;
  loom_diag_init(&d);
  py_module *m = NULL;
  loom_status st = py_parse(s, strlen(s), c->file, c->a, &m, &d);
  loom_diag_free(&d);
  if (st == LOOM_NOMEM)
    return st;
  if (st != LOOM_OK || !m || m->body.n_stmts != 1 || !m->body.stmts[0] ||
      m->body.stmts[0]->kind != PY_S_EXPR || !m->body.stmts[0]->u.expr)
    return rd_error(c, str->loc, "\"%s\" is not an expression", s);
  *out = m->body.stmts[0]->u.expr;
  return LOOM_OK;
}
