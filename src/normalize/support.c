/* What the normalization passes share: visible buffers, substitution of
 * variables through statements, and a few questions about statements. */
#include "normalize/normalize_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- visible buffers --------------------------------------------------------- */

bool norm_bufs_push(norm_bufs *l, loom_buffer *b) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    loom_buffer **items = realloc(l->items, (size_t)cap * sizeof *items);
    if (!items)
      return false;
    l->items = items;
    l->cap = cap;
  }
  l->items[l->n++] = b;
  return true;
}

bool norm_bufs_init(norm_bufs *l, const loom_func *f) {
  memset(l, 0, sizeof *l);
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer && !norm_bufs_push(l, f->params[i].buffer))
      return false;
  return true;
}

bool norm_bufs_push_block(norm_bufs *l, const loom_block *b) {
  for (int i = 0; i < b->n_alloc_buffers; i++)
    if (!norm_bufs_push(l, b->alloc_buffers[i]))
      return false;
  for (int i = 0; i < b->n_match_buffers; i++)
    if (!norm_bufs_push(l, b->match_buffers[i].buffer))
      return false;
  return true;
}

void norm_bufs_free(norm_bufs *l) {
  free(l->items);
  memset(l, 0, sizeof *l);
}

bool norm_infer_regions(loom_arena *a, loom_block *b, const norm_bufs *visible) {
  norm_bufs outer = {0};
  bool ok = true;
  for (int i = 0; ok && i < visible->n; i++) {
    bool is_own = false;
    for (int j = 0; j < b->n_alloc_buffers; j++)
      is_own |= b->alloc_buffers[j] == visible->items[i];
    for (int j = 0; j < b->n_match_buffers; j++)
      is_own |= b->match_buffers[j].buffer == visible->items[i];
    if (!is_own)
      ok = norm_bufs_push(&outer, visible->items[i]);
  }
  loom_block saved = *b;
  loom_diag d;
  loom_diag_init(&d);
  if (ok)
    ok = loom_ir_infer_block_regions(a, b, true, true, outer.items, outer.n,
                                     &d) == LOOM_OK;
  loom_diag_free(&d);
  norm_bufs_free(&outer);
  if (!ok)
    *b = saved;
  return ok;
}

/* ---- questions ----------------------------------------------------------------- */

static bool region_uses(const loom_buffer_region *r, const loom_var *v) {
  for (int i = 0; i < r->n_ranges; i++)
    if (loom_ir_expr_uses(r->ranges[i].min, v) ||
        loom_ir_expr_uses(r->ranges[i].extent, v))
      return true;
  return false;
}

bool norm_stmt_uses(const loom_stmt *s, const loom_var *v) {
  if (!s)
    return false;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    return loom_ir_expr_uses(s->u.loop.min, v) ||
           loom_ir_expr_uses(s->u.loop.extent, v) ||
           norm_stmt_uses(s->u.loop.body, v);
  case LOOM_STMT_BLOCK_REALIZE: {
    const loom_block *b = s->u.realize.block;
    for (int i = 0; i < s->u.realize.n_iter_values; i++)
      if (loom_ir_expr_uses(s->u.realize.iter_values[i], v))
        return true;
    if (loom_ir_expr_uses(s->u.realize.predicate, v))
      return true;
    for (int i = 0; i < b->n_iter_vars; i++)
      if (loom_ir_expr_uses(b->iter_vars[i].dom.min, v) ||
          loom_ir_expr_uses(b->iter_vars[i].dom.extent, v))
        return true;
    for (int i = 0; i < b->n_reads; i++)
      if (region_uses(&b->reads[i], v))
        return true;
    for (int i = 0; i < b->n_writes; i++)
      if (region_uses(&b->writes[i], v))
        return true;
    for (int i = 0; i < b->n_match_buffers; i++)
      if (region_uses(&b->match_buffers[i].source, v))
        return true;
    return norm_stmt_uses(b->init, v) || norm_stmt_uses(b->body, v);
  }
  case LOOM_STMT_STORE:
    for (int i = 0; i < s->u.store.n_indices; i++)
      if (loom_ir_expr_uses(s->u.store.indices[i], v))
        return true;
    return loom_ir_expr_uses(s->u.store.value, v);
  case LOOM_STMT_IF:
    return loom_ir_expr_uses(s->u.if_.cond, v) ||
           norm_stmt_uses(s->u.if_.then_case, v) ||
           norm_stmt_uses(s->u.if_.else_case, v);
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      if (norm_stmt_uses(s->u.seq.stmts[i], v))
        return true;
    return false;
  case LOOM_STMT_EVALUATE:
    return loom_ir_expr_uses(s->u.evaluate.value, v);
  case LOOM_STMT_LET:
    return loom_ir_expr_uses(s->u.let.value, v) || norm_stmt_uses(s->u.let.body, v);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    return norm_stmt_uses(s->u.alloc.body, v);
  case LOOM_STMT_ATTR:
    return loom_ir_expr_uses(s->u.attr.value, v) || norm_stmt_uses(s->u.attr.body, v);
  case LOOM_STMT_ASSERT:
    return loom_ir_expr_uses(s->u.assert_.cond, v) ||
           loom_ir_expr_uses(s->u.assert_.message, v) ||
           norm_stmt_uses(s->u.assert_.body, v);
  default:
    return true; /* unknown: assume it does */
  }
}

