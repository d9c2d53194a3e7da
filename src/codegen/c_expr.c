/* Expressions to C. Every operator is parenthesized, so no precedence
 * question arises; results narrower than int are cast back to their type,
 * which wraps them as TensorIR's integers wrap, and wider ones computed
 * from memory wrap through unsigned arithmetic. */
#include "codegen/codegen_impl.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

static bool is_half(loom_dtype t) {
  return (t.code == LOOM_DT_FLOAT && t.bits == 16) || t.code == LOOM_DT_BFLOAT;
}

/* The prelude's rounding function for a 16-bit float type, of a float
 * operand (16-bit arithmetic is computed in float). */
static const char *round_fn(loom_dtype t) {
  return t.code == LOOM_DT_BFLOAT ? "loom_bf16r" : "loom_f16rf";
}

/* True when C's arithmetic on t does not already wrap to t's width:
 * operands narrower than int are promoted. */
static bool needs_wrap(loom_dtype t) {
  return loom_dtype_is_int(t) && t.bits < 32;
}

static void emit_float_const(emitter *E, loom_dtype t, double v) {
  bool is_single = t.bits != 64;
  if (isnan(v)) {
    put(E, is_single ? "NAN" : "(double)NAN");
    return;
  }
  if (isinf(v)) {
    put(E, v < 0 ? "(-INFINITY)" : "INFINITY");
    return;
  }
  char buf[64];
  snprintf(buf, sizeof buf, is_single ? "%.9g" : "%.17g", v);
  if (!strpbrk(buf, ".en"))
    strcat(buf, ".0");
  loom_buf_printf(E->out, "%s%s%s%s", v < 0 ? "(" : "", buf, is_single ? "f" : "",
                  v < 0 ? ")" : "");
}

static void emit_int_const(emitter *E, loom_dtype t, int64_t v) {
  if (t.code == LOOM_DT_BOOL) {
    put(E, v ? "true" : "false");
  } else if (t.code == LOOM_DT_UINT) {
    uint64_t u = t.bits >= 64 ? (uint64_t)v : (uint64_t)v & ((UINT64_C(1) << t.bits) - 1);
    if (t.bits == 64)
      loom_buf_printf(E->out, "UINT64_C(%" PRIu64 ")", u);
    else if (t.bits == 32)
      loom_buf_printf(E->out, "%" PRIu64 "u", u);
    else
      loom_buf_printf(E->out, "((%s)%" PRIu64 "u)", emit_value_type(t), u);
  } else if (t.code != LOOM_DT_INT) {
    emit_float_const(E, t, (double)v);
  } else if (t.bits == 64) {
    if (v == INT64_MIN)
      put(E, "INT64_MIN");
    else
      loom_buf_printf(E->out, "INT64_C(%" PRId64 ")", v);
  } else if (t.bits == 32) {
    if (v == INT32_MIN)
      put(E, "INT32_MIN");
    else
      loom_buf_printf(E->out, v < 0 ? "(%" PRId64 ")" : "%" PRId64, v);
  } else {
    loom_buf_printf(E->out, "((%s)%" PRId64 ")", emit_value_type(t), v);
  }
}

/* helper(a, b) with the prelude's suffix for t: loom_floordiv_i32(a, b). */
static void emit_helper2(emitter *E, const char *name, loom_dtype t,
                         const loom_expr *a, const loom_expr *b) {
  loom_buf_printf(E->out, "loom_%s_%s(", name, emit_suffix(t));
  emit_expr(E, a);
  put(E, ", ");
  emit_expr(E, b);
  put(E, ")");
}

static void emit_infix(emitter *E, const char *op, const loom_expr *a,
                       const loom_expr *b) {
  put(E, "(");
  emit_expr(E, a);
  loom_buf_printf(E->out, " %s ", op);
  emit_expr(E, b);
  put(E, ")");
}

