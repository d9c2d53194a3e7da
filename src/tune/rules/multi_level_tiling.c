/* MultiLevelTiling with structure "SSRSRS" (MetaSchedule's CPU default):
 * every spatial loop of a block with data reuse is split into four tiles
 * and every reduction loop into two by sample_perfect_tile (innermost
 * factor at most 64), the tiles are reordered level by level, and the
 * result branches three ways on a write cache: none, or a "global"
 * cache_write whose copy-back goes under the last loop of tile level 1 or
 * of level 2. When the block's only consumer is already such a copy (an
 * elementwise epilogue: bias, ReLU), that consumer is moved there instead
 * (reverse_compute_at), and the unmoved schedule comes last. */
#include "tune/space_impl.h"

#include <stdio.h>
#include <string.h>

static const char structure[] = "SSRSRS";
#define N_LEVELS 6
static const int write_levels[] = {1, 2};
#define N_WRITE_LEVELS (int)(sizeof write_levels / sizeof *write_levels)

typedef struct tiling {
  loom_sched_rv block;
  loom_sched_rv tiles[N_LEVELS][SPACE_MAX_LOOPS];
  int n_tiles[N_LEVELS];
  const loom_var *packed; /* the iter whose innermost tile is fixed, or NULL */
  int64_t lanes;          /* that tile */
} tiling;

/* Splits every loop into its tiles and reorders them by level. */
static loom_status tile(const space_ctx *x, loom_sched *t,
                        const space_block *sb, loom_sched_rv block,
                        tiling *tl, loom_diag *d) {
  tl->block = block;
  return space_tile_levels(x, t, sb, block, structure, tl->tiles, tl->n_tiles, tl->packed,
                           tl->lanes, d);
}

/* The write cache of level `level`: cache_write, then the copy-back under
 * the last loop of tile level level - 1. */
static loom_status write_cache(loom_sched *u, const tiling *tl, int level,
                               loom_diag *d) {
  int l = level - 1;
  if (tl->n_tiles[l] == 0)
    return loom_diag_error(d, (loom_loc){0}, "no loop at tile level %d", l);
  loom_tval in[2] = {loom_tval_rv(tl->block), {.kind = LOOM_TV_LIST}};
  loom_tval attrs[2] = {loom_tval_int(0), loom_tval_str("global")};
  const loom_sched_rv *cache;
  TRY(space_apply(u, LOOM_INST_CACHE_WRITE, in, 2, attrs, 2, &cache, NULL, d));
  return space_reverse_compute_at(u, cache[0], tl->tiles[l][tl->n_tiles[l] - 1], d);
}

/* Moves the consumer copy under the last loop of tile level level - 1. */
static loom_status move_consumer(loom_sched *u, const tiling *tl,
                                 loom_sched_rv consumer, int level,
                                 loom_diag *d) {
  int l = level - 1;
  if (tl->n_tiles[l] == 0)
    return loom_diag_error(d, (loom_loc){0}, "no loop at tile level %d", l);
  return space_reverse_compute_at(u, consumer, tl->tiles[l][tl->n_tiles[l] - 1], d);
}

/* The index of b's last spatial iter (the one the postprocessor
 * vectorizes), or -1. */
static int last_spatial(const loom_block *b) {
  int last = -1;
  for (int i = 0; i < b->n_iter_vars; i++)
    if (b->iter_vars[i].kind == LOOM_ITER_SPATIAL)
      last = i;
  return last;
}

/* Starts an index map over b's iters: "lambda v0, v1, v2: (". */
static size_t map_start(const loom_block *b, char *map, size_t n) {
  size_t len = (size_t)snprintf(map, n, "lambda");
  for (int i = 0; i < b->n_iter_vars && len < n; i++)
    len += (size_t)snprintf(map + len, n - len, "%s v%d", i ? "," : "", i);
  return len + (len < n ? (size_t)snprintf(map + len, n - len, ": (") : 0);
}