static bool has_kind(const loom_stmt *s, loom_stmt_kind k) {
  if (!s)
    return false;
  if (s->kind == k)
    return true;
  switch (s->kind) {
  case LOOM_STMT_FOR: return has_kind(s->u.loop.body, k);
  case LOOM_STMT_BLOCK_REALIZE:
    return has_kind(s->u.realize.block->init, k) ||
           has_kind(s->u.realize.block->body, k);
  case LOOM_STMT_IF:
    return has_kind(s->u.if_.then_case, k) || has_kind(s->u.if_.else_case, k);
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      if (has_kind(s->u.seq.stmts[i], k))
        return true;
    return false;
  case LOOM_STMT_LET: return has_kind(s->u.let.body, k);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return has_kind(s->u.alloc.body, k);
  case LOOM_STMT_ATTR: return has_kind(s->u.attr.body, k);
  case LOOM_STMT_ASSERT: return has_kind(s->u.assert_.body, k);
  default: return false;
  }
}

bool norm_has_block(const loom_stmt *s) {
  return has_kind(s, LOOM_STMT_BLOCK_REALIZE);
}

bool norm_has_store(const loom_stmt *s) { return has_kind(s, LOOM_STMT_STORE); }

/* ---- copies -------------------------------------------------------------------- */

loom_func *norm_with_body(loom_arena *a, const loom_func *f, loom_stmt *body) {
  loom_func *g = body ? loom_arena_dup(a, f, sizeof *f) : NULL;
  if (g)
    g->body = body;
  return g;
}

loom_stmt *norm_copy_stmt(loom_arena *a, const loom_stmt *s) {
  return loom_arena_dup(a, s, sizeof *s);
}

const loom_stmt *norm_root(const loom_func *f) {
  return f->body && f->body->kind == LOOM_STMT_BLOCK_REALIZE ? f->body : NULL;
}

/* ---- substitution ---------------------------------------------------------------- */

typedef struct subst {
  loom_arena *a;
  loom_arith_ctx *ctx;
  const loom_var *const *vars;
  loom_expr *const *vals;
  int n;
  bool has_failed;
} subst;

static loom_expr *subst_int(subst *m, loom_expr *e);

static loom_expr *on_expr(void *arg, loom_expr *e) {
  subst *m = arg;
  if (e->kind == LOOM_EXPR_VAR) {
    for (int i = 0; i < m->n; i++)
      if (e->u.var == m->vars[i])
        return m->vals[i];
    return NULL;
  }
  if (e->kind != LOOM_EXPR_LOAD)
    return NULL;
  /* Indices are integer expressions: simplified when they change. */
  loom_expr **ix = loom_arena_alloc(m->a, (size_t)(e->u.load.n_indices + 1) *
                                              sizeof *ix);
  if (!ix) {
    m->has_failed = true;
    return e;
  }
  bool is_changed = false;
  for (int i = 0; i < e->u.load.n_indices; i++) {
    ix[i] = subst_int(m, e->u.load.indices[i]);
    is_changed |= ix[i] != e->u.load.indices[i];
  }
  if (!is_changed)
    return e;
  loom_expr *c = loom_arena_dup(m->a, e, sizeof *e);
  if (!c) {
    m->has_failed = true;
    return e;
  }
  c->u.load.indices = ix;
  return c;
}

/* Any expression: variables replaced, load indices simplified. */
static loom_expr *subst_any(subst *m, loom_expr *e) {
  if (!e || m->has_failed)
    return e;
  loom_expr *r = loom_ir_rewrite_expr(m->a, e, on_expr, m);
  if (!r)
    m->has_failed = true;
  return r ? r : e;
}

/* An integer or boolean expression: replaced, then simplified if changed. */
static loom_expr *subst_int(subst *m, loom_expr *e) {
  loom_expr *r = subst_any(m, e);
  if (r == e || m->has_failed)
    return r;
  loom_expr *s = loom_arith_simplify(m->a, m->ctx, r);
  if (!s)
    m->has_failed = true;
  return s ? s : r;
}