bool emit_is_data(emitter *E, const loom_expr *e) {
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR: return false;
  case LOOM_EXPR_VAR: return loom_ptrmap_get(&E->data_vars, e->u.var) >= 0;
  case LOOM_EXPR_LOAD:
  case LOOM_EXPR_CALL: return true;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST: return emit_is_data(E, e->u.unary.a);
  case LOOM_EXPR_SELECT:
    return emit_is_data(E, e->u.select.cond) || emit_is_data(E, e->u.select.t) ||
           emit_is_data(E, e->u.select.f);
  case LOOM_EXPR_LET:
    return emit_is_data(E, e->u.let.value) || emit_is_data(E, e->u.let.body);
  case LOOM_EXPR_RAMP:
  case LOOM_EXPR_BROADCAST: return true; /* not after lowering */
  default: return emit_is_data(E, e->u.bin.a) || emit_is_data(E, e->u.bin.b);
  }
}

static bool is_nonneg(emitter *E, const loom_expr *e, int depth);

/* A let of a non-negative index (a thread index, in a kernel) is one too. */
void emit_bind_let(emitter *E, const loom_var *v, const loom_expr *value) {
  if (emit_is_data(E, value) && loom_ptrmap_put(&E->data_vars, v, 1) != LOOM_OK)
    emit_error(E, "out of memory");
  else if (loom_dtype_is_int(v->dtype) && is_nonneg(E, value, 0) &&
           loom_ptrmap_put(&E->nonneg, v, 1) != LOOM_OK)
    emit_error(E, "out of memory");
}

/* a op b for signed integers of 32 or 64 bits, wrapping: C leaves their
 * overflow undefined. */
static void emit_wrapping(emitter *E, const char *op, loom_dtype t,
                          const loom_expr *a, const loom_expr *b) {
  const char *u = t.bits == 64 ? "uint64_t" : "uint32_t";
  loom_buf_printf(E->out, "((%s)((%s)", emit_value_type(t), u);
  emit_expr(E, a);
  loom_buf_printf(E->out, " %s (%s)", op, u);
  emit_expr(E, b);
  put(E, "))");
}

/* Is the index expression e surely non-negative: built by + * // % from
 * non-negative constants and loop variables that count up from 0 or
 * more? (Not data: a loaded value may be anything.) */
static bool is_nonneg(emitter *E, const loom_expr *e, int depth) {
  int64_t v;
  if (depth > 16)
    return false;
  switch (e->kind) {
  case LOOM_EXPR_INT: return loom_ir_is_const_int(e, &v) && v >= 0;
  case LOOM_EXPR_VAR: return loom_ptrmap_get(&E->nonneg, e->u.var) >= 0;
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_MUL:
  case LOOM_EXPR_FLOORDIV:
  case LOOM_EXPR_FLOORMOD:
    return is_nonneg(E, e->u.bin.a, depth + 1) && is_nonneg(E, e->u.bin.b, depth + 1);
  default: return false;
  }
}

/* Floor division and modulo of a non-negative index by a positive
 * constant are C's / and %: plain arithmetic the C compiler hoists out of
 * loops and turns into shifts, where the helper's sign tests stay in the
 * innermost loop. */
static bool is_plain_floor(emitter *E, const loom_expr *e) {
  int64_t v;
  return (e->kind == LOOM_EXPR_FLOORDIV || e->kind == LOOM_EXPR_FLOORMOD) &&
         e->dtype.code == LOOM_DT_INT && e->dtype.bits >= 32 &&
         loom_ir_is_const_int(e->u.bin.b, &v) && v > 0 && !emit_is_data(E, e) &&
         is_nonneg(E, e->u.bin.a, 0);
}

