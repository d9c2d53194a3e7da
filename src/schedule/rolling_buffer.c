/* rolling_buffer: shrinks a buffer that a tiled producer writes, one tile at
 * a time, to the window a tile needs along one axis, as TVM's RollingBuffer
 * does. Indices on that axis become modulo the window, and the producer
 * skips the elements an earlier tile already computed (a predicate per
 * overlapping axis), so that each tile computes only what is new. */
#include "schedule/sched_impl.h"

#include <string.h>

#define MAX_DIMS 16

typedef struct rolling {
  loom_buffer *old, *nb;
  int axis;
  int64_t window;
  int ndim;
  const loom_var *vars[MAX_DIMS]; /* the tile loop of each axis, or NULL */
  int64_t overlap[MAX_DIMS];
  bool has_store; /* a store of the buffer since the last realize */
  bool oom;
} rolling;

/* ---- matching the rolling pattern ---------------------------------------------- */

/* The tile loop and stride of one dimension's start, in the forms TVM
 * accepts: a constant, v, v * stride, each maybe floordiv'ed by a
 * constant. False when the start has another form. */
static bool match_dim(const loom_expr *min, const loom_var **var,
                      int64_t *stride) {
  int64_t divisor = 1, k;
  if (min->kind == LOOM_EXPR_FLOORDIV &&
      loom_ir_is_const_int(min->u.bin.b, &divisor) && divisor > 0)
    min = min->u.bin.a;
  *var = NULL;
  *stride = 0;
  if (loom_ir_is_const_int(min, NULL))
    return true;
  if (min->kind == LOOM_EXPR_VAR) {
    *var = min->u.var;
    *stride = 1;
  } else if (min->kind == LOOM_EXPR_MUL && min->u.bin.a->kind == LOOM_EXPR_VAR &&
             loom_ir_is_const_int(min->u.bin.b, &k)) {
    *var = min->u.bin.a->u.var;
    *stride = k;
  } else
    return false;
  *stride = (*stride + divisor - 1) / divisor;
  return true;
}

/* ---- rewriting the scope ------------------------------------------------------- */

static loom_expr **rolled(loom_arena *a, rolling *r, loom_expr **idx, int n) {
  loom_expr **out = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++)
    out[i] = idx[i];
  if (r->axis < n) {
    loom_expr *w = loom_ir_int(a, idx[r->axis]->dtype, r->window);
    out[r->axis] = w ? loom_ir_binary(a, LOOM_EXPR_FLOORMOD, idx[r->axis], w)
                     : NULL;
    if (!out[r->axis])
      return NULL;
  }
  return out;
}

static loom_expr *roll_load(const sched_map *m, loom_arena *a,
                            loom_expr *load) {
  rolling *r = m->ctx;
  if (load->u.load.buffer != r->old)
    return load;
  loom_expr *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *load;
  c->u.load.buffer = r->nb;
  c->u.load.indices = rolled(a, r, load->u.load.indices, load->u.load.n_indices);
  return c->u.load.indices ? c : NULL;
}

/* The realize of a block that stores the buffer skips what the previous
 * tile computed: for each overlapping axis, `v < 1 or overlap <= start`,
 * with start the block's binding of that axis at v = 0. */
static loom_stmt *skip_overlap(rolling *r, loom_arena *a, loom_stmt *s) {
  loom_stmt *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *s;
  loom_expr *cond = s->u.realize.predicate;
  int64_t t;
  if (cond && loom_ir_is_const_int(cond, &t) && t)
    cond = NULL;
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  if (!ctx)
    return NULL;
  for (int i = 0; i < r->ndim; i++) {
    if (!r->vars[i] || r->overlap[i] <= 0 ||
        i >= s->u.realize.n_iter_values)
      continue;
    const loom_var *v = r->vars[i];
    loom_expr *zero = loom_ir_int(a, v->dtype, 0);
    sched_map zm = {.vars = &v, .values = &zero, .n = 1};
    loom_expr *start = zero ? sched_subst_expr(a, s->u.realize.iter_values[i],
                                               &zm)
                            : NULL;
    start = start ? loom_arith_simplify(a, ctx, start) : NULL;
    loom_expr *ov = start ? loom_ir_int(a, start->dtype, r->overlap[i]) : NULL;
    loom_expr *one = loom_ir_int(a, v->dtype, 1);
    loom_expr *lt = one ? loom_ir_binary(a, LOOM_EXPR_LT,
                                         loom_ir_ref(a, (loom_var *)v), one)
                        : NULL;
    loom_expr *le = ov ? loom_ir_binary(a, LOOM_EXPR_LE, ov, start) : NULL;
    loom_expr *either = lt && le ? loom_ir_binary(a, LOOM_EXPR_OR, lt, le)
                                 : NULL;
    if (!either) {
      loom_arith_ctx_free(ctx);
      return NULL;
    }
    lt->dtype = le->dtype = either->dtype = LOOM_BOOL;
    cond = cond ? loom_ir_binary(a, LOOM_EXPR_AND, cond, either) : either;
    if (!cond) {
      loom_arith_ctx_free(ctx);
      return NULL;
    }
    cond->dtype = LOOM_BOOL;
  }
  loom_arith_ctx_free(ctx);
  c->u.realize.predicate = cond;
  return c;
}

