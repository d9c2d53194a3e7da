/* Rewrites over the block realizes of a subtree, shared by the loop
 * primitives: re-simplifying bindings after a substitution, and appending
 * a predicate to the outermost blocks under a loop. */
#include "schedule/rewrite.h"

#include <string.h>

/* Rebuilds s with every realize passed through fn, binding the constant
 * ranges of the loops on the way down in v->ctx (when set). */
loom_stmt *sched_visit_realizes(realize_visitor *v, loom_stmt *s) {
  if (!s)
    return NULL;
  loom_arena *a = v->a;
  if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
    loom_stmt *r = v->fn(v, s);
    if (!r || !v->descend_blocks)
      return r;
    loom_block *b = r->u.realize.block;
    loom_stmt *body = sched_visit_realizes(v, b->body);
    loom_stmt *init = b->init ? sched_visit_realizes(v, b->init) : NULL;
    if (!body || (b->init && !init))
      return NULL;
    if (body == b->body && init == b->init)
      return r;
    loom_block *nb = loom_arena_alloc(a, sizeof *nb);
    loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
    if (!nb || !nr)
      return NULL;
    *nb = *b;
    nb->body = body;
    nb->init = init;
    *nr = *r;
    nr->u.realize.block = nb;
    return nr;
  }
  if (s->kind == LOOM_STMT_FOR && v->ctx) {
    int64_t mn, ext;
    if (loom_ir_is_const_int(s->u.loop.min, &mn) &&
        loom_ir_is_const_int(s->u.loop.extent, &ext) && ext > 0) {
      loom_diag d;
      loom_diag_init(&d);
      loom_arith_bind(v->ctx, s->u.loop.var, mn, mn + ext - 1, &d);
      loom_diag_free(&d);
    }
  }
  if (s->kind == LOOM_STMT_SEQ) {
    loom_stmt **items = NULL;
    for (int i = 0; i < s->u.seq.n_stmts; i++) {
      loom_stmt *x = sched_visit_realizes(v, s->u.seq.stmts[i]);
      if (!x)
        return NULL;
      if (x != s->u.seq.stmts[i] && !items) {
        items = loom_arena_alloc(a, (size_t)s->u.seq.n_stmts * sizeof *items);
        if (!items)
          return NULL;
        memcpy(items, s->u.seq.stmts, (size_t)s->u.seq.n_stmts * sizeof *items);
      }
      if (items)
        items[i] = x;
    }
    if (!items)
      return s;
    loom_stmt *c = loom_arena_alloc(a, sizeof *c);
    if (!c)
      return NULL;
    *c = *s;
    c->u.seq.stmts = items;
    return c;
  }
  loom_stmt *kids[2];
  int k = sched_children(s, kids, 2);
  loom_stmt *cur = s;
  for (int i = 0; i < k; i++) {
    loom_stmt *x = sched_visit_realizes(v, kids[i]);
    if (!x)
      return NULL;
    if (x != kids[i]) {
      cur = sched_with_child(a, cur, kids[i], x);
      if (!cur)
        return NULL;
    }
  }
  return cur;
}

static bool uses_any(const loom_expr *e, loom_var *const *vars, int n) {
  for (int i = 0; i < n; i++)
    if (sched_expr_uses(e, vars[i]))
      return true;
  return false;
}

static loom_stmt *simplify_realize(realize_visitor *v, loom_stmt *r) {
  int n = r->u.realize.n_iter_values;
  loom_expr **vals = NULL;
  for (int i = 0; i < n; i++) {
    loom_expr *e = r->u.realize.iter_values[i];
    if (!uses_any(e, v->vars, v->n_vars))
      continue;
    loom_expr *s = sched_normalize(v->a, v->ctx, e);
    if (!s)
      return NULL;
    if (s == e)
      continue;
    if (!vals) {
      vals = loom_arena_alloc(v->a, (size_t)n * sizeof *vals);
      if (!vals)
        return NULL;
      memcpy(vals, r->u.realize.iter_values, (size_t)n * sizeof *vals);
    }
    vals[i] = s;
  }
  if (!vals)
    return r;
  loom_stmt *c = loom_arena_alloc(v->a, sizeof *c);
  if (!c)
    return NULL;
  *c = *r;
  c->u.realize.iter_values = vals;
  return c;
}

loom_stmt *sched_simplify_bindings(loom_arena *a, loom_arith_ctx *ctx,
                                   loom_stmt *s, loom_var *const *vars,
                                   int n_vars) {
  realize_visitor v = {.fn = simplify_realize, .a = a, .ctx = ctx,
                       .descend_blocks = true, .vars = vars, .n_vars = n_vars};
  return sched_visit_realizes(&v, s);
}

static loom_stmt *append_predicate(realize_visitor *v, loom_stmt *r) {
  loom_stmt *c = loom_arena_alloc(v->a, sizeof *c);
  if (!c)
    return NULL;
  *c = *r;
  loom_expr *old = r->u.realize.predicate;
  int64_t t;
  if (!old || (loom_ir_is_const_int(old, &t) && t))
    c->u.realize.predicate = v->pred;
  else
    c->u.realize.predicate = loom_ir_binary(v->a, LOOM_EXPR_AND, old, v->pred);
  return c->u.realize.predicate ? c : NULL;
}

loom_stmt *sched_append_predicate(loom_arena *a, loom_stmt *s,
                                  loom_expr *pred) {
  realize_visitor v = {.fn = append_predicate, .a = a, .pred = pred};
  return sched_visit_realizes(&v, s);
}
