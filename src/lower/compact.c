/* Buffer compaction: an allocation shrinks to the region its uses touch
 * under the place it is allocated (relaxing the loops below), as TVM's
 * CompactBufferAllocation does. Each dimension keeps a constant extent (the
 * largest the region's extent takes) and an offset, the region's minimum, an
 * expression of the loops outside; an access then indexes the compact
 * buffer at its index less that minimum (blocks.c builds it into the flat
 * layout). A cache tile placed under the tile loops thereby becomes a few
 * registers' worth of stack, not a copy of the whole output. */
#include "lower/lower_impl.h"

#include <stdlib.h>

/* Only index arithmetic over variables: a minimum the layout may evaluate
 * anywhere inside the allocation. */
static bool is_plain_index(const loom_expr *e, int depth) {
  if (!e || depth > 64 || e->dtype.lanes != 1 || !loom_dtype_is_int(e->dtype))
    return false;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_VAR: return true;
  case LOOM_EXPR_ADD: case LOOM_EXPR_SUB: case LOOM_EXPR_MUL:
  case LOOM_EXPR_FLOORDIV: case LOOM_EXPR_FLOORMOD:
  case LOOM_EXPR_MIN: case LOOM_EXPR_MAX:
    return is_plain_index(e->u.bin.a, depth + 1) &&
           is_plain_index(e->u.bin.b, depth + 1);
  default: return false;
  }
}

static loom_status add(lower_compactions *C, const loom_buffer *b,
                       loom_buffer *compact, loom_expr **mins) {
  if (C->n == C->cap) {
    int cap = C->cap ? 2 * C->cap : 8;
    lower_compaction *p = realloc(C->items, (size_t)cap * sizeof *p);
    if (!p)
      return LOOM_NOMEM;
    C->items = p;
    C->cap = cap;
  }
  TRY(loom_ptrmap_put(&C->index, b, C->n));
  C->items[C->n++] = (lower_compaction){b, compact, mins};
  return LOOM_OK;
}

/* Compacts b, allocated around the n statements, when its uses there are
 * all plain accesses. */
/* The thread-bound loops around the statement being walked. */
typedef struct thread_loops {
  const loom_stmt *loops[64];
  int n;
} thread_loops;

/* Does e use the variable of a loop around it whose threads share b's
 * memory? Such a minimum would give each thread its own offset into the
 * one buffer they share. */
static bool uses_sharing_thread(const loom_expr *e, const loom_buffer *b,
                                const thread_loops *T) {
  for (int i = 0; T && i < T->n; i++)
    if (loom_ir_scope_is_shared_by(b->scope, T->loops[i]->u.loop.thread) &&
        loom_ir_expr_uses(e, T->loops[i]->u.loop.var))
      return true;
  return false;
}

/* storage_align: the blocks among stmts that write b and ask, through
 * their buffer_dim_align annotation ([write index, axis, factor, offset]
 * entries), that a dimension's stride be factor * k + offset. */
typedef struct dim_aligns {
  const loom_buffer *b;
  int64_t factor[8], offset[8]; /* by axis; factor 0: none */
  bool any;
} dim_aligns;

static loom_visit find_aligns(void *ctx, loom_stmt *s) {
  dim_aligns *A = ctx;
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  const loom_block *blk = s->u.realize.block;
  const loom_value *v = loom_ir_attr_get(blk->annotations, blk->n_annotations,
                                         "buffer_dim_align");
  for (int i = 0; v && v->kind == LOOM_VALUE_LIST && i < v->n_items; i++) {
    const loom_value *e = v->items[i];
    int64_t f[4];
    bool ok = e->kind == LOOM_VALUE_LIST && e->n_items == 4;
    for (int k = 0; ok && k < 4; k++)
      ok = e->items[k]->kind == LOOM_VALUE_EXPR && loom_ir_is_const_int(e->items[k]->expr, &f[k]);
    if (ok && f[0] >= 0 && f[0] < blk->n_writes && blk->writes[f[0]].buffer == A->b &&
        f[1] >= 0 && f[1] < A->b->ndim && f[1] < 8 && f[2] > 0) {
      A->factor[f[1]] = f[2];
      A->offset[f[1]] = f[3];
      A->any = true;
    }
  }
  return LOOM_VISIT_GO;
}

/* Row-major strides of shape with each aligned dimension's stride raised
 * to the next factor * k + offset (TVM's storage_align); NULL when a
 * dimension's extent is not a constant. */
