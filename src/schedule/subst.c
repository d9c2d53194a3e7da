/* Substitution for the primitives: the ir's mutator (src/ir/mutate.c) with
 * a sched_map's variables and hooks, so that it reaches every statement
 * kind and shares every unchanged subtree. */
#include "schedule/sched_impl.h"

typedef struct hooks {
  const sched_map *m;
  loom_arena *a;
} hooks;

static loom_expr *on_load(void *ctx, loom_expr *e) {
  const hooks *h = ctx;
  return e->kind == LOOM_EXPR_LOAD ? h->m->on_load(h->m, h->a, e) : e;
}

static loom_block *on_block(void *ctx, const loom_block *old, loom_block *b) {
  const hooks *h = ctx;
  return h->m->on_block(h->m, h->a, old, b);
}

static loom_stmt *on_stmt(void *ctx, loom_stmt *s) {
  const hooks *h = ctx;
  return h->m->on_stmt(h->m, h->a, s);
}

static loom_ir_mutator mutator(const hooks *h) {
  const sched_map *m = h->m;
  return (loom_ir_mutator){.vars = m->vars,
                           .values = m->values,
                           .n_vars = m->n,
                           .expr_post = m->on_load ? on_load : NULL,
                           .stmt_post = m->on_stmt ? on_stmt : NULL,
                           .block_post = m->on_block ? on_block : NULL,
                           .ctx = (void *)h};
}

loom_expr *sched_subst_expr(loom_arena *a, loom_expr *e, const sched_map *m) {
  hooks h = {m, a};
  loom_ir_mutator t = mutator(&h);
  return loom_ir_mutate_expr(a, &t, e);
}

loom_stmt *sched_subst_stmt(loom_arena *a, loom_stmt *s, const sched_map *m) {
  hooks h = {m, a};
  loom_ir_mutator t = mutator(&h);
  return loom_ir_mutate_stmt(a, &t, s);
}

bool sched_expr_uses(const loom_expr *e, const loom_var *v) {
  return loom_ir_expr_uses(e, v);
}