static void emit_binary(emitter *E, const loom_expr *e) {
  loom_dtype t = e->u.bin.a->dtype;
  const loom_expr *a = e->u.bin.a, *b = e->u.bin.b;
  bool is_float = loom_dtype_is_float(t);
  const char *op = NULL, *helper = NULL;
  if (is_plain_floor(E, e)) {
    emit_infix(E, e->kind == LOOM_EXPR_FLOORDIV ? "/" : "%", a, b);
    return;
  }
  switch (e->kind) {
  case LOOM_EXPR_ADD: op = "+"; break;
  case LOOM_EXPR_SUB: op = "-"; break;
  case LOOM_EXPR_MUL: op = "*"; break;
  case LOOM_EXPR_DIV: if (is_float) op = "/"; else helper = "truncdiv"; break;
  case LOOM_EXPR_MOD: helper = "truncmod"; break;
  case LOOM_EXPR_FLOORDIV: helper = "floordiv"; break;
  case LOOM_EXPR_FLOORMOD: helper = "floormod"; break;
  case LOOM_EXPR_MIN: helper = "min"; break;
  case LOOM_EXPR_MAX: helper = "max"; break;
  case LOOM_EXPR_EQ: emit_infix(E, "==", a, b); return;
  case LOOM_EXPR_NE: emit_infix(E, "!=", a, b); return;
  case LOOM_EXPR_LT: emit_infix(E, "<", a, b); return;
  case LOOM_EXPR_LE: emit_infix(E, "<=", a, b); return;
  case LOOM_EXPR_GT: emit_infix(E, ">", a, b); return;
  case LOOM_EXPR_GE: emit_infix(E, ">=", a, b); return;
  case LOOM_EXPR_AND: emit_infix(E, "&&", a, b); return;
  case LOOM_EXPR_OR: emit_infix(E, "||", a, b); return;
  default: break;
  }
  if (t.code == LOOM_DT_BOOL) {
    emit_error(E, "%s on bool operands", loom_expr_kind_name(e->kind));
    return;
  }
  if (op && t.code == LOOM_DT_INT && t.bits >= 32 && emit_is_data(E, e)) {
    emit_wrapping(E, op, t, a, b);
    return;
  }
  /* 16-bit floats compute in float (exact for + - * /: float has more than
   * twice their precision) and round after every operation. */
  if (is_half(t))
    loom_buf_printf(E->out, "%s(", round_fn(t));
  else if (needs_wrap(t))
    loom_buf_printf(E->out, "((%s)", emit_value_type(t));
  loom_dtype ht = t;
  if (is_half(t))
    ht = LOOM_FLOAT32;
  if (op)
    emit_infix(E, op, a, b);
  else
    emit_helper2(E, helper, ht, a, b);
  if (is_half(t) || needs_wrap(t))
    put(E, ")");
}

static void emit_cast(emitter *E, const loom_expr *e) {
  loom_dtype to = e->dtype, from = e->u.unary.a->dtype;
  const loom_expr *x = e->u.unary.a;
  if (to.code == LOOM_DT_BOOL) {
    put(E, "(");
    emit_expr(E, x);
    put(E, " != 0)");
  } else if (loom_dtype_is_float(from) && loom_dtype_is_int(to)) {
    loom_buf_printf(E->out, "loom_f2i_%s(", emit_suffix(to));
    emit_expr(E, x);
    put(E, ")");
  } else if (is_half(to) && to.code == LOOM_DT_FLOAT && from.code == LOOM_DT_FLOAT &&
             from.bits <= 32) {
    put(E, "loom_f16rf((float)"); /* exact in float: one rounding */
    emit_expr(E, x);
    put(E, ")");
  } else if (is_half(to)) {
    /* From double or an integer: rounded once, from the exact value. */
    loom_buf_printf(E->out, "%s((double)", to.code == LOOM_DT_BFLOAT ? "loom_bf16r" : "loom_f16r");
    emit_expr(E, x);
    put(E, ")");
  } else {
    loom_buf_printf(E->out, "((%s)", emit_value_type(to));
    emit_expr(E, x);
    put(E, ")");
  }
}