static loom_expr **aligned_strides(loom_arena *a, loom_expr **shape, int ndim,
                                   const dim_aligns *A) {
  loom_expr **strides = loom_arena_alloc(a, (size_t)ndim * sizeof *strides);
  int64_t stride = 1, e;
  for (int k = ndim - 1; strides && k >= 0; k--) {
    if (k < 8 && A->factor[k]) {
      int64_t f = A->factor[k], r = ((A->offset[k] - stride) % f + f) % f;
      stride += r;
    }
    if (!(strides[k] = loom_ir_int(a, shape[k]->dtype, stride)) ||
        !loom_ir_is_const_int(shape[k], &e) || e > INT32_MAX / (stride ? stride : 1))
      return NULL;
    stride *= e;
  }
  return strides;
}

static loom_status compact_one(loom_arena *a, loom_arith_ctx *ctx,
                               const loom_stmt *const *stmts, int n,
                               const loom_buffer *b, const thread_loops *T,
                               lower_compactions *C) {
  if (b->ndim == 0 || b->n_strides > 0 || b->n_axis_separators > 0 ||
      b->is_auto_broadcast)
    return LOOM_OK;
  int64_t off;
  if (b->elem_offset && !(loom_ir_is_const_int(b->elem_offset, &off) && off == 0))
    return LOOM_OK;
  lower_touch t;
  TRY(lower_touch_eval(a, ctx, stmts, n, b, LOWER_TOUCH_ANY, NULL, &t));
  if (!t.is_found || t.is_escaped)
    return LOOM_OK;
  loom_expr **shape = loom_arena_alloc(a, (size_t)b->ndim * sizeof *shape);
  loom_expr **mins = loom_arena_alloc(a, (size_t)b->ndim * sizeof *mins);
  if (!shape || !mins)
    return LOOM_NOMEM;
  bool is_smaller = false;
  for (int k = 0; k < b->ndim; k++) {
    loom_dtype it = b->shape[k]->dtype;
    shape[k] = b->shape[k];
    mins[k] = loom_ir_int(a, it, 0);
    if (!mins[k])
      return LOOM_NOMEM;
    if (t.is_whole[k] || !t.is_set[k])
      continue;
    loom_arith_interval ext = loom_arith_bound(ctx, t.hull[k].extent);
    int64_t full;
    bool is_const = loom_ir_is_const_int(b->shape[k], &full);
    if (!ext.is_bounded || ext.max < 1 || (is_const && ext.max >= full) ||
        ext.max > INT32_MAX)
      continue;
    /* Against a dimension of symbolic size, only a constant tile: a bound
     * that follows the size is the largest value of its type. */
    int64_t tile;
    loom_expr *te = is_const ? NULL : loom_arith_simplify(a, ctx, t.hull[k].extent);
    if (!is_const && !te)
      return LOOM_NOMEM;
    if (!is_const && !(loom_ir_is_const_int(te, &tile) && tile == ext.max))
      continue;
    loom_expr *lo = loom_arith_simplify(a, ctx, t.hull[k].min);
    if (!lo)
      return LOOM_NOMEM;
    if (!is_plain_index(lo, 0) || uses_sharing_thread(lo, b, T))
      continue;
    shape[k] = loom_ir_int(a, it, ext.max);
    mins[k] = lo;
    is_smaller = true;
    if (!shape[k])
      return LOOM_NOMEM;
  }
  dim_aligns A = {.b = b};
  loom_ir_visitor v = {.stmt_pre = find_aligns, .ctx = &A};
  for (int i = 0; i < n; i++)
    loom_ir_visit_stmt(&v, stmts[i]);
  loom_expr **strides = A.any ? aligned_strides(a, shape, b->ndim, &A) : NULL;
  if (!is_smaller && !strides)
    return LOOM_OK;
  loom_buffer *c = loom_arena_dup(a, b, sizeof *c);
  if (!c)
    return LOOM_NOMEM;
  c->shape = shape;
  if (strides) {
    c->strides = strides;
    c->n_strides = b->ndim;
  }
  return add(C, b, c, mins);
}