static loom_expr **subst_list(subst *m, loom_expr **es, int n, bool *changed) {
  loom_expr **out = loom_arena_alloc(m->a, (size_t)(n + 1) * sizeof *out);
  if (!out) {
    m->has_failed = true;
    return es;
  }
  for (int i = 0; i < n; i++) {
    out[i] = subst_int(m, es[i]);
    *changed |= out[i] != es[i];
  }
  return out;
}

static loom_buffer_region *subst_regions(subst *m, loom_buffer_region *rs,
                                         int n, bool *changed) {
  loom_buffer_region *out = loom_arena_alloc(m->a, (size_t)(n + 1) * sizeof *out);
  if (!out) {
    m->has_failed = true;
    return rs;
  }
  for (int i = 0; i < n; i++) {
    out[i] = rs[i];
    out[i].ranges = loom_arena_alloc(m->a, (size_t)(rs[i].n_ranges + 1) *
                                               sizeof *out[i].ranges);
    if (!out[i].ranges) {
      m->has_failed = true;
      return rs;
    }
    for (int j = 0; j < rs[i].n_ranges; j++) {
      out[i].ranges[j].min = subst_int(m, rs[i].ranges[j].min);
      out[i].ranges[j].extent = subst_int(m, rs[i].ranges[j].extent);
      *changed |= out[i].ranges[j].min != rs[i].ranges[j].min ||
                  out[i].ranges[j].extent != rs[i].ranges[j].extent;
    }
  }
  return out;
}

static loom_stmt *subst_stmt(subst *m, loom_stmt *s);

static loom_block *subst_block(subst *m, loom_block *b) {
  bool changed = false;
  loom_block c = *b;
  c.iter_vars = loom_arena_alloc(m->a, (size_t)(b->n_iter_vars + 1) *
                                           sizeof *c.iter_vars);
  if (!c.iter_vars) {
    m->has_failed = true;
    return b;
  }
  for (int i = 0; i < b->n_iter_vars; i++) {
    c.iter_vars[i] = b->iter_vars[i];
    c.iter_vars[i].dom.min = subst_int(m, b->iter_vars[i].dom.min);
    c.iter_vars[i].dom.extent = subst_int(m, b->iter_vars[i].dom.extent);
    changed |= c.iter_vars[i].dom.min != b->iter_vars[i].dom.min ||
               c.iter_vars[i].dom.extent != b->iter_vars[i].dom.extent;
  }
  c.reads = subst_regions(m, b->reads, b->n_reads, &changed);
  c.writes = subst_regions(m, b->writes, b->n_writes, &changed);
  c.match_buffers = loom_arena_alloc(m->a, (size_t)(b->n_match_buffers + 1) *
                                               sizeof *c.match_buffers);
  if (!c.match_buffers) {
    m->has_failed = true;
    return b;
  }
  for (int i = 0; i < b->n_match_buffers; i++) {
    c.match_buffers[i] = b->match_buffers[i];
    loom_buffer_region *r = subst_regions(m, &b->match_buffers[i].source, 1,
                                          &changed);
    c.match_buffers[i].source = *r;
  }
  c.init = subst_stmt(m, b->init);
  c.body = subst_stmt(m, b->body);
  changed |= c.init != b->init || c.body != b->body;
  if (!changed || m->has_failed)
    return b;
  loom_block *r = loom_arena_dup(m->a, &c, sizeof c);
  if (!r)
    m->has_failed = true;
  return r ? r : b;
}

