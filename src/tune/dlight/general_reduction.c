/* GeneralReduction: row reductions feeding an elementwise step over the same
 * rows (softmax: the maximum, the sum of exponents, the normalization; a
 * norm), all in one kernel with a thread block per row. The last block's
 * leading spatial loops are fused into the row and bound to blockIdx.x, its
 * last loop split across the row's threads; each reduction before it keeps
 * its result in shared memory, is computed at the row, and splits its
 * reduction across the same threads (the GPU lowering combines them and
 * puts the barriers in). The row is read from global memory once per
 * reduction and once by the last block, in one launch instead of one per
 * block. */
#include "tune/dlight/dlight_impl.h"

#include "loom/lower.h"

#include <string.h>

static loom_status no(loom_diag *why, const char *what) {
  return loom_diag_error(why, (loom_loc){0}, "%s", what);
}

/* Spatial extents of sb in loop order, and the reduce extent's product. */
static bool extents(const space_block *sb, int64_t *spatial, int *n_spatial,
                    int64_t *reduce) {
  dlight_nest nest;
  dlight_nest_of(sb, &nest);
  *n_spatial = 0;
  for (int i = 0; i < nest.n_spatial; i++)
    if (!loom_ir_is_const_int(sb->loops[nest.order[i]]->u.loop.extent, &spatial[(*n_spatial)++]))
      return false;
  *reduce = nest.reduce_extent;
  return nest.n_loops == nest.n_spatial + nest.n_reduce && *reduce >= 0;
}

/* The blocks under the root in program order, their names copied into
 * names (at most max); -1 when out of memory. */
static int root_blocks(loom_sched *s, char **names, int max) {
  const loom_stmt *kids[SPACE_MAX_BLOCKS];
  int n = space_child_blocks(space_func(s)->body, kids,
                             max < SPACE_MAX_BLOCKS ? max : SPACE_MAX_BLOCKS);
  for (int i = 0; i < n; i++)
    if (!(names[i] = strdup(kids[i]->u.realize.block->name))) {
      dlight_names_free(names, i);
      return -1;
    }
  return n;
}

/* Whether the blocks fit: reductions over rows, then one elementwise block
 * over the same rows and one more axis. lens gets the extents split across a
 * row's threads: each reduction's, then that axis's (n of them). */
static loom_status match(loom_sched *s, char **names, int n, int64_t *lens,
                         loom_diag *why) {
  if (n < 2)
    return no(why, "fewer than two blocks under the root");
  space_block last;
  int64_t rows[SPACE_MAX_LOOPS], sp[SPACE_MAX_LOOPS], reduce;
  int n_rows, n_sp;
  if (!space_find_block(space_func(s), names[n - 1], &last) || !space_is_open_nest(&last) ||
      !space_is_spatial(last.block) || !extents(&last, rows, &n_rows, &reduce) || n_rows < 2)
    return loom_diag_error(why, (loom_loc){0},
                           "the last block '%s' is not elementwise over rows and one more "
                           "axis", names[n - 1]);
  lens[n - 1] = rows[n_rows - 1];
  for (int i = 0; i < n - 1; i++) {
    space_block sb;
    if (!space_find_block(space_func(s), names[i], &sb) || !space_is_open_nest(&sb) ||
        !sb.block->init || !loom_lower_gpu_can_reduce(sb.block) ||
        !extents(&sb, sp, &n_sp, &reduce) || reduce <= 1)
      return loom_diag_error(why, (loom_loc){0},
                             "block '%s' is not a reduction of the form out = op(out, x) "
                             "over constant extents", names[i]);
    lens[i] = reduce;
    bool same_rows = n_sp == n_rows - 1;
    for (int k = 0; same_rows && k < n_sp; k++)
      same_rows = sp[k] == rows[k];
    if (!same_rows)
      return loom_diag_error(why, (loom_loc){0},
                             "block '%s' does not reduce over the rows of the last block '%s'",
                             names[i], names[n - 1]);
  }
  return LOOM_OK;
}