static void emit_load(emitter *E, const loom_expr *e) {
  const loom_buffer *b = e->u.load.buffer;
  if (e->u.load.n_indices != 1) {
    emit_error(E, "access to '%s' is not flattened", b->name);
    return;
  }
  loom_dtype t = b->dtype;
  const char *wrap = t.code == LOOM_DT_BFLOAT ? "loom_bf16_load("
                   : is_half(t) ? "loom_f16_load(" : "";
  put(E, wrap);
  if (t.code == LOOM_DT_BOOL)
    put(E, "(");
  int reg = 0;
  while (reg < E->n_vec_loads && E->vec_loads[reg] != e)
    reg++;
  if (reg < E->n_vec_loads) {
    put(E, E->vec_elems[reg]);
  } else {
    loom_buf_printf(E->out, "%s[", emit_name(E, b->data));
    emit_expr(E, e->u.load.indices[0]);
    put(E, "]");
  }
  if (t.code == LOOM_DT_BOOL)
    put(E, " != 0)");
  if (*wrap)
    put(E, ")");
}

/* The C math function for op on float (f) or double (d); NULL when op is
 * not a plain one-to-one math function. */
static const char *math_fn(loom_op op, bool is_single) {
  static const struct { loom_op op; const char *f, *d; } table[] = {
      {LOOM_OP_EXP, "expf", "exp"},       {LOOM_OP_EXP2, "exp2f", "exp2"},
      {LOOM_OP_LOG, "logf", "log"},       {LOOM_OP_LOG2, "log2f", "log2"},
      {LOOM_OP_LOG10, "log10f", "log10"}, {LOOM_OP_LOG1P, "log1pf", "log1p"},
      {LOOM_OP_SQRT, "sqrtf", "sqrt"},    {LOOM_OP_TANH, "tanhf", "tanh"},
      {LOOM_OP_ERF, "erff", "erf"},       {LOOM_OP_POW, "powf", "pow"},
      {LOOM_OP_FABS, "fabsf", "fabs"},    {LOOM_OP_FLOOR, "floorf", "floor"},
      {LOOM_OP_CEIL, "ceilf", "ceil"},    {LOOM_OP_ROUND, "roundf", "round"},
      {LOOM_OP_NEARBYINT, "nearbyintf", "nearbyint"},
      {LOOM_OP_TRUNC, "truncf", "trunc"}, {LOOM_OP_SIN, "sinf", "sin"},
      {LOOM_OP_COS, "cosf", "cos"},       {LOOM_OP_TAN, "tanf", "tan"},
      {LOOM_OP_ASIN, "asinf", "asin"},    {LOOM_OP_ACOS, "acosf", "acos"},
      {LOOM_OP_ATAN, "atanf", "atan"},    {LOOM_OP_ATAN2, "atan2f", "atan2"},
      {LOOM_OP_SINH, "sinhf", "sinh"},    {LOOM_OP_COSH, "coshf", "cosh"},
      {LOOM_OP_FMOD, "fmodf", "fmod"},
  };
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (table[i].op == op)
      return is_single ? table[i].f : table[i].d;
  return NULL;
}

static void emit_args(emitter *E, const loom_expr *e) {
  for (int i = 0; i < e->u.call.n_args; i++) {
    if (i)
      put(E, ", ");
    emit_expr(E, e->u.call.args[i]);
  }
}

static bool is_float_math(loom_op op) {
  return math_fn(op, true) || op == LOOM_OP_EXP10 || op == LOOM_OP_RSQRT ||
         op == LOOM_OP_SIGMOID;
}

/* Math on floats: computed in float or double, 16-bit floats rounded back.
 * Returns false when op is not a float math function. */
static bool emit_float_math(emitter *E, const loom_expr *e, loom_dtype t) {
  loom_op op = e->u.call.op;
  if (!is_float_math(op))
    return false;
  bool is_single = t.bits != 64;
  const char *fn = math_fn(op, is_single);
  const char *one = is_single ? "1.0f" : "1.0";
  if (is_half(t))
    loom_buf_printf(E->out, "%s(", round_fn(t));
  if (fn) {
    loom_buf_printf(E->out, "%s(", fn);
    emit_args(E, e);
    put(E, ")");
  } else if (op == LOOM_OP_EXP10) {
    loom_buf_printf(E->out, "%s(10.0%s, ", is_single ? "powf" : "pow", is_single ? "f" : "");
    emit_args(E, e);
    put(E, ")");
  } else if (op == LOOM_OP_RSQRT) {
    loom_buf_printf(E->out, "(%s / %s(", one, is_single ? "sqrtf" : "sqrt");
    emit_args(E, e);
    put(E, "))");
  } else { /* SIGMOID */
    loom_buf_printf(E->out, "(%s / (%s + %s(-", one, one, is_single ? "expf" : "exp");
    emit_args(E, e);
    put(E, ")))");
  }
  if (is_half(t))
    put(E, ")");
  return true;
}