static loom_stmt *subst_stmt(subst *m, loom_stmt *s) {
  if (!s || m->has_failed)
    return s;
  loom_stmt c = *s;
  bool changed = false;
#define SUB_E(field, fn)                                                       \
  do {                                                                         \
    c.field = fn(m, s->field);                                                 \
    changed |= c.field != s->field;                                            \
  } while (0)
#define SUB_S(field)                                                           \
  do {                                                                         \
    c.field = subst_stmt(m, s->field);                                         \
    changed |= c.field != s->field;                                            \
  } while (0)
  switch (s->kind) {
  case LOOM_STMT_FOR:
    SUB_E(u.loop.min, subst_int);
    SUB_E(u.loop.extent, subst_int);
    SUB_S(u.loop.body);
    break;
  case LOOM_STMT_BLOCK_REALIZE:
    c.u.realize.iter_values = subst_list(m, s->u.realize.iter_values,
                                         s->u.realize.n_iter_values, &changed);
    SUB_E(u.realize.predicate, subst_int);
    c.u.realize.block = subst_block(m, s->u.realize.block);
    changed |= c.u.realize.block != s->u.realize.block;
    break;
  case LOOM_STMT_STORE:
    c.u.store.indices = subst_list(m, s->u.store.indices, s->u.store.n_indices,
                                   &changed);
    SUB_E(u.store.value, subst_any);
    break;
  case LOOM_STMT_IF:
    SUB_E(u.if_.cond, subst_int);
    SUB_S(u.if_.then_case);
    SUB_S(u.if_.else_case);
    break;
  case LOOM_STMT_SEQ:
    c.u.seq.stmts = loom_arena_alloc(m->a, (size_t)(s->u.seq.n_stmts + 1) *
                                               sizeof *c.u.seq.stmts);
    if (!c.u.seq.stmts) {
      m->has_failed = true;
      return s;
    }
    for (int i = 0; i < s->u.seq.n_stmts; i++) {
      c.u.seq.stmts[i] = subst_stmt(m, s->u.seq.stmts[i]);
      changed |= c.u.seq.stmts[i] != s->u.seq.stmts[i];
    }
    break;
  case LOOM_STMT_EVALUATE: SUB_E(u.evaluate.value, subst_any); break;
  case LOOM_STMT_LET:
    SUB_E(u.let.value, subst_any);
    SUB_S(u.let.body);
    break;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: SUB_S(u.alloc.body); break;
  case LOOM_STMT_ATTR:
    SUB_E(u.attr.value, subst_any);
    SUB_S(u.attr.body);
    break;
  case LOOM_STMT_ASSERT:
    SUB_E(u.assert_.cond, subst_int);
    SUB_E(u.assert_.message, subst_any);
    SUB_S(u.assert_.body);
    break;
  default:
    break;
  }
#undef SUB_E
#undef SUB_S
  if (!changed || m->has_failed)
    return s;
  loom_stmt *r = loom_arena_dup(m->a, &c, sizeof c);
  if (!r)
    m->has_failed = true;
  return r ? r : s;
}

loom_stmt *norm_subst_stmt(loom_arena *a, loom_arith_ctx *ctx, loom_stmt *s,
                           const loom_var *const *vars, loom_expr *const *vals,
                           int n) {
  subst m = {a, ctx, vars, vals, n, false};
  loom_stmt *r = subst_stmt(&m, s);
  return m.has_failed ? NULL : r;
}

/* ---- rebuilding ------------------------------------------------------------------ */

loom_stmt *norm_map_children(loom_arena *a, loom_stmt *s, norm_child_fn fn,
                             void *arg) {
  if (!s)
    return s;
  loom_stmt c = *s;
  bool changed = false, has_failed = false;
#define MAP(field)                                                             \
  do {                                                                         \
    if (s->field) {                                                            \
      c.field = fn(arg, s->field);                                             \
      has_failed |= !c.field;                                                  \
      changed |= c.field != s->field;                                          \
    }                                                                          \
  } while (0)
  switch (s->kind) {
  case LOOM_STMT_FOR: MAP(u.loop.body); break;
  case LOOM_STMT_BLOCK_REALIZE: {
    loom_block b = *s->u.realize.block;
    bool block_changed = false;
    if (b.init) {
      b.init = fn(arg, s->u.realize.block->init);
      has_failed |= !b.init;
      block_changed |= b.init != s->u.realize.block->init;
    }
    if (b.body) {
      b.body = fn(arg, s->u.realize.block->body);
      has_failed |= !b.body;
      block_changed |= b.body != s->u.realize.block->body;
    }
    if (block_changed && !has_failed) {
      c.u.realize.block = loom_arena_dup(a, &b, sizeof b);
      has_failed |= !c.u.realize.block;
      changed = true;
    }
    break;
  }
  case LOOM_STMT_IF:
    MAP(u.if_.then_case);
    MAP(u.if_.else_case);
    break;
  case LOOM_STMT_SEQ:
    c.u.seq.stmts = loom_arena_alloc(a, (size_t)(s->u.seq.n_stmts + 1) *
                                            sizeof *c.u.seq.stmts);
    if (!c.u.seq.stmts)
      return NULL;
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      MAP(u.seq.stmts[i]);
    break;
  case LOOM_STMT_LET: MAP(u.let.body); break;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: MAP(u.alloc.body); break;
  case LOOM_STMT_ATTR: MAP(u.attr.body); break;
  case LOOM_STMT_ASSERT: MAP(u.assert_.body); break;
  default: break;
  }
#undef MAP
  if (has_failed)
    return NULL;
  return changed ? loom_arena_dup(a, &c, sizeof c) : s;
}
