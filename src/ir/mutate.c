/* The rebuilding walk every pass that substitutes variables, redirects
 * buffer accesses or replaces statements shares (ir.h gives the order of
 * children). Unchanged subtrees are shared, never copied, so a rewrite that
 * touches nothing costs a walk. Its switch over statement kinds has no
 * default case, so a new kind that it does not rebuild fails to compile. */
#include "ir/walk.h"

#include <string.h>

typedef struct mut {
  loom_arena *a;
  const loom_ir_mutator *m;
  bool has_exprs;  /* some part of m may change an expression */
  bool has_failed; /* out of memory: every call from here returns its input */
} mut;

static void *fail(mut *t) {
  t->has_failed = true;
  return NULL;
}

/* ---- expressions ------------------------------------------------------------ */

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

/* The replacement of e before its operands: a substituted variable or
 * expr_pre's answer; NULL to go on. */
static loom_expr *replaced(const mut *t, loom_expr *e) {
  const loom_ir_mutator *m = t->m;
  if (e->kind == LOOM_EXPR_VAR)
    for (int i = 0; i < m->n_vars; i++)
      if (m->vars[i] == e->u.var)
        return m->values[i];
  return m->expr_pre ? m->expr_pre(m->ctx, e) : NULL;
}

static loom_expr *index_expr(mut *t, loom_expr *e);

static loom_expr *expr(mut *t, loom_expr *e) {
  if (!e || !t->has_exprs || t->has_failed)
    return e;
  loom_expr *r = replaced(t, e);
  if (r)
    return r;
  int n = walk_expr_arity(e);
  loom_expr *small[8], **ops = small;
  if (n > 8 && !(ops = loom_arena_alloc(t->a, (size_t)n * sizeof *ops)))
    return fail(t);
  bool is_load = e->kind == LOOM_EXPR_LOAD, changed = false;
  for (int i = 0; i < n; i++) {
    loom_expr *x = walk_expr_operand(e, i);
    ops[i] = is_load ? index_expr(t, x) : expr(t, x);
    changed |= ops[i] != x;
  }
  if (t->has_failed)
    return e;
  loom_expr *c = changed ? with_operands(t->a, e, ops) : e;
  if (c && t->m->expr_post)
    c = t->m->expr_post(t->m->ctx, c);
  return c ? c : fail(t);
}

/* An expression of index arithmetic or a condition: rebuilt, then passed
 * through the index callback. */
static loom_expr *index_expr(mut *t, loom_expr *e) {
  loom_expr *r = expr(t, e);
  if (!e || !t->m->index || t->has_failed)
    return r;
  r = t->m->index(t->m->ctx, e, r);
  return r ? r : fail(t);
}

/* es with each item rebuilt (by index_expr when is_index); es itself when
 * none changes, else a new array. */
static loom_expr **expr_array(mut *t, loom_expr **es, int n, bool is_index) {
  loom_expr **out = NULL;
  for (int i = 0; es && i < n && !t->has_failed; i++) {
    loom_expr *x = is_index ? index_expr(t, es[i]) : expr(t, es[i]);
    if (x != es[i] && !out) {
      out = loom_arena_dup(t->a, es, (size_t)n * sizeof *es);
      if (!out)
        return fail(t);
    }
    if (out)
      out[i] = x;
  }
  return out && !t->has_failed ? out : es;
}

/* ---- block parts -------------------------------------------------------------- */

/* Copy-on-write of an array of n items of `size` bytes: *out is the array
 * to write item i into, copied from `items` on the first change. */
static void *writable(mut *t, void **out, const void *items, int n,
                      size_t size) {
  if (!*out && !(*out = loom_arena_dup(t->a, items, (size_t)n * size)))
    return fail(t);
  return *out;
}

/* A range rebuilt; false when it is unchanged. */
static bool range(mut *t, const loom_range *r, loom_range *out) {
  out->min = index_expr(t, r->min);
  out->extent = index_expr(t, r->extent);
  return !t->has_failed && (out->min != r->min || out->extent != r->extent);
}