static loom_stmt *roll_stmt(const sched_map *m, loom_arena *a, loom_stmt *s) {
  rolling *r = m->ctx;
  if (s->kind == LOOM_STMT_BLOCK_REALIZE && r->has_store) {
    r->has_store = false;
    return skip_overlap(r, a, s);
  }
  if (s->kind != LOOM_STMT_STORE || s->u.store.buffer != r->old)
    return s;
  loom_stmt *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *s;
  c->u.store.buffer = r->nb;
  c->u.store.indices = rolled(a, r, s->u.store.indices, s->u.store.n_indices);
  r->has_store = true;
  return c->u.store.indices ? c : NULL;
}

/* Regions of the buffer, in place, become what the block accesses of the
 * rolled buffer (inferred again, as TVM does). */
static loom_buffer_region *roll_regions(loom_arena *a, rolling *r,
                                        const loom_buffer_region *regs, int n,
                                        const loom_buffer_region *inferred,
                                        int n_inferred) {
  loom_buffer_region *out = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++) {
    out[i] = regs[i];
    if (regs[i].buffer != r->old)
      continue;
    out[i].buffer = r->nb;
    for (int j = 0; j < n_inferred; j++)
      if (inferred[j].buffer == r->nb)
        out[i] = inferred[j];
  }
  return out;
}

/* Every block in the scope makes its iter at the rolling axis's position
 * opaque (its values depend on all earlier tiles, as TVM marks it). */
static loom_block *roll_block(const sched_map *m, loom_arena *a,
                              const loom_block *old, loom_block *b) {
  (void)old;
  rolling *r = m->ctx;
  loom_block *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *b;
  if (r->axis < b->n_iter_vars) {
    loom_iter_var *iv =
        loom_arena_alloc(a, (size_t)b->n_iter_vars * sizeof *iv);
    if (!iv)
      return NULL;
    memcpy(iv, b->iter_vars, (size_t)b->n_iter_vars * sizeof *iv);
    iv[r->axis].kind = LOOM_ITER_OPAQUE;
    c->iter_vars = iv;
  }
  bool touches = false;
  for (int i = 0; i < b->n_reads; i++)
    touches |= b->reads[i].buffer == r->old;
  for (int i = 0; i < b->n_writes; i++)
    touches |= b->writes[i].buffer == r->old;
  if (!touches)
    return c;
  loom_block *probe = loom_arena_alloc(a, sizeof *probe);
  if (!probe)
    return NULL;
  *probe = *c;
  loom_diag d;
  loom_diag_init(&d);
  loom_buffer *outer[1] = {r->nb};
  bool ok = loom_ir_infer_block_regions(a, probe, true, true, outer, 1, &d) ==
            LOOM_OK;
  loom_diag_free(&d);
  c->reads = roll_regions(a, r, b->reads, b->n_reads, ok ? probe->reads : NULL,
                          ok ? probe->n_reads : 0);
  c->writes = roll_regions(a, r, b->writes, b->n_writes,
                           ok ? probe->writes : NULL, ok ? probe->n_writes : 0);
  return c->reads && c->writes ? c : NULL;
}

/* ---- the primitive ---------------------------------------------------------------- */