/* A read the vectors would gather: a buffer indexed by plain iters where
 * the block's last spatial iter (the one the postprocessor vectorizes)
 * indexes a dimension other than the last, as B[vj, vk] of a matmul with B
 * transposed. Returns its index among the reads and writes into map the
 * layout that puts that iter last ("lambda v0, v1, v2: (v2, v1)"), or -1. */
static int gathered_read(const loom_block *b, char *map, size_t n) {
  int last = last_spatial(b);
  if (last < 0)
    return -1;
  for (int r = 0; r < b->n_reads; r++) {
    const loom_buffer_region *rd = &b->reads[r];
    int at[SPACE_MAX_LOOPS], pos = -1, k;
    int64_t one;
    for (k = 0; k < rd->n_ranges && k < SPACE_MAX_LOOPS; k++) {
      const loom_expr *m = rd->ranges[k].min;
      at[k] = m->kind == LOOM_EXPR_VAR ? space_iter_index(b, m->u.var) : -1;
      if (at[k] < 0 || !loom_ir_is_const_int(rd->ranges[k].extent, &one) || one != 1)
        break;
      if (at[k] == last)
        pos = k;
    }
    if (k < rd->n_ranges || pos < 0 || pos == rd->n_ranges - 1)
      continue;
    size_t len = map_start(b, map, n);
    for (k = 0; k < rd->n_ranges && len < n; k++)
      if (k != pos)
        len += (size_t)snprintf(map + len, n - len, "v%d, ", at[k]);
    if (len < n)
      snprintf(map + len, n - len, "v%d)", last);
    return len < n ? r : -1;
  }
  return -1;
}

/* A read worth packing: every dimension a single point at a distinct iter
 * var, one of them the block's last spatial iter (which the postprocessor
 * vectorizes), and some spatial iter of extent > 1 indexing none of it, so
 * the copy is read again and again: B[vk, vj] of a matmul, reused across
 * vi, or B[vj, vk] of one with B transposed. Its index among the reads, or
 * -1; *pos gets the dimension the last spatial iter indexes. */
static int packed_read(const loom_block *b, int *pos) {
  int last = last_spatial(b);
  if (last < 0)
    return -1;
  for (int r = 0; r < b->n_reads; r++) {
    const loom_buffer_region *rd = &b->reads[r];
    int n = rd->n_ranges;
    int64_t one;
    bool ok = n >= 2 && rd->buffer != b->writes[0].buffer;
    *pos = -1;
    for (int k = 0; ok && k < n; k++) {
      const loom_expr *m = rd->ranges[k].min;
      ok = m->kind == LOOM_EXPR_VAR &&
           loom_ir_is_const_int(rd->ranges[k].extent, &one) && one == 1;
      if (ok && m->u.var == b->iter_vars[last].var)
        *pos = k;
      for (int j = 0; ok && j < k; j++)
        ok = rd->ranges[j].min->u.var != m->u.var;
    }
    bool is_reused = false;
    for (int i = 0; ok && *pos >= 0 && i < b->n_iter_vars && !is_reused; i++) {
      int64_t ext;
      is_reused = b->iter_vars[i].kind == LOOM_ITER_SPATIAL &&
                  !(loom_ir_is_const_int(b->iter_vars[i].dom.extent, &ext) && ext == 1) &&
                  !space_region_uses(rd, b->iter_vars[i].var);
    }
    if (ok && is_reused)
      return r;
  }
  return -1;
}

static loom_status tile_block(const space_ctx *x, loom_sched *s,
                              const space_block *sb, loom_sched_rv rv,
                              int packed, int64_t lanes, space_list *out);

/* The index among sb's loops of the one moving dimension k of read rd,
 * or -1. */
static int copy_loop(const space_block *sb, const loom_buffer_region *rd, int k) {
  const loom_expr *m = rd->ranges[k].min;
  for (int i = 0; m->kind == LOOM_EXPR_VAR && i < sb->n_loops; i++)
    if (space_unit_iter(sb, sb->loops[i]->u.loop.var) == m->u.var)
      return i;
  return -1;
}