static loom_range *ranges(mut *t, loom_range *rs, int n) {
  void *out = NULL;
  for (int i = 0; rs && i < n && !t->has_failed; i++) {
    loom_range r;
    if (range(t, &rs[i], &r) && writable(t, &out, rs, n, sizeof *rs))
      ((loom_range *)out)[i] = r;
  }
  return out && !t->has_failed ? out : rs;
}

static loom_buffer_region *regions(mut *t, loom_buffer_region *rs, int n) {
  void *out = NULL;
  for (int i = 0; rs && i < n && !t->has_failed; i++) {
    loom_range *r = ranges(t, rs[i].ranges, rs[i].n_ranges);
    if (r != rs[i].ranges && writable(t, &out, rs, n, sizeof *rs))
      ((loom_buffer_region *)out)[i].ranges = r;
  }
  return out && !t->has_failed ? out : rs;
}

static loom_iter_var *iter_vars(mut *t, loom_iter_var *ivs, int n) {
  void *out = NULL;
  for (int i = 0; ivs && i < n && !t->has_failed; i++) {
    loom_range r;
    if (range(t, &ivs[i].dom, &r) && writable(t, &out, ivs, n, sizeof *ivs))
      ((loom_iter_var *)out)[i].dom = r;
  }
  return out && !t->has_failed ? out : ivs;
}

static loom_match_buffer *match_buffers(mut *t, loom_match_buffer *ms, int n) {
  void *out = NULL;
  for (int i = 0; ms && i < n && !t->has_failed; i++) {
    loom_buffer_region *r = regions(t, &ms[i].source, 1);
    if (r != &ms[i].source && writable(t, &out, ms, n, sizeof *ms))
      ((loom_match_buffer *)out)[i].source = *r;
  }
  return out && !t->has_failed ? out : ms;
}

static loom_stmt *stmt(mut *t, loom_stmt *s);

static loom_block *block(mut *t, loom_block *b) {
  if (!b || t->has_failed)
    return b;
  loom_block c = *b;
  c.iter_vars = iter_vars(t, b->iter_vars, b->n_iter_vars);
  c.reads = regions(t, b->reads, b->n_reads);
  c.writes = regions(t, b->writes, b->n_writes);
  c.match_buffers = match_buffers(t, b->match_buffers, b->n_match_buffers);
  c.init = stmt(t, b->init);
  c.body = stmt(t, b->body);
  if (t->has_failed)
    return b;
  bool changed = c.iter_vars != b->iter_vars || c.reads != b->reads ||
                 c.writes != b->writes || c.match_buffers != b->match_buffers ||
                 c.init != b->init || c.body != b->body;
  loom_block *r = changed ? loom_arena_dup(t->a, &c, sizeof c) : b;
  if (r && t->m->block_post)
    r = t->m->block_post(t->m->ctx, b, r);
  return r ? r : fail(t);
}

/* ---- statements ---------------------------------------------------------------- */

static loom_stmt **stmt_array(mut *t, loom_stmt **ss, int n) {
  loom_stmt **out = NULL;
  for (int i = 0; ss && i < n && !t->has_failed; i++) {
    loom_stmt *x = stmt(t, ss[i]);
    if (x != ss[i] && !out) {
      out = loom_arena_dup(t->a, ss, (size_t)n * sizeof *ss);
      if (!out)
        return fail(t);
    }
    if (out)
      out[i] = x;
  }
  return out && !t->has_failed ? out : ss;
}

