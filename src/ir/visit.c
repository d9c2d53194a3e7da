/* The read-only walk over statements and expressions (ir.h gives the order
 * of children). Its switch over statement kinds has no default case, so a
 * new kind that it does not walk fails to compile (-Werror=switch). */
#include "ir/walk.h"

typedef struct walker {
  const loom_ir_visitor *v;
  bool has_exprs; /* some callback wants expressions */
} walker;

static bool expr(const walker *w, loom_expr *e) {
  if (!e || !w->has_exprs)
    return true;
  const loom_ir_visitor *v = w->v;
  loom_visit step = v->expr_pre ? v->expr_pre(v->ctx, e) : LOOM_VISIT_GO;
  if (step == LOOM_VISIT_STOP)
    return false;
  if (step == LOOM_VISIT_GO) {
    int n = walk_expr_arity(e);
    for (int i = 0; i < n; i++)
      if (!expr(w, walk_expr_operand(e, i)))
        return false;
  }
  return !v->expr_post || v->expr_post(v->ctx, e) != LOOM_VISIT_STOP;
}

static bool exprs(const walker *w, loom_expr *const *es, int n) {
  for (int i = 0; es && i < n; i++)
    if (!expr(w, es[i]))
      return false;
  return true;
}

static bool ranges(const walker *w, const loom_range *rs, int n) {
  for (int i = 0; rs && i < n; i++)
    if (!expr(w, rs[i].min) || !expr(w, rs[i].extent))
      return false;
  return true;
}

static bool regions(const walker *w, const loom_buffer_region *rs, int n) {
  for (int i = 0; rs && i < n; i++)
    if (!ranges(w, rs[i].ranges, rs[i].n_ranges))
      return false;
  return true;
}

static bool buffer(const walker *w, loom_buffer *b) {
  return !b || !w->v->buffer ||
         w->v->buffer(w->v->ctx, b) != LOOM_VISIT_STOP;
}

static bool stmt(const walker *w, loom_stmt *s);

static bool block(const walker *w, const loom_block *b) {
  if (!b)
    return true;
  for (int i = 0; b->iter_vars && i < b->n_iter_vars; i++)
    if (!ranges(w, &b->iter_vars[i].dom, 1))
      return false;
  if (!regions(w, b->reads, b->n_reads) || !regions(w, b->writes, b->n_writes))
    return false;
  for (int i = 0; b->alloc_buffers && i < b->n_alloc_buffers; i++)
    if (!buffer(w, b->alloc_buffers[i]))
      return false;
  for (int i = 0; b->match_buffers && i < b->n_match_buffers; i++)
    if (!regions(w, &b->match_buffers[i].source, 1) ||
        !buffer(w, b->match_buffers[i].buffer))
      return false;
  return stmt(w, b->init) && stmt(w, b->body);
}

static bool children(const walker *w, const loom_stmt *s) {
  switch (s->kind) {
  case LOOM_STMT_FOR:
    return expr(w, s->u.loop.min) && expr(w, s->u.loop.extent) &&
           stmt(w, s->u.loop.body);
  case LOOM_STMT_BLOCK_REALIZE:
    return exprs(w, s->u.realize.iter_values, s->u.realize.n_iter_values) &&
           expr(w, s->u.realize.predicate) && block(w, s->u.realize.block);
  case LOOM_STMT_STORE:
    return expr(w, s->u.store.value) &&
           exprs(w, s->u.store.indices, s->u.store.n_indices);
  case LOOM_STMT_IF:
    return expr(w, s->u.if_.cond) && stmt(w, s->u.if_.then_case) &&
           stmt(w, s->u.if_.else_case);
  case LOOM_STMT_SEQ:
    for (int i = 0; s->u.seq.stmts && i < s->u.seq.n_stmts; i++)
      if (!stmt(w, s->u.seq.stmts[i]))
        return false;
    return true;
  case LOOM_STMT_EVALUATE: return expr(w, s->u.evaluate.value);
  case LOOM_STMT_LET:
    return expr(w, s->u.let.value) && stmt(w, s->u.let.body);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    return buffer(w, s->u.alloc.buffer) && stmt(w, s->u.alloc.body);
  case LOOM_STMT_ATTR:
    return expr(w, s->u.attr.value) && stmt(w, s->u.attr.body);
  case LOOM_STMT_ASSERT:
    return expr(w, s->u.assert_.cond) && expr(w, s->u.assert_.message) &&
           stmt(w, s->u.assert_.body);
  case LOOM_STMT_COUNT_: break;
  }
  return true;
}

