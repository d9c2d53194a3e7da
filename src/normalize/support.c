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

typedef struct simplifier {
  loom_arena *a;
  loom_arith_ctx *ctx;
} simplifier;

/* Index expressions and conditions that the substitution changed. */
static loom_expr *simplify_changed(void *arg, const loom_expr *old,
                                   loom_expr *e) {
  const simplifier *m = arg;
  return e == old ? e : loom_arith_simplify(m->a, m->ctx, e);
}

loom_stmt *norm_subst_stmt(loom_arena *a, loom_arith_ctx *ctx, loom_stmt *s,
                           const loom_var *const *vars, loom_expr *const *vals,
                           int n) {
  simplifier m = {a, ctx};
  loom_ir_mutator t = {.vars = vars, .values = vals, .n_vars = n,
                       .index = simplify_changed, .ctx = &m};
  return loom_ir_mutate_stmt(a, &t, s);
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