/* Fills c, a copy of s, with s's children rebuilt. */
static void children(mut *t, const loom_stmt *s, loom_stmt *c) {
  switch (s->kind) {
  case LOOM_STMT_FOR:
    c->u.loop.min = index_expr(t, s->u.loop.min);
    c->u.loop.extent = index_expr(t, s->u.loop.extent);
    c->u.loop.body = stmt(t, s->u.loop.body);
    return;
  case LOOM_STMT_BLOCK_REALIZE:
    c->u.realize.iter_values = expr_array(t, s->u.realize.iter_values,
                                          s->u.realize.n_iter_values, true);
    c->u.realize.predicate = index_expr(t, s->u.realize.predicate);
    c->u.realize.block = block(t, s->u.realize.block);
    return;
  case LOOM_STMT_STORE:
    c->u.store.value = expr(t, s->u.store.value);
    c->u.store.indices =
        expr_array(t, s->u.store.indices, s->u.store.n_indices, true);
    return;
  case LOOM_STMT_IF:
    c->u.if_.cond = index_expr(t, s->u.if_.cond);
    c->u.if_.then_case = stmt(t, s->u.if_.then_case);
    c->u.if_.else_case = stmt(t, s->u.if_.else_case);
    return;
  case LOOM_STMT_SEQ:
    c->u.seq.stmts = stmt_array(t, s->u.seq.stmts, s->u.seq.n_stmts);
    return;
  case LOOM_STMT_EVALUATE:
    c->u.evaluate.value = expr(t, s->u.evaluate.value);
    return;
  case LOOM_STMT_LET:
    c->u.let.value = expr(t, s->u.let.value);
    c->u.let.body = stmt(t, s->u.let.body);
    return;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    c->u.alloc.body = stmt(t, s->u.alloc.body);
    return;
  case LOOM_STMT_ATTR:
    c->u.attr.value = expr(t, s->u.attr.value);
    c->u.attr.body = stmt(t, s->u.attr.body);
    return;
  case LOOM_STMT_ASSERT:
    c->u.assert_.cond = index_expr(t, s->u.assert_.cond);
    c->u.assert_.message = expr(t, s->u.assert_.message);
    c->u.assert_.body = stmt(t, s->u.assert_.body);
    return;
  case LOOM_STMT_COUNT_: return;
  }
}

static loom_stmt *stmt(mut *t, loom_stmt *s) {
  if (!s || t->has_failed)
    return s;
  const loom_ir_mutator *m = t->m;
  loom_stmt *r = m->stmt_pre ? m->stmt_pre(m->ctx, s) : NULL;
  if (r)
    return r;
  /* A byte copy (padding included) in which children() writes only child
   * pointers: it compares equal to s byte for byte unless a child changed. */
  loom_stmt c;
  memcpy(&c, s, sizeof c);
  children(t, s, &c);
  if (t->has_failed)
    return s;
  r = memcmp(&c, s, sizeof c) ? loom_arena_dup(t->a, &c, sizeof c) : s;
  if (r && m->stmt_post)
    r = m->stmt_post(m->ctx, r);
  return r ? r : fail(t);
}

static mut mut_of(loom_arena *a, const loom_ir_mutator *m) {
  return (mut){a, m,
               m->n_vars > 0 || m->expr_pre || m->expr_post || m->index,
               false};
}

loom_stmt *loom_ir_mutate_stmt(loom_arena *a, const loom_ir_mutator *m,
                               loom_stmt *s) {
  mut t = mut_of(a, m);
  loom_stmt *r = stmt(&t, s);
  return t.has_failed ? NULL : r;
}

loom_expr *loom_ir_mutate_expr(loom_arena *a, const loom_ir_mutator *m,
                               loom_expr *e) {
  mut t = mut_of(a, m);
  loom_expr *r = expr(&t, e);
  return t.has_failed ? NULL : r;
}

/* ---- the common forms ---------------------------------------------------------- */

loom_expr *loom_ir_rewrite_expr(loom_arena *a, loom_expr *e,
                                loom_ir_expr_hook hook, void *ctx) {
  loom_ir_mutator m = {.expr_pre = hook, .ctx = ctx};
  return loom_ir_mutate_expr(a, &m, e);
}

/* The caller's variables are only compared, never written through. */
loom_expr *loom_ir_substitute_expr(loom_arena *a, loom_expr *e,
                                   loom_var *const *vars,
                                   loom_expr *const *values, int n) {
  loom_ir_mutator m = {.vars = (const loom_var *const *)vars,
                       .values = values, .n_vars = n};
  return loom_ir_mutate_expr(a, &m, e);
}

loom_stmt *loom_ir_substitute_stmt(loom_arena *a, loom_stmt *s,
                                   loom_var *const *vars,
                                   loom_expr *const *values, int n) {
  loom_ir_mutator m = {.vars = (const loom_var *const *)vars,
                       .values = values, .n_vars = n};
  return loom_ir_mutate_stmt(a, &m, s);
}
