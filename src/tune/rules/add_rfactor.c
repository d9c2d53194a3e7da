/* AddRFactor (MetaSchedule's CPU parameters: 16 jobs per core, innermost
 * factor at most 64): a reduction with too little spatial work to keep the
 * cores busy gets its reduction loops moved innermost and fused, the fused
 * loop split in two by sample_perfect_tile, and one schedule per part that
 * rfactors the reduction at it. The partial sums then run in parallel
 * over that part; the block left to add them up is marked so that
 * RandomComputeLocation also places its producer, the rfactor block. The
 * unchanged schedule comes last. */
#include "tune/space_impl.h"

#include <string.h>

#define N_PARTS 2

/* The products of the block's spatial and of its reduction loop extents
 * (its loops are a trivially bound perfect nest of constant extents). */
/* TVM's NeedsRFactorOrCrossThreadReduction: a reduction over a trivially
 * bound perfect nest, not tiled, with a reduction loop, whose spatial
 * loops leave cores idle. A block worth tiling qualifies only while its
 * reduction is longer than its spatial part and that part is at most
 * cores x 16 jobs; any other reduction qualifies once it is longer than
 * the core count. */
static bool needs_rfactor(const space_ctx *x, const space_block *sb) {
  const loom_block *b = sb->block;
  if (b->n_writes < 1 || !b->init || space_is_spatial(b) ||
      !space_is_open_nest(sb))
    return false;
  int64_t space, reduce;
  space_loop_extents(sb, &space, &reduce);
  int64_t cores = x->target->cpu.cores > 0 ? x->target->cpu.cores : 1;
  if (space_needs_tiling(sb))
    return space < reduce && space <= cores * x->target->max_jobs_per_core;
  return reduce > cores;
}

typedef struct split_reduce {
  loom_sched_rv parts[N_PARTS];
  int n_spatial;
} split_reduce;

/* Spatial loops first, then the reduction loops fused into one (TVM's
 * ReorderAndFuseReductionLoops), which is split by a sampled perfect tile. */
static loom_status split(const space_ctx *x, loom_sched *t,
                         const space_block *sb, loom_sched_rv block,
                         split_reduce *out, loom_diag *d) {
  const loom_sched_rv *lp;
  int n;
  TRY(loom_sched_get_loops(t, block, &lp, &n, d));
  if (n != sb->n_loops)
    return loom_diag_error(d, (loom_loc){0}, "unexpected loop nest");
  loom_sched_rv order[SPACE_MAX_LOOPS];
  int n_order = 0;
  bool moved = false;
  out->n_spatial = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++) {
      const loom_iter_var *iv =
          space_iter_of_loop(sb, sb->loops[i]->u.loop.var);
      if ((iv->kind == LOOM_ITER_SPATIAL) != (pass == 0))
        continue;
      moved |= n_order != i;
      order[n_order++] = lp[i];
      out->n_spatial += pass == 0;
    }
  if (moved)
    TRY(loom_sched_reorder(t, order, n, d));
  loom_sched_rv fused = order[out->n_spatial];
  if (n - out->n_spatial > 1)
    TRY(loom_sched_fuse(t, order + out->n_spatial, n - out->n_spatial, true,
                        &fused, d));
  const loom_sched_rv *v, *parts;
  TRY(loom_sched_sample_perfect_tile(
      t, fused, N_PARTS, x->target->max_innermost_factor, &v, d));
  loom_tval factors[N_PARTS];
  for (int j = 0; j < N_PARTS; j++)
    factors[j] = loom_tval_rv(v[j]);
  TRY(loom_sched_split(t, fused, factors, N_PARTS, true, false, &parts, d));
  memcpy(out->parts, parts, sizeof out->parts);
  return LOOM_OK;
}

static loom_status rfactor(loom_sched *u, loom_sched_rv block,
                           const split_reduce *sp, int part, loom_diag *d) {
  loom_tval in = loom_tval_rv(sp->parts[part]);
  loom_tval axis = loom_tval_int(sp->n_spatial);
  TRY(space_apply(u, LOOM_INST_RFACTOR, &in, 1, &axis, 1, NULL, NULL, d));
  return space_annotate(u, block, SPACE_ANN_COMPUTE_PRODUCER,
                        loom_tval_int(1), d);
}

static loom_status apply(const space_ctx *x, loom_sched *s, const char *name,
                         loom_sched_rv rv, space_list *out) {
  space_block sb;
  const loom_func *f = space_func(s);
  if (!f || !space_find_block(f, name, &sb) || !needs_rfactor(x, &sb))
    return space_list_push(out, s);
  loom_sched *t = loom_sched_copy(s);
  if (!t) {
    loom_sched_free(s);
    return LOOM_NOMEM;
  }
  loom_diag d;
  loom_diag_init(&d);
  split_reduce sp = {{0}, 0};
  loom_status st = split(x, t, &sb, rv, &sp, &d);
  for (int p = 0; st == LOOM_OK && p < N_PARTS; p++) {
    loom_sched *u = loom_sched_copy(t);
    if (!u) {
      st = LOOM_NOMEM;
      break;
    }
    /* A reduction rfactor does not recognize stays as it was. */
    loom_status rs = rfactor(u, rv, &sp, p, &d);
    if (rs == LOOM_OK)
      st = space_list_push(out, u);
    else
      loom_sched_free(u);
    if (rs == LOOM_NOMEM)
      st = rs;
  }
  loom_diag_free(&d);
  loom_sched_free(t);
  if (st == LOOM_NOMEM) {
    loom_sched_free(s);
    return st;
  }
  return space_list_push(out, s);
}

const space_rule space_rule_add_rfactor = {"AddRFactor", apply};
