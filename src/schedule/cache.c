/* cache_read / cache_write: a copy of a buffer in another storage scope, and
 * a block `<buffer>_<scope>` that copies the part that is needed between the
 * two. For a read cache the copy is filled after the buffer's writer and its
 * consumers read the copy; for a write cache the block writes the copy and
 * the new block writes it back before the first consumer. */
#include "schedule/sched_impl.h"

#include <string.h>

#define MAX_DIMS 16
#define MAX_CONSUMERS 64

/* Buffer replacement in the blocks that change. */
typedef struct swap {
  const loom_buffer *old;
  loom_buffer *new_buf;
  bool writes_too; /* stores and write regions as well as loads */
  loom_expr **offset; /* a compact cache: indices shift down by these */
  loom_arith_ctx *ctx;
} swap;

/* Whether reader reads a buffer writer writes. */
static bool reads_written(const loom_block *reader, const loom_block *writer) {
  for (int i = 0; i < writer->n_writes; i++)
    if (sched_block_reads(reader, writer->writes[i].buffer))
      return true;
  return false;
}

/* x - offset[i], simplified (`o * 32 + i - o * 32` is i); TVM simplifies
 * the index also when the offset is 0. */
static loom_expr *offset_by(loom_arena *a, loom_expr *x, const swap *w,
                            int i) {
  int64_t z;
  if (loom_ir_is_const_int(w->offset[i], &z) && z == 0)
    return loom_arith_simplify(a, w->ctx, x);
  loom_expr *d = loom_ir_binary(a, LOOM_EXPR_SUB, x, w->offset[i]);
  return d ? loom_arith_simplify(a, w->ctx, d) : NULL;
}

/* The indices shifted into a compact cache; idx itself for a full one. */
static loom_expr **shift(loom_arena *a, loom_expr **idx, int n,
                         const swap *w) {
  if (!w->offset)
    return idx;
  loom_expr **out = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  for (int i = 0; out && i < n; i++)
    if (!(out[i] = offset_by(a, idx[i], w, i)))
      return NULL;
  return out;
}

static loom_expr *swap_load(const sched_map *m, loom_arena *a,
                            loom_expr *load) {
  const swap *w = m->ctx;
  if (load->u.load.buffer != w->old)
    return load;
  loom_expr *c = loom_arena_alloc(a, sizeof *c);
  if (c) {
    *c = *load;
    c->u.load.buffer = w->new_buf;
    c->u.load.indices = shift(a, load->u.load.indices, load->u.load.n_indices, w);
  }
  return c && c->u.load.indices ? c : NULL;
}

static loom_stmt *swap_store(const sched_map *m, loom_arena *a, loom_stmt *s) {
  const swap *w = m->ctx;
  if (!w->writes_too || s->kind != LOOM_STMT_STORE ||
      s->u.store.buffer != w->old)
    return s;
  loom_stmt *c = loom_arena_alloc(a, sizeof *c);
  if (c) {
    *c = *s;
    c->u.store.buffer = w->new_buf;
    c->u.store.indices =
        shift(a, s->u.store.indices, s->u.store.n_indices, w);
  }
  return c && c->u.store.indices ? c : NULL;
}

static loom_buffer_region *swap_regions(loom_arena *a,
                                        const loom_buffer_region *r, int n,
                                        const swap *w) {
  loom_buffer_region *out = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++) {
    out[i] = r[i];
    if (r[i].buffer != w->old)
      continue;
    out[i].buffer = w->new_buf;
    if (!w->offset)
      continue;
    loom_range *rr = loom_arena_alloc(
        a, (size_t)(r[i].n_ranges ? r[i].n_ranges : 1) * sizeof *rr);
    if (!rr)
      return NULL;
    for (int j = 0; j < r[i].n_ranges; j++) {
      rr[j] = r[i].ranges[j];
      if (!(rr[j].min = offset_by(a, rr[j].min, w, j)))
        return NULL;
    }
    out[i].ranges = rr;
  }
  return out;
}