/* The copy of a packed read: the loop moving the packed iter (the read's
 * dimension pos) split by the lanes, the lanes innermost, where
 * RewriteParallelVectorizeUnroll vectorizes them (it parallelizes the
 * outer loops). The copy moves blocks of lanes x lanes: a transposing one
 * (pos not the last dimension) goes block of lanes by block of lanes, its
 * outer part outermost, reading lanes source rows in order; one that does
 * not has the dimension before pos split by the lanes as well and reads a
 * block of that many rows at a time, each in order, where its extent
 * allows. Either way it writes in order and reads each source line while
 * it is in cache; read a line per row and lane down the whole buffer, a
 * 2048 x 2048 copy took 2.3 ms on one core instead of 1.4. */
static loom_status lay_out_copy(loom_sched *p, loom_sched_rv copy, int pos, int64_t lanes,
                                loom_diag *d) {
  const loom_block *cb = loom_sched_rv_block(p, copy);
  space_block sb;
  if (!cb || !space_find_block(space_func(p), cb->name, &sb) || cb->n_reads != 1 ||
      pos >= cb->reads[0].n_ranges)
    return loom_diag_error(d, (loom_loc){0}, "no packed copy");
  const loom_buffer_region *rd = &cb->reads[0];
  bool is_transposing = pos != rd->n_ranges - 1;
  int at = copy_loop(&sb, rd, pos);
  int row = is_transposing || pos == 0 ? -1 : copy_loop(&sb, rd, pos - 1);
  int64_t ext, row_ext;
  if (at < 0 || !loom_ir_is_const_int(sb.loops[at]->u.loop.extent, &ext))
    return loom_diag_error(d, (loom_loc){0}, "no loop over the packed lanes");
  if (row >= 0 && !(loom_ir_is_const_int(sb.loops[row]->u.loop.extent, &row_ext) &&
                    row_ext % lanes == 0 && row_ext > lanes))
    row = -1;
  const loom_sched_rv *lp, *parts;
  int n;
  TRY(loom_sched_get_loops(p, copy, &lp, &n, d));
  if (n > SPACE_MAX_LOOPS - 2)
    return loom_diag_error(d, (loom_loc){0}, "a packed copy of %d loops", n);
  loom_sched_rv loops[SPACE_MAX_LOOPS], order[SPACE_MAX_LOOPS];
  memcpy(loops, lp, (size_t)n * sizeof *loops);
  loom_tval f[2] = {loom_tval_int(ext / lanes), loom_tval_int(lanes)};
  TRY(loom_sched_split(p, loops[at], f, 2, true, false, &parts, d));
  loom_sched_rv outer = parts[0], inner = parts[1], row_outer = -1, row_inner = -1;
  if (row >= 0) {
    loom_tval g[2] = {loom_tval_int(row_ext / lanes), loom_tval_int(lanes)};
    TRY(loom_sched_split(p, loops[row], g, 2, true, false, &parts, d));
    row_outer = parts[0], row_inner = parts[1];
  }
  int m = 0;
  if (is_transposing)
    order[m++] = outer;
  for (int i = 0; i < n; i++)
    if (i != at && i != row)
      order[m++] = loops[i];
  if (row >= 0)
    order[m++] = row_outer;
  if (!is_transposing)
    order[m++] = outer;
  if (row >= 0)
    order[m++] = row_inner;
  order[m++] = inner;
  bool is_in_order = n == 1 || (!is_transposing && row < 0 && at == n - 1);
  return is_in_order ? LOOM_OK : loom_sched_reorder(p, order, m, d);
}

/* The packed layout of read rd of b (single points at iter vars), the
 * packed iter at dimension pos, for lanes l: B[vk, vj] becomes
 * B_global[vj // l, vk, vj % l], and B[vj, vk] the same. */
static bool pack_map(const loom_block *b, const loom_buffer_region *rd, int pos, int64_t l,
                     char *map, size_t n) {
  int last = space_iter_index(b, rd->ranges[pos].min->u.var);
  size_t len = map_start(b, map, n);
  if (len < n)
    len += (size_t)snprintf(map + len, n - len, "v%d // %lld", last, (long long)l);
  for (int k = 0; k < rd->n_ranges && len < n; k++)
    if (k != pos)
      len += (size_t)snprintf(map + len, n - len, ", v%d",
                              space_iter_index(b, rd->ranges[k].min->u.var));
  if (len < n)
    len += (size_t)snprintf(map + len, n - len, ", v%d %% %lld)", last, (long long)l);
  return len < n;
}

