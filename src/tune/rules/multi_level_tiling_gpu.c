/* MultiLevelTiling for GPUs (MetaSchedule's DefaultCUDA): structure
 * "SSSRRSRS". Every spatial loop of a block with data reuse is split into
 * five tiles and every reduction loop into three by sample_perfect_tile
 * (innermost factor at most the target's), and the tiles are reordered
 * level by level. The first three spatial levels, each fused, are bound to
 * blockIdx.x, vthread.x and threadIdx.x; the block is marked with the
 * thread counts a candidate must keep within (a warp to the block limit).
 * Reuse is required at both ends: the output is accumulated in a "local"
 * cache written back under the thread loop (always, as TVM's "must": an
 * elementwise epilogue stays a kernel of its own, which AutoBind binds),
 * and every input is copied into
 * "shared" memory under the first reduction tile, its loops fused, with a
 * sampled vector length for the cooperative fetch that
 * RewriteCooperativeFetch later splits among the threads. */
#include "tune/space_impl.h"

#include <string.h>

static const char structure[] = "SSSRRSRS";
#define N_LEVELS 8
static const char *const binds[] = {"blockIdx.x", "vthread.x", "threadIdx.x"};
#define N_BINDS 3
#define WRITE_LEVEL 3 /* the local cache, under the loop of tile level 2 */
#define READ_LEVEL 4  /* the shared copies, under the last loop of level 3 */
static const int64_t vector_lens[] = {1, 2, 3, 4};
#define N_LENS (int)(sizeof vector_lens / sizeof *vector_lens)

typedef struct tiling {
  loom_sched_rv block;
  loom_sched_rv tiles[N_LEVELS][SPACE_MAX_LOOPS];
  int n_tiles[N_LEVELS];
  loom_sched_rv last[N_LEVELS]; /* each level's innermost loop (fused when bound) */
} tiling;

static loom_status tile(const space_ctx *x, loom_sched *t, const space_block *sb,
                        tiling *tl, loom_diag *d) {
  TRY(space_tile_levels(x, t, sb, tl->block, structure, tl->tiles, tl->n_tiles, NULL, 0, d));
  for (int l = 0; l < N_LEVELS; l++)
    tl->last[l] = tl->n_tiles[l] ? tl->tiles[l][tl->n_tiles[l] - 1] : -1;
  return LOOM_OK;
}

/* Fuses each of the first spatial levels and binds it to its thread axis,
 * then marks the block with the thread counts it must keep within. */
static loom_status bind(const space_ctx *x, loom_sched *t, tiling *tl, loom_diag *d) {
  for (int l = 0; l < N_BINDS; l++) {
    if (tl->n_tiles[l] == 0)
      return loom_diag_error(d, (loom_loc){0}, "no loop at tile level %d", l);
    TRY(loom_sched_fuse(t, tl->tiles[l], tl->n_tiles[l], true, &tl->last[l], d));
    TRY(loom_sched_bind(t, tl->last[l], binds[l], d));
  }
  const loom_gpu_desc *g = &x->target->gpu;
  TRY(space_annotate(t, tl->block, SPACE_ANN_THREAD_LOW,
                     loom_tval_int(g->warp_size > 0 ? g->warp_size : 32), d));
  return space_annotate(t, tl->block, SPACE_ANN_THREAD_HIGH,
                        loom_tval_int(g->max_threads_per_block > 0 ? g->max_threads_per_block
                                                                   : 1024),
                        d);
}

static loom_status write_cache(loom_sched *t, const tiling *tl, loom_diag *d) {
  loom_tval in[2] = {loom_tval_rv(tl->block), {.kind = LOOM_TV_LIST}};
  loom_tval attrs[2] = {loom_tval_int(0), loom_tval_str("local")};
  const loom_sched_rv *cache;
  TRY(space_apply(t, LOOM_INST_CACHE_WRITE, in, 2, attrs, 2, &cache, NULL, d));
  return space_reverse_compute_at(t, cache[0], tl->last[WRITE_LEVEL - 1], d);
}

/* Copies read r of the block into shared memory under the read level,
 * fuses the copy's own loops and samples its vector length. */
static loom_status read_cache(loom_sched *t, const tiling *tl, int r, int ndim,
                              loom_diag *d) {
  loom_tval consumer = loom_tval_rv(tl->block);
  loom_tval in[2] = {loom_tval_rv(tl->block),
                     {.kind = LOOM_TV_LIST, .n = 1, .items = &consumer}};
  loom_tval attrs[2] = {loom_tval_int(r), loom_tval_str("shared")};
  const loom_sched_rv *out;
  TRY(space_apply(t, LOOM_INST_CACHE_READ, in, 2, attrs, 2, &out, NULL, d));
  loom_sched_rv copy = out[0];
  loom_tval at[2] = {loom_tval_rv(copy), loom_tval_rv(tl->last[READ_LEVEL - 1])};
  loom_tval at_attrs[2] = {loom_tval_bool(true), loom_tval_int(-1)};
  TRY(space_apply(t, LOOM_INST_COMPUTE_AT, at, 2, at_attrs, 2, NULL, NULL, d));
  const loom_sched_rv *lp;
  int n;
  TRY(loom_sched_get_loops(t, copy, &lp, &n, d));
  if (n < ndim)
    return loom_diag_error(d, (loom_loc){0}, "the copy has too few loops");
  loom_sched_rv fused;
  TRY(loom_sched_fuse(t, lp + n - ndim, ndim, true, &fused, d));
  loom_sched_rv v;
  TRY(space_sample_uniform(t, vector_lens, N_LENS, &v, d));
  return space_annotate(t, copy, SPACE_ANN_COOPERATIVE_FETCH, loom_tval_rv(v), d);
}

/* Every read of the block, in order, that is not of what it writes. */
static loom_status read_caches(loom_sched *t, const space_block *sb, const tiling *tl,
                               loom_diag *d) {
  const loom_block *b = sb->block;
  for (int r = 0; r < b->n_reads; r++) {
    const loom_buffer *buf = b->reads[r].buffer;
    bool is_written = false;
    for (int w = 0; w < b->n_writes; w++)
      is_written |= b->writes[w].buffer == buf;
    if (!is_written)
      TRY(read_cache(t, tl, r, buf->ndim, d));
  }
  return LOOM_OK;
}

/* The whole rule on t, the block found again by its random variable. */
static loom_status tile_block(const space_ctx *x, loom_sched *t, loom_sched_rv block,
                              loom_diag *d) {
  const loom_block *b = loom_sched_rv_block(t, block);
  space_block sb;
  if (!b || !space_find_block(space_func(t), b->name, &sb))
    return loom_diag_error(d, (loom_loc){0}, "the block is gone");
  tiling tl;
  memset(&tl, 0, sizeof tl);
  tl.block = block;
  TRY(tile(x, t, &sb, &tl, d));
  TRY(bind(x, t, &tl, d));
  TRY(write_cache(t, &tl, d));
  return read_caches(t, &sb, &tl, d);
}

static loom_status apply(const space_ctx *x, loom_sched *s, const char *name,
                         loom_sched_rv rv, space_list *out) {
  space_block sb;
  const loom_func *f = space_func(s);
  if (!space_is_gpu(x->target) || !f || !space_find_block(f, name, &sb) ||
      !space_needs_tiling(&sb))
    return space_list_push(out, s);
  return space_try(x, s, rv, tile_block, out);
}

const space_rule space_rule_multi_level_tiling_gpu = {"MultiLevelTiling", apply};
