/* regions: every block's T.reads and T.writes inferred again from its body,
 * innermost blocks first (an outer block's regions come from its inner
 * blocks' regions). Hand-written regions may be wider than the body or
 * stale after an edit; the schedule's checks trust them. The root block
 * keeps none, as TVM's does; a block whose regions cannot be inferred (its
 * body uses a buffer's pointer directly) keeps what it had. */
#include "normalize/normalize_impl.h"

typedef struct regions_ctx {
  loom_arena *a;
  const loom_func *f;
  norm_bufs visible;
  bool has_failed;
} regions_ctx;

static bool same_regions(const loom_buffer_region *x, int nx,
                         const loom_buffer_region *y, int ny) {
  if (nx != ny)
    return false;
  for (int i = 0; i < nx; i++) {
    if (x[i].buffer != y[i].buffer || x[i].n_ranges != y[i].n_ranges)
      return false;
    for (int j = 0; j < x[i].n_ranges; j++)
      if (!loom_ir_same_expr(x[i].ranges[j].min, y[i].ranges[j].min) ||
          !loom_ir_same_expr(x[i].ranges[j].extent, y[i].ranges[j].extent))
        return false;
  }
  return true;
}

static loom_stmt *visit(void *arg, loom_stmt *s) {
  regions_ctx *c = arg;
  int saved = c->visible.n;
  bool ok = true;
  if (s->kind == LOOM_STMT_ALLOCATE || s->kind == LOOM_STMT_DECL_BUFFER)
    ok = norm_bufs_push(&c->visible, s->u.alloc.buffer);
  if (s->kind == LOOM_STMT_BLOCK_REALIZE)
    ok = norm_bufs_push_block(&c->visible, s->u.realize.block);
  loom_stmt *r = ok ? norm_map_children(c->a, s, visit, c) : NULL;
  c->visible.n = saved;
  if (!r || s->kind != LOOM_STMT_BLOCK_REALIZE || s == c->f->body)
    return r;
  const loom_block *old = r->u.realize.block;
  loom_block *b = loom_arena_dup(c->a, old, sizeof *old);
  if (!b)
    return NULL;
  if (!norm_infer_regions(c->a, b, &c->visible))
    return loom_arena_status(c->a) == LOOM_OK ? r : NULL;
  if (same_regions(b->reads, b->n_reads, old->reads, old->n_reads) &&
      same_regions(b->writes, b->n_writes, old->writes, old->n_writes))
    return r;
  loom_stmt *out = r == s ? norm_copy_stmt(c->a, r) : r;
  if (out)
    out->u.realize.block = b;
  return out;
}

loom_status norm_regions(loom_arena *a, const loom_func *f, loom_func **out,
                         loom_diag *d) {
  (void)d;
  regions_ctx c = {a, f, {0}, false};
  if (!norm_bufs_init(&c.visible, f)) {
    norm_bufs_free(&c.visible);
    return LOOM_NOMEM;
  }
  loom_stmt *body = f->body ? visit(&c, f->body) : NULL;
  norm_bufs_free(&c.visible);
  if (f->body && !body)
    return LOOM_NOMEM;
  *out = body == f->body ? (loom_func *)f : norm_with_body(a, f, body);
  return *out ? LOOM_OK : LOOM_NOMEM;
}
