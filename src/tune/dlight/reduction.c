/* Reduction: a block that reduces along the innermost axis of its input (a
 * row sum or maximum, a norm, a GEMV whose matrix is laid out along the
 * reduction). Each output element gets a thread block; the reduction is
 * split across its threads, which read the row together (coalesced), each
 * keeping a partial result, combined across the block by the GPU lowering
 * (warp shuffles, then shared memory). Other blocks get Fallback's step.
 * A block reducing along an axis its input is not laid out along (a
 * column sum) is not taken: there one thread per output element reads
 * coalesced already, which is Fallback's schedule. Nor is a matmul, whose
 * inputs each miss an iter (Matmul's, or Fallback's). */
#include "tune/dlight/dlight_impl.h"

#include "loom/lower.h"

/* A serial remainder of at most this many steps is unrolled. */
#define MAX_UNROLL 16

/* Whether b has a dominant read, one indexed by every iter of b (a row
 * sum's input, a GEMV's matrix; a matmul has none), whose last dimension is
 * indexed by a reduce iter: consecutive threads of the reduction then read
 * consecutive elements. */
static bool reads_along_reduction(const loom_block *b) {
  for (int r = 0; r < b->n_reads; r++) {
    const loom_buffer_region *reg = &b->reads[r];
    if (reg->n_ranges == 0)
      continue;
    bool uses_all = true, is_along = false;
    for (int i = 0; i < b->n_iter_vars; i++) {
      bool uses = false;
      for (int k = 0; k < reg->n_ranges; k++)
        uses |= loom_ir_expr_uses(reg->ranges[k].min, b->iter_vars[i].var);
      uses_all &= uses;
      is_along |= b->iter_vars[i].kind == LOOM_ITER_REDUCE &&
                  loom_ir_expr_uses(reg->ranges[reg->n_ranges - 1].min, b->iter_vars[i].var);
    }
    if (uses_all && is_along)
      return true;
  }
  return false;
}

/* Schedules the block named name across threads; LOOM_ERROR (why) when it
 * is not a reduction along its input's innermost axis. */
static loom_status reduce_block(loom_sched *s, const char *name, const loom_target *t,
                                loom_diag *why) {
  space_block sb;
  if (!space_find_block(space_func(s), name, &sb) || !space_is_open_nest(&sb))
    return dlight_not_taken(why, name, "is not a perfect nest of constant extent under the root");
  const loom_block *b = sb.block;
  if (!b->init || b->n_writes != 1)
    return dlight_not_taken(why, name, "is not a reduction with an init writing one buffer");
  if (!loom_lower_gpu_can_reduce(b))
    return dlight_not_taken(why, name,
                            "is not out = init, then out = out + x (or *, min, max), the form "
                            "a reduction across threads takes");
  dlight_nest nest;
  dlight_nest_of(&sb, &nest);
  int n_spatial = nest.n_spatial, n_reduce = nest.n_reduce;
  int64_t reduce_extent = nest.reduce_extent;
  if (n_reduce == 0)
    return dlight_not_taken(why, name, "has no reduce loop");
  if (n_spatial == 0)
    return dlight_not_taken(why, name, "reduces to a single value: no spatial loop to give blocks");
  if (!reads_along_reduction(b))
    return dlight_not_taken(why, name,
                            "has no input indexed by all its iters and laid out along the "
                            "reduction");
  int64_t threads = dlight_row_threads(t, &reduce_extent, 1);
  if (threads == 0)
    return loom_diag_error(why, (loom_loc){0},
                           "block '%s': its reduce extent %lld is shorter than a warp", name,
                           (long long)reduce_extent);
  loom_sched_rv ordered[SPACE_MAX_LOOPS];
  TRY(dlight_nest_reorder(s, name, &nest, ordered, why));
  loom_sched_rv row = ordered[0], red = ordered[n_spatial];
  if (n_spatial > 1)
    TRY(loom_sched_fuse(s, ordered, n_spatial, true, &row, why));
  if (n_reduce > 1)
    TRY(loom_sched_fuse(s, ordered + n_spatial, n_reduce, true, &red, why));
  loom_tval factors[2] = {loom_tval_none(), loom_tval_int(threads)};
  const loom_sched_rv *halves;
  TRY(loom_sched_split(s, red, factors, 2, true, false, &halves, why));
  loom_sched_rv serial = halves[0], lanes = halves[1];
  loom_sched_rv inner[3] = {row, lanes, serial};
  TRY(loom_sched_reorder(s, inner, 3, why));
  TRY(loom_sched_bind(s, row, "blockIdx.x", why));
  TRY(loom_sched_bind(s, lanes, "threadIdx.x", why));
  int64_t steps = (reduce_extent + threads - 1) / threads;
  if (steps > 1 && steps <= MAX_UNROLL)
    TRY(loom_sched_for_kind(s, LOOM_INST_UNROLL, serial, why));
  return LOOM_OK;
}

static loom_status reduction(loom_sched **s, const loom_target *t, loom_diag *why) {
  char *names[SPACE_MAX_BLOCKS];
  bool is_taken[SPACE_MAX_BLOCKS] = {false};
  int n = dlight_block_names(*s, names, SPACE_MAX_BLOCKS), n_taken = 0;
  if (n < 0)
    return LOOM_NOMEM;
  loom_diag first;
  loom_diag_init(&first);
  loom_status st = dlight_each_block(s, t, reduce_block, names, n, is_taken, &n_taken, &first);
  if (st == LOOM_OK && n_taken == 0)
    st = loom_diag_error(why, (loom_loc){0}, "%s", first.msg ? first.msg : "no block");
  if (st == LOOM_OK) {
    const char *taken[SPACE_MAX_BLOCKS];
    int k = 0, n_bound;
    for (int i = 0; i < n; i++)
      if (is_taken[i])
        taken[k++] = names[i];
    st = dlight_bind_others(s, t, taken, k, &n_bound);
  }
  loom_diag_free(&first);
  dlight_names_free(names, n);
  return st;
}

const loom_dlight_rule dlight_rule_reduction = {"Reduction", reduction};