/* Makes block rv of p read its read r (packed_read's, the packed iter at
 * dimension pos) through a copy packed by the target's vector lanes
 * (*lanes), and says which iter (*packed) the lanes divide; an error when
 * the lanes do not fit or a step is refused. */
static loom_status pack(const space_ctx *x, loom_sched *p, const space_block *sb,
                        loom_sched_rv rv, int r, int pos, int *packed, int64_t *lanes,
                        loom_diag *d) {
  const loom_block *b = sb->block;
  const loom_buffer_region *rd = &b->reads[r];
  const loom_buffer *buf = rd->buffer;
  int nd = rd->n_ranges;
  int bytes = buf->dtype.bits / 8 * (buf->dtype.lanes > 0 ? buf->dtype.lanes : 1);
  *lanes = bytes > 0 && x->target->cpu.vector_bytes >= bytes ? x->target->cpu.vector_bytes / bytes : 0;
  *packed = space_iter_index(b, rd->ranges[pos].min->u.var);
  /* The lanes must divide the buffer's packed dimension and the iter's
   * domain, which the block's loop over vj then splits evenly. */
  int64_t dim, ext;
  if (*lanes < 2 || *packed < 0 || pos >= nd || !loom_ir_is_const_int(buf->shape[pos], &dim) ||
      dim % *lanes != 0 || !loom_ir_is_const_int(b->iter_vars[*packed].dom.extent, &ext) ||
      ext % *lanes != 0)
    return loom_diag_error(d, (loom_loc){0}, "no read to pack");
  char map[256];
  if (!pack_map(b, rd, pos, *lanes, map, sizeof map))
    return loom_diag_error(d, (loom_loc){0}, "no read to pack");
  loom_tval in = loom_tval_rv(rv);
  loom_tval attrs[3] = {loom_tval_int(r), loom_tval_str("global"), loom_tval_str(map)};
  const loom_sched_rv *copy;
  TRY(space_apply(p, LOOM_INST_REINDEX_CACHE_READ, &in, 1, attrs, 3, &copy, NULL, d));
  return lay_out_copy(p, copy[0], pos, *lanes, d);
}

/* The tiled schedules of the block; when a read is worth packing, then
 * the same again reading it through the packed copy. */
static loom_status tile_maybe_packed(const space_ctx *x, loom_sched *s,
                                     const space_block *sb, loom_sched_rv rv,
                                     space_list *out) {
  /* p shares s's IR, which sb points into, and outlives s. */
  int pos = -1;
  int r = packed_read(sb->block, &pos);
  loom_sched *p = r >= 0 ? loom_sched_copy(s) : NULL;
  loom_status st = tile_block(x, s, sb, rv, -1, 0, out);
  if (!p || st != LOOM_OK) {
    loom_sched_free(p);
    return st;
  }
  loom_diag d;
  loom_diag_init(&d);
  int packed = -1;
  int64_t lanes = 0;
  space_block pb;
  const loom_func *pf = NULL;
  st = pack(x, p, sb, rv, r, pos, &packed, &lanes, &d);
  loom_diag_free(&d);
  if (st == LOOM_OK && (pf = space_func(p)) && space_find_block(pf, sb->block->name, &pb) &&
      space_needs_tiling(&pb))
    return tile_block(x, p, &pb, rv, packed, lanes, out);
  loom_sched_free(p);
  return st == LOOM_NOMEM ? st : LOOM_OK;
}

/* Tiles the block; when a read would be gathered, the space branches on
 * reading it through a copy in the layout the vectors want (the copy runs
 * once, before the block: N x K against the M x N x K of a matmul), and
 * on one packed by the lanes (tile_maybe_packed). */