/* Splits loop by threads and binds the part across threads, which runs
 * outside the serial rest: a row's consecutive elements go to consecutive
 * threads. */
static loom_status spread(loom_sched *s, loom_sched_rv loop, int64_t threads,
                          loom_diag *why) {
  loom_tval factors[2] = {loom_tval_none(), loom_tval_int(threads)};
  const loom_sched_rv *halves;
  TRY(loom_sched_split(s, loop, factors, 2, true, false, &halves, why));
  loom_sched_rv serial = halves[0], lanes = halves[1];
  loom_sched_rv order[2] = {lanes, serial};
  TRY(loom_sched_reorder(s, order, 2, why));
  return loom_sched_bind(s, lanes, "threadIdx.x", why);
}

static loom_status schedule(loom_sched *s, char **names, int n, int64_t threads,
                            loom_diag *why) {
  loom_sched_rv last;
  const loom_sched_rv *loops;
  int n_loops;
  TRY(loom_sched_get_block(s, names[n - 1], NULL, &last, why));
  TRY(loom_sched_get_loops(s, last, &loops, &n_loops, why));
  loom_sched_rv kept[SPACE_MAX_LOOPS];
  memcpy(kept, loops, (size_t)n_loops * sizeof *kept);
  loom_sched_rv row = kept[0];
  if (n_loops > 2)
    TRY(loom_sched_fuse(s, kept, n_loops - 1, true, &row, why));
  TRY(loom_sched_bind(s, row, "blockIdx.x", why));
  TRY(spread(s, kept[n_loops - 1], threads, why));
  for (int i = n - 2; i >= 0; i--) {
    loom_sched_rv b;
    TRY(loom_sched_get_block(s, names[i], NULL, &b, why));
    loom_tval in = loom_tval_rv(b);
    loom_tval scope[2] = {loom_tval_int(0), loom_tval_str("shared")};
    TRY(space_apply(s, LOOM_INST_SET_SCOPE, &in, 1, scope, 2, NULL, NULL, why));
    loom_tval at[2] = {loom_tval_rv(b), loom_tval_rv(row)};
    loom_tval at_attrs[2] = {loom_tval_bool(false), loom_tval_int(-1)};
    TRY(space_apply(s, LOOM_INST_COMPUTE_AT, at, 2, at_attrs, 2, NULL, NULL, why));
    TRY(loom_sched_get_loops(s, b, &loops, &n_loops, why));
    /* Under the row, only the block's reduce loops are left. */
    if (n_loops < 2)
      return no(why, "a reduction lost its reduce loop under the row");
    memcpy(kept, loops, (size_t)n_loops * sizeof *kept);
    loom_sched_rv red = kept[1];
    if (n_loops > 2)
      TRY(loom_sched_fuse(s, kept + 1, n_loops - 1, true, &red, why));
    TRY(spread(s, red, threads, why));
  }
  return LOOM_OK;
}

static loom_status general_reduction(loom_sched **s, const loom_target *t, loom_diag *why) {
  char *names[SPACE_MAX_BLOCKS];
  int n = root_blocks(*s, names, SPACE_MAX_BLOCKS);
  if (n < 0)
    return LOOM_NOMEM;
  int64_t lens[SPACE_MAX_BLOCKS];
  loom_status st = match(*s, names, n, lens, why);
  int64_t threads = st == LOOM_OK ? dlight_row_threads(t, lens, n) : 0;
  if (st == LOOM_OK && threads == 0)
    st = no(why, "the rows are shorter than a warp");
  if (st == LOOM_OK)
    st = schedule(*s, names, n, threads, why);
  dlight_names_free(names, n);
  return st;
}

const loom_dlight_rule dlight_rule_general_reduction = {"GeneralReduction",
                                                        general_reduction};
