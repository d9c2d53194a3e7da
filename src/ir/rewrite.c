/* Rebuilding expressions: the one walker every pass that substitutes
 * variables or redirects buffer accesses shares. Unchanged subtrees are
 * shared, never copied, so a rewrite that touches nothing costs a walk. */
#include "ir/walk.h"

#include <string.h>

/* A copy of e with operand i replaced by ops[i]. */
static loom_expr *with_operands(loom_arena *a, const loom_expr *e,
                                loom_expr **ops) {
  loom_expr *c = loom_arena_dup(a, e, sizeof *e);
  if (!c)
    return NULL;
  switch (walk_expr_class(e->kind)) {
  case WALK_IMM:
  case WALK_VAR: break;
  case WALK_UNARY: c->u.unary.a = ops[0]; break;
  case WALK_BROADCAST: c->u.broadcast.value = ops[0]; break;
  case WALK_BINARY: c->u.bin.a = ops[0]; c->u.bin.b = ops[1]; break;
  case WALK_LET: c->u.let.value = ops[0]; c->u.let.body = ops[1]; break;
  case WALK_RAMP: c->u.ramp.base = ops[0]; c->u.ramp.stride = ops[1]; break;
  case WALK_SELECT:
    c->u.select.cond = ops[0];
    c->u.select.t = ops[1];
    c->u.select.f = ops[2];
    break;
  case WALK_LOAD:
    c->u.load.indices = loom_arena_dup(a, ops, (size_t)e->u.load.n_indices * sizeof *ops);
    if (!c->u.load.indices)
      return NULL;
    break;
  case WALK_CALL:
    c->u.call.args = loom_arena_dup(a, ops, (size_t)e->u.call.n_args * sizeof *ops);
    if (!c->u.call.args)
      return NULL;
    break;
  }
  return c;
}

loom_expr *loom_ir_rewrite_expr(loom_arena *a, loom_expr *e,
                                loom_ir_expr_hook pre, void *ctx) {
  if (!e)
    return NULL;
  loom_expr *r = pre ? pre(ctx, e) : NULL;
  if (r)
    return r;
  int n = walk_expr_arity(e);
  if (n == 0)
    return e;
  loom_expr *small[8], **ops = small;
  if (n > 8 && !(ops = loom_arena_alloc(a, (size_t)n * sizeof *ops)))
    return NULL;
  bool changed = false;
  for (int i = 0; i < n; i++) {
    loom_expr *x = walk_expr_operand(e, i);
    ops[i] = loom_ir_rewrite_expr(a, x, pre, ctx);
    if (x && !ops[i])
      return NULL;
    changed |= ops[i] != x;
  }
  return changed ? with_operands(a, e, ops) : e;
}

typedef struct subst {
  loom_var *const *vars;
  loom_expr *const *values;
  int n;
} subst;

static loom_expr *subst_hook(void *ctx, loom_expr *e) {
  const subst *s = ctx;
  if (e->kind != LOOM_EXPR_VAR)
    return NULL;
  for (int i = 0; i < s->n; i++)
    if (s->vars[i] == e->u.var)
      return s->values[i];
  return e;
}

loom_expr *loom_ir_substitute_expr(loom_arena *a, loom_expr *e,
                                   loom_var *const *vars,
                                   loom_expr *const *values, int n) {
  subst s = {vars, values, n};
  return loom_ir_rewrite_expr(a, e, subst_hook, &s);
}

bool loom_ir_expr_uses(const loom_expr *e, const loom_var *v) {
  if (!e)
    return false;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
    return false;
  case LOOM_EXPR_VAR:
    return e->u.var == v;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    return loom_ir_expr_uses(e->u.unary.a, v);
  case LOOM_EXPR_SELECT:
    return loom_ir_expr_uses(e->u.select.cond, v) ||
           loom_ir_expr_uses(e->u.select.t, v) ||
           loom_ir_expr_uses(e->u.select.f, v);
  case LOOM_EXPR_LOAD:
    for (int i = 0; i < e->u.load.n_indices; i++)
      if (loom_ir_expr_uses(e->u.load.indices[i], v))
        return true;
    return false;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      if (loom_ir_expr_uses(e->u.call.args[i], v))
        return true;
    return false;
  case LOOM_EXPR_LET:
    return loom_ir_expr_uses(e->u.let.value, v) ||
           loom_ir_expr_uses(e->u.let.body, v);
  case LOOM_EXPR_RAMP:
    return loom_ir_expr_uses(e->u.ramp.base, v) ||
           loom_ir_expr_uses(e->u.ramp.stride, v);
  case LOOM_EXPR_BROADCAST:
    return loom_ir_expr_uses(e->u.broadcast.value, v);
  default:
    return loom_ir_expr_uses(e->u.bin.a, v) || loom_ir_expr_uses(e->u.bin.b, v);
  }
}