static loom_block *swap_block(const sched_map *m, loom_arena *a,
                              const loom_block *old, loom_block *b) {
  (void)old;
  const swap *w = m->ctx;
  loom_block *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *b;
  c->reads = swap_regions(a, b->reads, b->n_reads, w);
  c->writes = w->writes_too ? swap_regions(a, b->writes, b->n_writes, w)
                            : b->writes;
  /* A view of the buffer views the cache, as TVM's replacement has it */
  loom_match_buffer *mb = NULL;
  if (b->n_match_buffers) {
    mb = loom_arena_alloc(a, (size_t)b->n_match_buffers * sizeof *mb);
    for (int i = 0; mb && i < b->n_match_buffers; i++) {
      mb[i] = b->match_buffers[i];
      loom_buffer_region *s = swap_regions(a, &mb[i].source, 1, w);
      if (!s)
        return NULL;
      mb[i].source = *s;
    }
    if (!mb)
      return NULL;
    c->match_buffers = mb;
  }
  return c->reads && c->writes ? c : NULL;
}

/* The copy of buf in scope, named `<buf>_<scope>`. */
static loom_buffer *scoped_copy(loom_arena *a, const loom_buffer *buf,
                                const char *scope, const char *name) {
  loom_buffer *n = loom_arena_alloc(a, sizeof *n);
  loom_var *data = loom_arena_alloc(a, sizeof *data);
  if (!n || !data)
    return NULL;
  *n = *buf;
  *data = *buf->data;
  n->name = loom_arena_strdup(a, name);
  n->scope = loom_arena_strdup(a, scope);
  data->name = n->name;
  data->scope = n->scope;
  n->data = data;
  return n->name && n->scope ? n : NULL;
}

