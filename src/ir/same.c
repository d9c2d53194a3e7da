/* Syntactic equality: the same tree, variables and buffers by identity
 * (TVM's ExprDeepEqual). Passes merging like terms and comparing indices
 * ask it; structural equality modulo renaming is src/ir/equal.c. */
#include "loom/ir.h"

#include <string.h>

/* Deeper trees compare unequal, which every caller reads as "not known to
 * be equal": sound, and no input exhausts the stack. */
#define SAME_MAX_DEPTH (4 * 200)

static bool same(const loom_expr *a, const loom_expr *b, int depth) {
  if (a == b)
    return true;
  if (!a || !b || depth > SAME_MAX_DEPTH || a->kind != b->kind ||
      !loom_dtype_eq(a->dtype, b->dtype))
    return false;
  switch (a->kind) {
  case LOOM_EXPR_INT: return a->u.int_value == b->u.int_value;
  case LOOM_EXPR_FLOAT: return a->u.float_value == b->u.float_value;
  case LOOM_EXPR_STR: return a->u.str && b->u.str && !strcmp(a->u.str, b->u.str);
  case LOOM_EXPR_VAR: return a->u.var == b->u.var;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST: return same(a->u.unary.a, b->u.unary.a, depth + 1);
  case LOOM_EXPR_SELECT:
    return same(a->u.select.cond, b->u.select.cond, depth + 1) &&
           same(a->u.select.t, b->u.select.t, depth + 1) &&
           same(a->u.select.f, b->u.select.f, depth + 1);
  case LOOM_EXPR_LOAD:
    if (a->u.load.buffer != b->u.load.buffer ||
        a->u.load.n_indices != b->u.load.n_indices)
      return false;
    for (int i = 0; i < a->u.load.n_indices; i++)
      if (!same(a->u.load.indices[i], b->u.load.indices[i], depth + 1))
        return false;
    return true;
  case LOOM_EXPR_CALL:
    if (a->u.call.op != b->u.call.op || a->u.call.n_args != b->u.call.n_args)
      return false;
    for (int i = 0; i < a->u.call.n_args; i++)
      if (!same(a->u.call.args[i], b->u.call.args[i], depth + 1))
        return false;
    return true;
  case LOOM_EXPR_LET:
    return a->u.let.var == b->u.let.var &&
           same(a->u.let.value, b->u.let.value, depth + 1) &&
           same(a->u.let.body, b->u.let.body, depth + 1);
  case LOOM_EXPR_RAMP:
    return a->u.ramp.lanes == b->u.ramp.lanes &&
           same(a->u.ramp.base, b->u.ramp.base, depth + 1) &&
           same(a->u.ramp.stride, b->u.ramp.stride, depth + 1);
  case LOOM_EXPR_BROADCAST:
    return a->u.broadcast.lanes == b->u.broadcast.lanes &&
           same(a->u.broadcast.value, b->u.broadcast.value, depth + 1);
  default: /* binary */
    return same(a->u.bin.a, b->u.bin.a, depth + 1) &&
           same(a->u.bin.b, b->u.bin.b, depth + 1);
  }
}

bool loom_ir_same_expr(const loom_expr *a, const loom_expr *b) {
  return same(a, b, 0);
}