/* Bit operations on integers, wrapped to the width. */
static bool emit_int_op(emitter *E, const loom_expr *e, loom_dtype t) {
  const loom_expr *const *x = (const loom_expr *const *)e->u.call.args;
  const char *ty = emit_value_type(t);
  int bits = t.code == LOOM_DT_BOOL ? 1 : t.bits;
  switch (e->u.call.op) {
  case LOOM_OP_BITWISE_AND: loom_buf_printf(E->out, "((%s)", ty); emit_infix(E, "&", x[0], x[1]); break;
  case LOOM_OP_BITWISE_OR: loom_buf_printf(E->out, "((%s)", ty); emit_infix(E, "|", x[0], x[1]); break;
  case LOOM_OP_BITWISE_XOR: loom_buf_printf(E->out, "((%s)", ty); emit_infix(E, "^", x[0], x[1]); break;
  case LOOM_OP_BITWISE_NOT: loom_buf_printf(E->out, "((%s)~", ty); emit_expr(E, x[0]); break;
  case LOOM_OP_SHIFT_LEFT: emit_helper2(E, "shl", t, x[0], x[1]); return true;
  case LOOM_OP_SHIFT_RIGHT: emit_helper2(E, "shr", t, x[0], x[1]); return true;
  case LOOM_OP_POPCOUNT:
    loom_buf_printf(E->out, "((%s)__builtin_popcountll((uint64_t)", ty);
    emit_expr(E, x[0]);
    loom_buf_printf(E->out, " & UINT64_C(0x%llx))",
                    bits >= 64 ? ~0ULL : (1ULL << bits) - 1);
    break;
  case LOOM_OP_CLZ:
    loom_buf_printf(E->out, "((%s)loom_clz((uint64_t)", ty);
    emit_expr(E, x[0]);
    loom_buf_printf(E->out, ", %d)", bits);
    break;
  case LOOM_OP_FABS:
    loom_buf_printf(E->out, "((%s)(", ty);
    emit_expr(E, x[0]);
    put(E, " < 0 ? -");
    emit_expr(E, x[0]);
    put(E, " : ");
    emit_expr(E, x[0]);
    put(E, ")");
    break;
  default: return false;
  }
  put(E, ")");
  return true;
}