static loom_status apply(const space_ctx *x, loom_sched *s, const char *name,
                         loom_sched_rv rv, space_list *out) {
  space_block sb;
  const loom_func *f = space_func(s);
  if (!f || !space_find_block(f, name, &sb) || !space_needs_tiling(&sb))
    return space_list_push(out, s);
  char map[256];
  int r = gathered_read(sb.block, map, sizeof map);
  loom_sched *p = r >= 0 ? loom_sched_copy(s) : NULL;
  if (p) {
    loom_diag d;
    loom_diag_init(&d);
    loom_tval in = loom_tval_rv(rv);
    loom_tval attrs[3] = {loom_tval_int(r), loom_tval_str("global"), loom_tval_str(map)};
    space_block pb;
    const loom_func *pf = NULL;
    loom_status st = space_apply(p, LOOM_INST_REINDEX_CACHE_READ, &in, 1, attrs, 3,
                                 NULL, NULL, &d);
    loom_diag_free(&d);
    if (st == LOOM_OK && (pf = space_func(p)) && space_find_block(pf, name, &pb) &&
        space_needs_tiling(&pb)) {
      if ((st = tile_block(x, p, &pb, rv, -1, 0, out)) != LOOM_OK) {
        loom_sched_free(s);
        return st;
      }
    } else {
      loom_sched_free(p);
      if (st == LOOM_NOMEM) {
        loom_sched_free(s);
        return st;
      }
    }
  }
  return tile_maybe_packed(x, s, &sb, rv, out);
}

/* The tiled schedules of the block, with and without write caches. */
static loom_status tile_block(const space_ctx *x, loom_sched *s,
                              const space_block *sbp, loom_sched_rv rv,
                              int packed, int64_t lanes, space_list *out) {
  space_block sb = *sbp;
  loom_sched *t = loom_sched_copy(s);
  if (!t) {
    loom_sched_free(s);
    return LOOM_NOMEM;
  }
  loom_diag d;
  loom_diag_init(&d);
  tiling tl;
  memset(&tl, 0, sizeof tl);
  if (packed >= 0) {
    tl.packed = sb.block->iter_vars[packed].var;
    tl.lanes = lanes;
  }
  loom_sched_rv consumer = -1;
  loom_status st = tile(x, t, &sb, rv, &tl, &d);
  if (st == LOOM_OK)
    st = space_write_cache_consumer(t, &sb, tl.block, &consumer, &d);
  if (st != LOOM_OK) {
    loom_diag_free(&d);
    loom_sched_free(t);
    if (st == LOOM_NOMEM) {
      loom_sched_free(s);
      return st;
    }
    return space_list_push(out, s);
  }
  loom_sched_free(s);
  /* Write reuse "may": the schedule without a cache comes first (last
   * when the consumer moves, as in TVM). */
  loom_sched *with_cache[N_WRITE_LEVELS] = {NULL};
  for (int i = 0; st == LOOM_OK && i < N_WRITE_LEVELS; i++) {
    loom_sched *u = loom_sched_copy(t);
    if (!u) {
      st = LOOM_NOMEM;
      break;
    }
    loom_status ws =
        consumer >= 0
            ? move_consumer(u, &tl, consumer, write_levels[i], &d)
            : write_cache(u, &tl, write_levels[i], &d);
    if (ws == LOOM_OK)
      with_cache[i] = u;
    else
      loom_sched_free(u);
    if (ws == LOOM_NOMEM)
      st = ws;
  }
  loom_diag_free(&d);
  if (consumer < 0)
    st = st == LOOM_OK ? space_list_push(out, t) : (loom_sched_free(t), st);
  for (int i = 0; i < N_WRITE_LEVELS; i++) {
    if (st == LOOM_OK && with_cache[i])
      st = space_list_push(out, with_cache[i]);
    else
      loom_sched_free(with_cache[i]);
  }
  if (consumer >= 0)
    st = st == LOOM_OK ? space_list_push(out, t) : (loom_sched_free(t), st);
  return st;
}

const space_rule space_rule_multi_level_tiling = {"MultiLevelTiling", apply};