/* The block copying src[v] into dst[v] over region, under loops ax<k>. */
static loom_stmt *cache_stage(loom_arena *a, const char *name,
                              const loom_buffer_region *region,
                              loom_buffer *src, loom_buffer *dst,
                              bool compact, bool src_is_orig,
                              loom_arith_ctx *ctx, loom_diag *d,
                              loom_loc loc) {
  int n = region->n_ranges;
  loom_block *b = loom_ir_block(a, name);
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *vals);
  loom_expr **idx = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *idx);
  loom_expr **oidx = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *oidx);
  loom_range *rr = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *rr);
  loom_range *orr = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *orr);
  loom_buffer_region *reads = loom_arena_alloc(a, sizeof *reads);
  loom_buffer_region *writes = loom_arena_alloc(a, sizeof *writes);
  loom_var *ax[MAX_DIMS];
  loom_expr *pred = NULL;
  const loom_buffer *orig = src_is_orig ? src : dst;
  if (!b || !iters || !vals || !idx || !oidx || !rr || !orr || !reads ||
      !writes)
    return NULL;
  for (int i = 0; i < n; i++) {
    /* A compact cache spans the region: iters over its extents, the
     * original buffer indexed at min + v. */
    loom_expr *dim = compact ? region->ranges[i].extent : src->shape[i];
    char nm[32];
    snprintf(nm, sizeof nm, "ax%d", i);
    ax[i] = loom_ir_var(a, nm, region->ranges[i].extent->dtype);
    snprintf(nm, sizeof nm, "v%d", i);
    loom_var *v = loom_ir_var(a, nm, dim->dtype);
    if (!ax[i] || !v)
      return NULL;
    iters[i] = (loom_iter_var){v, {loom_ir_int(a, dim->dtype, 0), dim},
                               LOOM_ITER_SPATIAL};
    int64_t z;
    vals[i] = loom_ir_ref(a, ax[i]);
    if (!compact && (!loom_ir_is_const_int(region->ranges[i].min, &z) || z != 0))
      vals[i] = loom_ir_binary(a, LOOM_EXPR_ADD, region->ranges[i].min, vals[i]);
    idx[i] = loom_ir_ref(a, v);
    oidx[i] = idx[i];
    if (compact && (!loom_ir_is_const_int(region->ranges[i].min, &z) || z != 0))
      oidx[i] = loom_ir_binary(a, LOOM_EXPR_ADD, region->ranges[i].min,
                               loom_ir_ref(a, v));
    /* A region wider than the buffer (a predicated writer) is copied only
     * where it lies inside. */
    int64_t ext;
    if (loom_ir_is_const_int(region->ranges[i].extent, &ext) && ext > 0)
      loom_arith_bind(ctx, ax[i], 0, ext - 1, d);
    loom_expr *at = loom_ir_ref(a, ax[i]);
    if (!loom_ir_is_const_int(region->ranges[i].min, &z) || z != 0)
      at = loom_ir_binary(a, LOOM_EXPR_ADD, region->ranges[i].min, at);
    loom_expr *zero = loom_ir_int(a, at ? at->dtype : dim->dtype, 0);
    loom_expr *shape = orig->shape[i];
    int64_t sv;
    if (at && loom_ir_is_const_int(shape, &sv) && !loom_dtype_eq(shape->dtype, at->dtype))
      shape = loom_ir_int(a, at->dtype, sv); /* int64 loops over an int32 shape */
    loom_expr *ge = loom_ir_binary(a, LOOM_EXPR_LE, zero, at);
    loom_expr *lt = loom_ir_binary(a, LOOM_EXPR_LT, at, shape);
    if (!ge || !lt)
      return NULL;
    /* Only against constant shapes: with symbolic ones nothing is proven,
     * and TVM adds no predicate. */
    bool fixed = loom_ir_is_const_int(shape, NULL);
    if (fixed && loom_arith_can_prove(ctx, ge) != LOOM_ARITH_TRUE)
      pred = pred ? loom_ir_binary(a, LOOM_EXPR_AND, pred, ge) : ge;
    if (fixed && loom_arith_can_prove(ctx, lt) != LOOM_ARITH_TRUE)
      pred = pred ? loom_ir_binary(a, LOOM_EXPR_AND, pred, lt) : lt;
    rr[i] = (loom_range){idx[i], loom_ir_int(a, dim->dtype, 1)};
    orr[i] = (loom_range){oidx[i], rr[i].extent};
    if (!iters[i].dom.min || !vals[i] || !idx[i] || !oidx[i] || !rr[i].extent)
      return NULL;
  }
  *reads = (loom_buffer_region){src, src_is_orig ? orr : rr, n};
  *writes = (loom_buffer_region){dst, src_is_orig ? rr : orr, n};
  loom_expr **src_idx = src_is_orig ? oidx : idx;
  loom_expr **dst_idx = src_is_orig ? idx : oidx;
  loom_stmt *store = loom_ir_stmt(a, LOOM_STMT_STORE, loc);
  loom_expr *load = loom_ir_load(a, src, src_idx, n);
  loom_stmt *realize = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, loc);
  if (!store || !load || !realize)
    return NULL;
  store->u.store.buffer = dst;
  store->u.store.value = load;
  store->u.store.indices = dst_idx;
  store->u.store.n_indices = n;
  b->iter_vars = iters;
  b->n_iter_vars = n;
  b->reads = reads;
  b->n_reads = 1;
  b->writes = writes;
  b->n_writes = 1;
  b->body = store;
  realize->u.realize.block = b;
  realize->u.realize.iter_values = vals;
  realize->u.realize.n_iter_values = n;
  realize->u.realize.predicate = pred;
  loom_stmt *nest = realize;
  for (int i = n - 1; i >= 0; i--) {
    loom_stmt *l = loom_ir_stmt(a, LOOM_STMT_FOR, loc);
    loom_expr *zero = loom_ir_int(a, ax[i]->dtype, 0);
    if (!l || !zero)
      return NULL;
    l->u.loop.var = ax[i];
    l->u.loop.min = zero;
    l->u.loop.extent = region->ranges[i].extent;
    l->u.loop.kind = LOOM_FOR_SERIAL;
    l->u.loop.body = nest;
    nest = l;
  }
  return nest;
}