static void emit_call(emitter *E, const loom_expr *e) {
  loom_op op = e->u.call.op;
  const loom_expr *const *x = (const loom_expr *const *)e->u.call.args;
  int n = e->u.call.n_args;
  loom_dtype t = n > 0 ? x[0]->dtype : e->dtype;
  if (E->is_cuda && loom_op_is_wmma(op)) {
    emit_wmma_call(E, e);
    return;
  }
  switch (op) {
  case LOOM_OP_IF_THEN_ELSE:
    put(E, "(");
    emit_expr(E, x[0]);
    put(E, " ? ");
    emit_expr(E, x[1]);
    put(E, " : ");
    emit_expr(E, x[2]);
    put(E, ")");
    return;
  case LOOM_OP_LIKELY:
    emit_expr(E, x[0]);
    return;
  case LOOM_OP_ISNAN: case LOOM_OP_ISINF: case LOOM_OP_ISFINITE:
    loom_buf_printf(E->out, "(%s((double)", op == LOOM_OP_ISNAN ? "isnan"
                    : op == LOOM_OP_ISINF ? "isinf" : "isfinite");
    emit_expr(E, x[0]);
    put(E, ") != 0)");
    return;
  case LOOM_OP_Q_MULTIPLY_SHIFT:
    put(E, "loom_q_multiply_shift(");
    emit_args(E, e);
    put(E, ")");
    return;
  case LOOM_OP_REINTERPRET: {
    loom_dtype to = e->dtype;
    if (is_half(t) || is_half(to) || t.bits != to.bits) {
      emit_error(E, "T.reinterpret between %d-bit and %d-bit or 16-bit float "
                 "types", t.bits, to.bits);
      return;
    }
    loom_buf_printf(E->out, "LOOM_BITS(%s, %s, ", emit_value_type(to), emit_value_type(t));
    emit_expr(E, x[0]);
    put(E, ")");
    return;
  }
  default: break;
  }
  if (loom_dtype_is_float(t)) {
    if (emit_float_math(E, e, t))
      return;
  } else if (emit_int_op(E, e, t)) {
    return;
  } else if (is_float_math(op)) {
    /* Math on integers: in double, converted back as a cast would. */
    loom_buf_printf(E->out, "loom_f2i_%s(", emit_suffix(t));
    emit_float_math(E, e, LOOM_DTYPE(LOOM_DT_FLOAT, 64, 1));
    put(E, ")");
    return;
  }
  bool is_extern = op == LOOM_OP_CALL_EXTERN || op == LOOM_OP_CALL_PURE_EXTERN;
  if (is_extern && E->is_cuda && n > 0 && x[0]->kind == LOOM_EXPR_STR &&
      !strncmp(x[0]->u.str, "__", 2)) {
    /* CUDA's own functions (__syncthreads, __shfl_down_sync, ...), which
     * every kernel can call; anything else would need a definition. */
    loom_buf_printf(E->out, "%s(", x[0]->u.str);
    for (int i = 1; i < n; i++) {
      if (i > 1)
        put(E, ", ");
      emit_expr(E, x[i]);
    }
    put(E, ")");
    return;
  }
  if (is_extern)
    emit_error(E, "the %s backend cannot call extern function %s", E->is_cuda ? "CUDA" : "C",
               n > 0 && x[0]->kind == LOOM_EXPR_STR ? x[0]->u.str : "?");
  else
    emit_error(E, "the C backend does not support T.%s on %s operands",
               loom_op_table[op].name, loom_dtype_is_float(t) ? "float" : "integer");
}

void emit_expr(emitter *E, const loom_expr *e) {
  if (!e || E->st != LOOM_OK)
    return;
  switch (e->kind) {
  case LOOM_EXPR_INT: emit_int_const(E, e->dtype, e->u.int_value); return;
  case LOOM_EXPR_FLOAT: emit_float_const(E, e->dtype, e->u.float_value); return;
  case LOOM_EXPR_VAR: put(E, emit_name(E, e->u.var)); return;
  case LOOM_EXPR_NOT: put(E, "(!"); emit_expr(E, e->u.unary.a); put(E, ")"); return;
  case LOOM_EXPR_CAST: emit_cast(E, e); return;
  case LOOM_EXPR_SELECT:
    put(E, "(");
    emit_expr(E, e->u.select.cond);
    put(E, " ? ");
    emit_expr(E, e->u.select.t);
    put(E, " : ");
    emit_expr(E, e->u.select.f);
    put(E, ")");
    return;
  case LOOM_EXPR_LOAD: emit_load(E, e); return;
  case LOOM_EXPR_CALL: emit_call(E, e); return;
  case LOOM_EXPR_LET:
    emit_bind_let(E, e->u.let.var, e->u.let.value);
    loom_buf_printf(E->out, "({ %s %s = ", emit_value_type(e->u.let.var->dtype),
                    emit_name(E, e->u.let.var));
    emit_expr(E, e->u.let.value);
    put(E, "; ");
    emit_expr(E, e->u.let.body);
    put(E, "; })");
    return;
  case LOOM_EXPR_STR:
    emit_error(E, "a string where a value is needed");
    return;
  case LOOM_EXPR_RAMP:
  case LOOM_EXPR_BROADCAST:
    emit_error(E, "a vector expression left after lowering");
    return;
  default: emit_binary(E, e); return;
  }
}