static loom_status walk(loom_arena *a, loom_arith_ctx *ctx, const loom_stmt *s,
                        lower_compactions *C, thread_loops *T, int depth) {
  if (!s || depth > 4096)
    return LOOM_OK;
  const loom_block *b;
  switch (s->kind) {
  case LOOM_STMT_FOR: {
    bool is_thread = s->u.loop.kind == LOOM_FOR_THREAD_BINDING && T->n < 64;
    if (is_thread)
      T->loops[T->n++] = s;
    loom_status st = walk(a, ctx, s->u.loop.body, C, T, depth + 1);
    T->n -= is_thread;
    return st;
  }
  case LOOM_STMT_BLOCK_REALIZE: {
    b = s->u.realize.block;
    const loom_stmt *parts[2] = {b->init, b->body};
    for (int k = 0; k < b->n_alloc_buffers; k++)
      TRY(compact_one(a, ctx, parts, 2, b->alloc_buffers[k], T, C));
    TRY(walk(a, ctx, b->init, C, T, depth + 1));
    return walk(a, ctx, b->body, C, T, depth + 1);
  }
  case LOOM_STMT_IF:
    TRY(walk(a, ctx, s->u.if_.then_case, C, T, depth + 1));
    return walk(a, ctx, s->u.if_.else_case, C, T, depth + 1);
  case LOOM_STMT_SEQ:
    for (int k = 0; k < s->u.seq.n_stmts; k++)
      TRY(walk(a, ctx, s->u.seq.stmts[k], C, T, depth + 1));
    return LOOM_OK;
  case LOOM_STMT_LET: return walk(a, ctx, s->u.let.body, C, T, depth + 1);
  case LOOM_STMT_ALLOCATE: {
    const loom_stmt *inside = s->u.alloc.body;
    TRY(compact_one(a, ctx, &inside, 1, s->u.alloc.buffer, T, C));
    return walk(a, ctx, s->u.alloc.body, C, T, depth + 1);
  }
  case LOOM_STMT_DECL_BUFFER: return walk(a, ctx, s->u.alloc.body, C, T, depth + 1);
  case LOOM_STMT_ATTR: return walk(a, ctx, s->u.attr.body, C, T, depth + 1);
  case LOOM_STMT_ASSERT: return walk(a, ctx, s->u.assert_.body, C, T, depth + 1);
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return LOOM_OK;
  }
  return LOOM_OK;
}

loom_status lower_compact(loom_arena *a, loom_arith_ctx *ctx,
                          const loom_stmt *body, lower_compactions *out) {
  thread_loops T = {.n = 0};
  return walk(a, ctx, body, out, &T, 0);
}

const lower_compaction *lower_compaction_of(const lower_compactions *C,
                                            const loom_buffer *b) {
  int i = C ? loom_ptrmap_get(&C->index, b) : -1;
  return i < 0 ? NULL : &C->items[i];
}

void lower_compactions_free(lower_compactions *C) {
  loom_ptrmap_free(&C->index);
  free(C->items);
}

/* Declares each loop's and block iter var's constant range, so that the
 * extents of regions bound to constants. */
loom_status lower_bind_ranges(loom_arith_ctx *ctx, const loom_stmt *s,
                              int depth) {
  if (!s || depth > 4096)
    return LOOM_OK;
  int64_t lo, n;
  const loom_block *b;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    if (loom_ir_is_const_int(s->u.loop.min, &lo) &&
        loom_ir_is_const_int(s->u.loop.extent, &n) && n >= 1 &&
        lo <= INT64_MAX - n)
      TRY(loom_arith_bind(ctx, s->u.loop.var, lo, lo + n - 1, NULL));
    return lower_bind_ranges(ctx, s->u.loop.body, depth + 1);
  case LOOM_STMT_BLOCK_REALIZE:
    b = s->u.realize.block;
    for (int k = 0; k < b->n_iter_vars; k++) {
      const loom_range *r = &b->iter_vars[k].dom;
      if (loom_ir_is_const_int(r->min, &lo) && loom_ir_is_const_int(r->extent, &n) &&
          n >= 1 && lo <= INT64_MAX - n)
        TRY(loom_arith_bind(ctx, b->iter_vars[k].var, lo, lo + n - 1, NULL));
    }
    TRY(lower_bind_ranges(ctx, b->init, depth + 1));
    return lower_bind_ranges(ctx, b->body, depth + 1);
  case LOOM_STMT_IF:
    TRY(lower_bind_ranges(ctx, s->u.if_.then_case, depth + 1));
    return lower_bind_ranges(ctx, s->u.if_.else_case, depth + 1);
  case LOOM_STMT_SEQ:
    for (int k = 0; k < s->u.seq.n_stmts; k++)
      TRY(lower_bind_ranges(ctx, s->u.seq.stmts[k], depth + 1));
    return LOOM_OK;
  case LOOM_STMT_LET: return lower_bind_ranges(ctx, s->u.let.body, depth + 1);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return lower_bind_ranges(ctx, s->u.alloc.body, depth + 1);
  case LOOM_STMT_ATTR: return lower_bind_ranges(ctx, s->u.attr.body, depth + 1);
  case LOOM_STMT_ASSERT: return lower_bind_ranges(ctx, s->u.assert_.body, depth + 1);
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return LOOM_OK;
  }
  return LOOM_OK;
}