loom_status sched_apply_rolling_buffer(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path bp = {0};
  sched_stmt_list blocks = {0};
  loom_arith_ctx *ctx = NULL;
  TRY(sched_input_block(c, 0, &bp));
  loom_status st = LOOM_OK;
  loom_stmt *realize = bp.stmts[bp.n - 1];
  const loom_block *b = realize->u.realize.block;
  const loom_func *f = c->mod->funcs[bp.func];
  int64_t index = sched_attr_int(c, 0, -1);
  if (index < 0 || index >= b->n_writes) {
    st = sched_fail(c, "block '%s' writes %d buffer%s, so the index must be in "
                       "[0, %d), not %lld",
                    b->name, b->n_writes, b->n_writes == 1 ? "" : "s",
                    b->n_writes, (long long)index);
    goto out;
  }
  const loom_buffer_region *region = &b->writes[index];
  loom_buffer *buf = region->buffer;
  int si = sched_scope_index(&bp, bp.n - 1);
  const loom_block *scope = si >= 0 ? bp.stmts[si]->u.realize.block : NULL;
  if (!sched_scope_allocates(scope, buf)) {
    st = sched_fail(c, "block '%s' is an output block: '%s' is not allocated "
                       "by the block around it, so it cannot shrink",
                    b->name, buf->name);
    goto out;
  }
  if (buf->ndim > MAX_DIMS) {
    st = sched_fail(c, "buffer '%s' has %d dimensions (limit is %d)",
                    buf->name, buf->ndim, MAX_DIMS);
    goto out;
  }
  /* Only RAW dependences: the block is the buffer's only writer, and the
   * window is fixed by where its consumers read. */
  if (!sched_collect_blocks(scope->body, &blocks)) {
    st = sched_nomem(c);
    goto out;
  }
  int lca = bp.n - 1;
  for (int i = 0; i < blocks.n; i++) {
    const loom_block *o = blocks.items[i]->u.realize.block;
    if (blocks.items[i] == realize)
      continue;
    if (sched_block_writes(o, buf)) {
      st = sched_fail(c, "block '%s' is required to have only RAW dependences, "
                         "but block '%s' also writes '%s'",
                      b->name, o->name, buf->name);
      goto out;
    }
    if (!sched_block_reads(o, buf))
      continue;
    sched_path q = {0};
    if (!sched_find_block(f, o->name, &q)) {
      st = q.n ? sched_fail(c, "block '%s' cannot be found", o->name)
               : sched_nomem(c);
      sched_path_free(&q);
      goto out;
    }
    int k = 0;
    while (k < q.n && k < bp.n && q.stmts[k] == bp.stmts[k])
      k++;
    if (k - 1 < lca)
      lca = k - 1;
    sched_path_free(&q);
  }
  while (lca > 0 && bp.stmts[lca]->kind != LOOM_STMT_FOR &&
         bp.stmts[lca]->kind != LOOM_STMT_BLOCK_REALIZE)
    lca--;
  if (bp.stmts[lca]->kind != LOOM_STMT_FOR) {
    st = sched_fail(c, "block '%s' must be tiled so that the lowest common "
                       "ancestor of the accesses of '%s' (the block and its "
                       "consumers) is a loop",
                    b->name, buf->name);
    goto out;
  }
  /* The part of the buffer one iteration of that loop writes. */
  loom_arith_relax rx[SCHED_MAX_DEPTH];
  int nrx = 0;
  for (int i = lca + 1; i < bp.n - 1; i++)
    if (bp.stmts[i]->kind == LOOM_STMT_FOR)
      rx[nrx++] = (loom_arith_relax){bp.stmts[i]->u.loop.var,
                                     {bp.stmts[i]->u.loop.min,
                                      bp.stmts[i]->u.loop.extent}};
  ctx = loom_arith_ctx_new();
  loom_buffer_region part;
  bool found = false;
  loom_diag d;
  loom_diag_init(&d);
  st = ctx ? loom_arith_block_region(a, ctx, realize, buf, true, rx, nrx, &part,
                                     NULL, &found, &d)
           : LOOM_NOMEM;
  loom_diag_free(&d);
  if (st != LOOM_OK || !found) {
    st = st == LOOM_NOMEM ? sched_nomem(c)
                          : sched_fail(c, "the region of '%s' that block '%s' "
                                          "writes cannot be relaxed",
                                       buf->name, b->name);
    goto out;
  }
  rolling r = {.old = buf, .ndim = buf->ndim, .axis = -1};
  for (int i = 0; i < buf->ndim; i++) {
    loom_expr *mn = sched_normalize(a, ctx, part.ranges[i].min);
    int64_t stride, ext;
    if (!mn) {
      st = sched_nomem(c);
      goto out;
    }
    if (!match_dim(mn, &r.vars[i], &stride) ||
        !loom_ir_is_const_int(part.ranges[i].extent, &ext)) {
      st = sched_fail(c, "the region of '%s' that block '%s' writes in one "
                         "tile must start, in each dimension, at a constant "
                         "or at a loop times a stride (hh_0 * 4), with a "
                         "constant extent; dimension %d does not",
                      buf->name, b->name, i);
      goto out;
    }
    r.overlap[i] = r.vars[i] ? ext - stride : 0;
    if (r.overlap[i] <= 0)
      r.vars[i] = NULL;
  }
  /* The rolling axis: that of the outermost loop among the tile loops. */
  for (int i = si + 1; i < bp.n - 1 && r.axis < 0; i++)
    for (int k = 0; k < buf->ndim && r.axis < 0; k++)
      if (bp.stmts[i]->kind == LOOM_STMT_FOR &&
          r.vars[k] == bp.stmts[i]->u.loop.var)
        r.axis = k;
  if (r.axis < 0) {
    st = sched_fail(c, "no dimension of '%s' overlaps between the tiles of "
                       "block '%s' (a start such as hh_0 * 4 over an extent "
                       "larger than 4)",
                    buf->name, b->name);
    goto out;
  }
  /* The overlap predicate and the opaque iter take the block's iter at a
   * dimension's position for that dimension (TVM's rule): the write must
   * index each overlapping dimension by the iter at its position, or the
   * predicate would skip the wrong elements. */
  for (int i = 0; i < buf->ndim; i++) {
    const loom_expr *at = region->ranges[i].min;
    int64_t one;
    if (r.vars[i] &&
        (i >= b->n_iter_vars || i >= realize->u.realize.n_iter_values ||
         at->kind != LOOM_EXPR_VAR || at->u.var != b->iter_vars[i].var ||
         !loom_ir_is_const_int(region->ranges[i].extent, &one) || one != 1)) {
      st = sched_fail(c, "block '%s' writes dimension %d of '%s' at another "
                         "index than its iter %d, from which the overlap of "
                         "the tiles is skipped",
                      b->name, i, buf->name, i);
      goto out;
    }
  }
  loom_ir_is_const_int(part.ranges[r.axis].extent, &r.window);
  loom_buffer *nb = loom_arena_alloc(a, sizeof *nb);
  loom_var *data = loom_arena_alloc(a, sizeof *data);
  loom_expr **shape = loom_arena_alloc(a, (size_t)buf->ndim * sizeof *shape);
  if (!nb || !data || !shape) {
    st = sched_nomem(c);
    goto out;
  }
  *nb = *buf;
  *data = *buf->data;
  nb->data = data;
  memcpy(shape, buf->shape, (size_t)buf->ndim * sizeof *shape);
  shape[r.axis] = loom_ir_int(a, buf->shape[r.axis]->dtype, r.window);
  nb->shape = shape;
  nb->strides = NULL;
  nb->n_strides = 0;
  r.nb = nb;
  if (!shape[r.axis]) {
    st = sched_nomem(c);
    goto out;
  }
  sched_map m = {.on_load = roll_load, .on_stmt = roll_stmt,
                 .on_block = roll_block, .ctx = &r};
  loom_stmt *body = sched_subst_stmt(a, scope->body, &m);
  loom_stmt *sr = loom_arena_alloc(a, sizeof *sr);
  loom_block *sb = loom_arena_alloc(a, sizeof *sb);
  loom_buffer **allocs = loom_arena_alloc(
      a, (size_t)scope->n_alloc_buffers * sizeof *allocs);
  if (!body || !sr || !sb || !allocs) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < scope->n_alloc_buffers; i++)
    allocs[i] = scope->alloc_buffers[i] == buf ? nb : scope->alloc_buffers[i];
  *sb = *scope;
  sb->alloc_buffers = allocs;
  sb->body = body;
  *sr = *bp.stmts[si];
  sr->u.realize.block = sb;
  c->mod = sched_replace(a, c->mod, &bp, si, sr);
  if (!c->mod)
    st = sched_nomem(c);
out:
  loom_arith_ctx_free(ctx);
  free(blocks.items);
  sched_path_free(&bp);
  return st;
}