static bool stmt(const walker *w, loom_stmt *s) {
  if (!s)
    return true;
  const loom_ir_visitor *v = w->v;
  loom_visit step = v->stmt_pre ? v->stmt_pre(v->ctx, s) : LOOM_VISIT_GO;
  if (step == LOOM_VISIT_STOP)
    return false;
  if (step == LOOM_VISIT_GO && !children(w, s))
    return false;
  return !v->stmt_post || v->stmt_post(v->ctx, s) != LOOM_VISIT_STOP;
}

static walker walker_of(const loom_ir_visitor *v) {
  return (walker){v, v->expr_pre || v->expr_post};
}

/* The walk hands nodes out as the IR stores them (children are non-const
 * pointers), so that a collector can keep them; it writes to none. */
bool loom_ir_visit_stmt(const loom_ir_visitor *v, const loom_stmt *s) {
  walker w = walker_of(v);
  return stmt(&w, (loom_stmt *)s);
}

bool loom_ir_visit_expr(const loom_ir_visitor *v, const loom_expr *e) {
  walker w = walker_of(v);
  return expr(&w, (loom_expr *)e);
}

/* ---- common questions -------------------------------------------------------- */

static loom_visit find_var(void *ctx, loom_expr *e) {
  return e->kind == LOOM_EXPR_VAR && e->u.var == ctx ? LOOM_VISIT_STOP
                                                     : LOOM_VISIT_GO;
}

bool loom_ir_expr_uses(const loom_expr *e, const loom_var *v) {
  loom_ir_visitor w = {.expr_pre = find_var, .ctx = (void *)v};
  return !loom_ir_visit_expr(&w, e);
}

bool loom_ir_stmt_uses(const loom_stmt *s, const loom_var *v) {
  loom_ir_visitor w = {.expr_pre = find_var, .ctx = (void *)v};
  return !loom_ir_visit_stmt(&w, s);
}

static loom_visit find_kind(void *ctx, loom_stmt *s) {
  return s->kind == *(const loom_stmt_kind *)ctx ? LOOM_VISIT_STOP
                                                 : LOOM_VISIT_GO;
}

bool loom_ir_stmt_has(const loom_stmt *s, loom_stmt_kind k) {
  loom_ir_visitor w = {.stmt_pre = find_kind, .ctx = &k};
  return !loom_ir_visit_stmt(&w, s);
}

static loom_visit find_wmma(void *ctx, loom_expr *e) {
  (void)ctx;
  return e->kind == LOOM_EXPR_CALL && loom_op_is_wmma(e->u.call.op) ? LOOM_VISIT_STOP
                                                                   : LOOM_VISIT_GO;
}

bool loom_ir_stmt_has_wmma(const loom_stmt *s) {
  loom_ir_visitor w = {.expr_pre = find_wmma};
  return !loom_ir_visit_stmt(&w, s);
}

typedef struct uses_ctx {
  const loom_var *data;
  loom_ir_uses n;
} uses_ctx;

static loom_visit count_store(void *ctx, loom_stmt *s) {
  uses_ctx *u = ctx;
  u->n.stores += s->kind == LOOM_STMT_STORE && s->u.store.buffer->data == u->data;
  return LOOM_VISIT_GO;
}

static loom_visit count_load(void *ctx, loom_expr *e) {
  uses_ctx *u = ctx;
  u->n.loads += (e->kind == LOOM_EXPR_LOAD && e->u.load.buffer->data == u->data) ||
                (e->kind == LOOM_EXPR_VAR && e->u.var == u->data);
  return LOOM_VISIT_GO;
}

loom_ir_uses loom_ir_buffer_uses(const loom_stmt *s, const loom_var *data) {
  uses_ctx u = {data, {0, 0}};
  loom_ir_visitor w = {.stmt_pre = count_store, .expr_pre = count_load, .ctx = &u};
  loom_ir_visit_stmt(&w, s);
  return u.n;
}
