/* What the normalization passes share: visible buffers, substitution of
 * variables through statements, and rebuilding a statement's children. */
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

typedef struct map_kids {
  const loom_stmt *parent;
  norm_child_fn fn;
  void *arg;
  bool has_failed;
} map_kids;

/* The parent's children go to fn; the parent is entered. */
static loom_stmt *map_kid(void *ctx, loom_stmt *s) {
  map_kids *k = ctx;
  if (s == k->parent)
    return NULL;
  loom_stmt *r = k->has_failed ? s : k->fn(k->arg, s);
  k->has_failed |= !r;
  return r ? r : s;
}

loom_stmt *norm_map_children(loom_arena *a, loom_stmt *s, norm_child_fn fn,
                             void *arg) {
  if (!s)
    return s;
  map_kids k = {s, fn, arg, false};
  loom_ir_mutator m = {.stmt_pre = map_kid, .ctx = &k};
  loom_stmt *r = loom_ir_mutate_stmt(a, &m, s);
  return k.has_failed ? NULL : r;
}