static loom_status cache(sched_call *c, bool is_write) {
  loom_arena *a = sched_arena(c->s);
  const char *what = is_write ? "write" : "read";
  sched_path p = {0};
  sched_stmt_list blocks = {0};
  loom_arith_ctx *ctx = NULL;
  TRY(sched_input_block(c, 0, &p));
  loom_status st = LOOM_OK;
  int64_t index = sched_attr_int(c, 0, -1);
  const char *scope = sched_attr_str(c, 1, "");
  int ri = p.n - 1;
  loom_stmt *realize = p.stmts[ri];
  const loom_block *b = realize->u.realize.block;
  int sc = sched_scope_index(&p, ri);
  int n_regions = is_write ? b->n_writes : b->n_reads;
  if (sc < 0) {
    st = sched_fail(c, "block '%s' is the root block", b->name);
    goto out;
  }
  if (index < 0 || index >= n_regions) {
    st = sched_fail(c, "block '%s' has %d %s regions; %s_buffer_index %lld "
                       "is not in [0, %d)",
                    b->name, n_regions, what, what, (long long)index,
                    n_regions);
    goto out;
  }
  if (!sched_is_storage_scope(scope)) {
    st = sched_fail(c, "\"%s\" is not a storage scope", scope);
    goto out;
  }
  loom_buffer *buf = is_write ? b->writes[index].buffer : b->reads[index].buffer;
  if (buf->ndim > MAX_DIMS) {
    st = sched_fail(c, "buffer '%s' has too many dimensions", buf->name);
    goto out;
  }
  /* A leaf block that reads what it writes (B[i] = B[i] + A[i]) would read
   * the cache before anything filled it. (A block with blocks inside may
   * read what an inner block wrote first; that is left to those.) */
  sched_stmt_list nested = {0};
  bool is_leaf = sched_collect_blocks(b->body, &nested) && nested.n == 0;
  free(nested.items);
  for (int i = 0; is_write && is_leaf && i < b->n_reads; i++)
    if (b->reads[i].buffer == buf) {
      st = sched_fail(c, "block '%s' reads the buffer '%s' it writes (an "
                         "in-place update); its cache would be read before "
                         "it is filled",
                      b->name, buf->name);
      goto out;
    }
  loom_stmt *sroot = p.stmts[sc];
  loom_block *sblock = sroot->u.realize.block;
  if (!sched_collect_blocks(sblock->body, &blocks)) {
    st = sched_nomem(c);
    goto out;
  }
  /* The buffer's writer in the scope, and the given consumers. */
  loom_stmt *writer = NULL;
  int n_writers = 0;
  for (int i = 0; i < blocks.n; i++)
    if (sched_block_writes(blocks.items[i]->u.realize.block, buf)) {
      writer = blocks.items[i];
      n_writers++;
    }
  if (n_writers > 1 || (is_write && writer != realize)) {
    st = sched_fail(c, "buffer '%s' must be written by a single block of "
                       "the scope, but %d blocks write it",
                    buf->name, n_writers);
    goto out;
  }
  loom_stmt *given[MAX_CONSUMERS];
  int n_given = 0;
  const loom_tval *list = c->n_inputs > 1 ? &c->inputs[1] : NULL;
  for (int i = 0; list && list->kind == LOOM_TV_LIST && i < list->n; i++) {
    const loom_tval *v = &list->items[i];
    const sched_rv *rv = v->kind == LOOM_TV_RV && v->i >= 0 &&
                                 v->i < c->s->n_rvs
                             ? &c->s->rvs[v->i]
                             : NULL;
    loom_stmt *found = NULL;
    int seen = 0; /* blocks may share a name: the rv's nth one */
    for (int k = 0; rv && rv->kind == LOOM_RV_BLOCK && rv->func == p.func &&
                    k < blocks.n && !found;
         k++)
      if (!strcmp(blocks.items[k]->u.realize.block->name, rv->block) &&
          seen++ == rv->nth)
        found = blocks.items[k];
    if (!found) {
      st = sched_fail(c, "consumer %d is not a block of the scope of block "
                         "'%s'",
                      i, b->name);
      goto out;
    }
    if (n_given == MAX_CONSUMERS) {
      st = sched_fail(c, "too many consumer blocks");
      goto out;
    }
    given[n_given++] = found;
  }
  /* Related blocks: the given consumers, else every block after the
   * buffer's writer that reads what the writer writes, this buffer or
   * another (TVM's read-after-write dependences of the writer). */
  loom_stmt **related = malloc((size_t)(blocks.n + 1) * sizeof *related);
  int n_related = 0;
  if (!related) {
    st = sched_nomem(c);
    goto out;
  }
  if (n_given && !is_write) {
    memcpy(related, given, (size_t)n_given * sizeof *related);
    n_related = n_given;
  } else {
    /* A write cache's given consumers read the cache: the copy back must
     * precede only the others. */
    bool after = false;
    for (int i = 0; writer && i < blocks.n; i++) {
      bool is_given = false;
      for (int k = 0; k < n_given; k++)
        is_given |= given[k] == blocks.items[i];
      if (blocks.items[i] == writer)
        after = true;
      else if (after && !is_given &&
               reads_written(blocks.items[i]->u.realize.block, writer->u.realize.block))
        related[n_related++] = blocks.items[i];
    }
  }
  loom_stmt *loc = NULL;
  int pos;
  loom_stmt *body = sblock->body, *at = body;
  if (!writer) {
    pos = 0; /* an input of the scope: copied first */
  } else if (n_related == 0) {
    pos = body->kind == LOOM_STMT_SEQ ? body->u.seq.n_stmts : 1;
  } else {
    sched_place l = {NULL, -1, NULL};
    if (!sched_place_stage(body, writer, related, n_related, &l))
      l.pos = -1;
    /* Consumers that all run before the buffer's writer read the value it
     * had on entry to the scope: their copy is made first, as TVM does. */
    bool all_before = true;
    for (int i = 0, after = 0; i < blocks.n; i++) {
      after |= blocks.items[i] == writer;
      for (int k = 0; after && k < n_related; k++)
        all_before &= related[k] != blocks.items[i];
    }
    if (l.pos < 0 && !is_write && all_before)
      l = (sched_place){body, 0, NULL};
    if (l.pos < 0) {
      free(related);
      st = sched_fail(c, "no place for the cache of '%s' between its writer "
                         "'%s' and its consumers",
                      buf->name, writer->u.realize.block->name);
      goto out;
    }
    pos = l.pos;
    loc = l.loc;
    at = l.at;
  }
  free(related);

  /* The region to copy: what the writer writes in one iteration of loc. */
  loom_buffer_region region;
  const loom_buffer_region *declared = NULL;
  for (int i = 0; !writer && i < sblock->n_reads; i++)
    if (sblock->reads[i].buffer == buf)
      declared = &sblock->reads[i];
  if (declared && declared->n_ranges == buf->ndim) {
    /* An input of a scope block that declares what it reads of it: that
     * region, as TVM's cache takes it (one instance of an outer block) */
    region = *declared;
  } else if (!writer) {
    loom_range *rr = loom_arena_alloc(a, (size_t)(buf->ndim + 1) * sizeof *rr);
    if (!rr) {
      st = sched_nomem(c);
      goto out;
    }
    for (int i = 0; i < buf->ndim; i++)
      rr[i] = (loom_range){loom_ir_int(a, buf->shape[i]->dtype, 0),
                           buf->shape[i]};
    region = (loom_buffer_region){buf, rr, buf->ndim};
  } else {
    loom_stmt *outer[SCHED_MAX_DEPTH], *inner[SCHED_MAX_DEPTH];
    int n_outer = 0, n_inner = 0;
    if (loc)
      sched_find_under(body, loc, outer, &n_outer);
    sched_find_under(loc ? loc->u.loop.body : body, writer, inner, &n_inner);
    ctx = loom_arith_ctx_new();
    if (!ctx) {
      st = sched_nomem(c);
      goto out;
    }
    for (int i = 0; i < sc; i++)
      if (p.stmts[i]->kind == LOOM_STMT_FOR && n_outer < SCHED_MAX_DEPTH)
        outer[n_outer++] = p.stmts[i];
    if (loc && n_outer < SCHED_MAX_DEPTH)
      outer[n_outer++] = loc;
    for (int i = 0; i < n_outer; i++) {
      int64_t mn, ext;
      if (outer[i]->kind == LOOM_STMT_FOR &&
          loom_ir_is_const_int(outer[i]->u.loop.min, &mn) &&
          loom_ir_is_const_int(outer[i]->u.loop.extent, &ext) && ext > 0)
        loom_arith_bind(ctx, outer[i]->u.loop.var, mn, mn + ext - 1, c->d);
    }
    loom_arith_relax relax[SCHED_MAX_DEPTH];
    for (int i = 0; i < n_inner; i++)
      relax[i] = (loom_arith_relax){inner[i]->u.loop.var,
                                    {inner[i]->u.loop.min,
                                     inner[i]->u.loop.extent}};
    bool found = false;
    st = loom_arith_block_region(a, ctx, writer, buf, true, relax, n_inner,
                                 &region, NULL, &found, c->d);
    if (st != LOOM_OK)
      goto out;
    if (!found) {
      st = sched_fail(c, "block '%s' declares no region of '%s'",
                      writer->u.realize.block->name, buf->name);
      goto out;
    }
    for (int i = 0; i < region.n_ranges; i++) {
      region.ranges[i].min = loom_arith_simplify(a, ctx, region.ranges[i].min);
      region.ranges[i].extent =
          loom_arith_simplify(a, ctx, region.ranges[i].extent);
      if (!region.ranges[i].min || !region.ranges[i].extent) {
        st = sched_nomem(c);
        goto out;
      }
    }
  }
  /* Constant regions stay inside the buffer (a predicated writer may
   * cover more). */
  for (int i = 0; i < region.n_ranges && i < buf->ndim; i++) {
    int64_t mn, ext, dim;
    if (!loom_ir_is_const_int(region.ranges[i].min, &mn) ||
        !loom_ir_is_const_int(region.ranges[i].extent, &ext) ||
        !loom_ir_is_const_int(buf->shape[i], &dim))
      continue;
    int64_t lo = mn < 0 ? 0 : mn, hi = mn + ext > dim ? dim : mn + ext;
    if ((lo != mn || hi != mn + ext) && hi > lo) {
      region.ranges[i].min = loom_ir_int(a, region.ranges[i].min->dtype, lo);
      region.ranges[i].extent =
          loom_ir_int(a, region.ranges[i].extent->dtype, hi - lo);
      if (!region.ranges[i].min || !region.ranges[i].extent) {
        st = sched_nomem(c);
        goto out;
      }
    }
  }
  if (region.n_ranges != buf->ndim) {
    st = sched_fail(c, "the region of '%s' does not match its shape",
                    buf->name);
    goto out;
  }

  char name[256];
  snprintf(name, sizeof name, "%s_%s", buf->name, scope);
  /* Placed at the scope block (not under a loop), the cache holds only the
   * region, as TVM makes it, whether or not that block allocates the
   * buffer. */
  bool compact = !loc;
  loom_buffer *nb = scoped_copy(a, buf, scope, name);
  loom_expr **offset = NULL;
  if (nb && compact) {
    loom_expr **shape = loom_arena_alloc(a, (size_t)(buf->ndim + 1) * sizeof *shape);
    offset = loom_arena_alloc(a, (size_t)(buf->ndim + 1) * sizeof *offset);
    if (!shape || !offset)
      nb = NULL;
    for (int i = 0; nb && i < buf->ndim; i++) {
      shape[i] = region.ranges[i].extent;
      offset[i] = region.ranges[i].min;
    }
    if (nb) {
      nb->shape = shape;
      nb->strides = NULL;
      nb->n_strides = 0;
    }
    if (nb && !sched_keep_offset_type(a, buf, nb))
      nb = NULL;
  }
  if (!nb) {
    st = sched_nomem(c);
    goto out;
  }
  if (!ctx && !(ctx = loom_arith_ctx_new())) {
    st = sched_nomem(c);
    goto out;
  }
  /* The iters of the blocks around run over their domains. */
  for (int i = 0; i <= sc; i++) {
    const loom_stmt *x = p.stmts[i];
    const loom_block *xb =
        x->kind == LOOM_STMT_BLOCK_REALIZE ? x->u.realize.block : NULL;
    for (int k = 0; xb && k < xb->n_iter_vars; k++) {
      int64_t mn, ext;
      if (loom_ir_is_const_int(xb->iter_vars[k].dom.min, &mn) &&
          loom_ir_is_const_int(xb->iter_vars[k].dom.extent, &ext) && ext > 0)
        loom_arith_bind(ctx, xb->iter_vars[k].var, mn, mn + ext - 1, c->d);
    }
  }
  loom_stmt *stage =
      is_write ? cache_stage(a, nb->name, &region, nb, buf, compact, false,
                             ctx, c->d, realize->loc)
               : cache_stage(a, nb->name, &region, buf, nb, compact, true,
                             ctx, c->d, realize->loc);
  /* Blocks to rewrite: a read cache's consumers (the given ones, else every
   * reader but the writer); a write cache's writer, and the given
   * consumers. */
  if (!ctx && !(ctx = loom_arith_ctx_new())) {
    st = sched_nomem(c);
    goto out;
  }
  swap reads_only = {buf, nb, false, offset, ctx},
       all = {buf, nb, true, offset, ctx};
  /* The buffer's data pointer, passed to an intrinsic, points at the
   * cache where the cache lays the elements it holds out as the buffer
   * does: a compact cache from the buffer's origin whose rows are whole
   * (it may hold fewer of them). */
  bool same_layout = true;
  for (int i = 0; offset && i < buf->ndim; i++) {
    int64_t o, e, d;
    same_layout &= loom_ir_is_const_int(offset[i], &o) && o == 0 &&
                   loom_ir_is_const_int(nb->shape[i], &e) &&
                   loom_ir_is_const_int(buf->shape[i], &d) && (e == d || i == 0);
  }
  const loom_var *data[1] = {buf->data};
  loom_expr *cache_data[1] = {same_layout ? loom_ir_ref(a, nb->data) : NULL};
  int n_data = buf->data && cache_data[0] ? 1 : 0;
  sched_map m_reads = {.vars = data, .values = cache_data, .n = n_data,
                       .on_load = swap_load, .on_block = swap_block,
                       .on_stmt = swap_store, .ctx = &reads_only};
  sched_map m_all = {.vars = data, .values = cache_data, .n = n_data,
                     .on_load = swap_load, .on_block = swap_block,
                     .on_stmt = swap_store, .ctx = &all};
  loom_stmt **targets = malloc((size_t)(blocks.n + 1) * sizeof *targets);
  loom_stmt **repls = malloc((size_t)(blocks.n + 1) * sizeof *repls);
  int nt = 0;
  bool nomem = !stage || !targets || !repls;
  for (int i = 0; !nomem && i < blocks.n; i++) {
    loom_stmt *x = blocks.items[i];
    bool is_given = false;
    for (int k = 0; k < n_given; k++)
      is_given |= given[k] == x;
    const sched_map *m = NULL;
    if (is_write && x == writer)
      m = &m_all;
    else if (is_write ? is_given
                      : (n_given ? is_given
                                 : x != writer &&
                                       sched_block_reads(x->u.realize.block,
                                                         buf)))
      m = &m_reads;
    if (!m)
      continue;
    targets[nt] = x;
    nomem = !(repls[nt++] = sched_subst_stmt(a, x, m));
  }
  sched_place place = {at, pos, loc};
  loom_stmt *new_body =
      nomem ? NULL
            : sched_insert_stage(a, body, &place, stage, targets, repls, nt);
  free(targets);
  free(repls);
  loom_block *ns = loom_arena_alloc(a, sizeof *ns);
  loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
  loom_buffer **allocs = loom_arena_alloc(
      a, (size_t)(sblock->n_alloc_buffers + 1) * sizeof *allocs);
  if (!new_body || !ns || !nr || !allocs) {
    st = sched_nomem(c);
    goto out;
  }
  if (sblock->n_alloc_buffers)
    memcpy(allocs, sblock->alloc_buffers,
           (size_t)sblock->n_alloc_buffers * sizeof *allocs);
  allocs[sblock->n_alloc_buffers] = nb;
  *ns = *sblock;
  ns->body = new_body;
  ns->alloc_buffers = allocs;
  ns->n_alloc_buffers = sblock->n_alloc_buffers + 1;
  *nr = *sroot;
  nr->u.realize.block = ns;
  if (!(c->mod = sched_replace(a, c->mod, &p, sc, nr))) {
    st = sched_nomem(c);
    goto out;
  }
  st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = p.func,
                                    .block = nb->name});
out:
  loom_arith_ctx_free(ctx);
  free(blocks.items);
  sched_path_free(&p);
  return st;
}

loom_status sched_apply_cache_read(sched_call *c) { return cache(c, false); }

loom_status sched_apply_cache_write(sched_call *c) { return cache(c, true); }
