/* The tiling both MultiLevelTiling rules start from (the CPU's "SSRSRS",
 * the GPU's "SSSRRSRS"). */
#include "tune/space_impl.h"

#include <string.h>

loom_status space_tile_levels(const space_ctx *x, loom_sched *t, const space_block *sb,
                              loom_sched_rv block, const char *structure,
                              loom_sched_rv (*tiles)[SPACE_MAX_LOOPS], int *n_tiles,
                              const loom_var *packed, int64_t lanes, loom_diag *d) {
  int n_levels = (int)strlen(structure);
  int s_idx[SPACE_MAX_LEVELS], r_idx[SPACE_MAX_LEVELS], n_s = 0, n_r = 0;
  if (n_levels > SPACE_MAX_LEVELS)
    return loom_diag_error(d, (loom_loc){0}, "a tiling of more than %d levels",
                           SPACE_MAX_LEVELS);
  for (int i = 0; i < n_levels; i++) {
    if (structure[i] == 'S')
      s_idx[n_s++] = i;
    else
      r_idx[n_r++] = i;
  }
  TRY(space_annotate(t, block, SPACE_ANN_TILING, loom_tval_str(structure), d));
  const loom_sched_rv *lp;
  int n_lp;
  TRY(loom_sched_get_loops(t, block, &lp, &n_lp, d));
  if (n_lp != sb->n_loops)
    return loom_diag_error(d, (loom_loc){0}, "unexpected loop nest");
  loom_sched_rv loops[SPACE_MAX_LOOPS];
  memcpy(loops, lp, (size_t)n_lp * sizeof *loops);
  for (int i = 0; i < n_lp; i++) {
    const loom_iter_var *iv = space_iter_of_loop(sb, sb->loops[i]->u.loop.var);
    if (!iv)
      continue;
    const int *idx = iv->kind == LOOM_ITER_SPATIAL ? s_idx : r_idx;
    int n = iv->kind == LOOM_ITER_SPATIAL ? n_s : n_r;
    const loom_sched_rv *v, *parts;
    loom_sched_rv loop = loops[i], fixed = -1;
    int64_t ext;
    if (packed && iv->var == packed &&
        loom_ir_is_const_int(sb->loops[i]->u.loop.extent, &ext)) {
      /* The packed copy's lanes are the innermost tile, so that the
       * vectors read it whole: the other levels are sampled. */
      loom_tval f[2] = {loom_tval_int(ext / lanes), loom_tval_int(lanes)};
      TRY(loom_sched_split(t, loop, f, 2, true, false, &parts, d));
      loop = parts[0];
      fixed = parts[1];
      n--;
    }
    TRY(loom_sched_sample_perfect_tile(t, loop, n, x->target->max_innermost_factor, &v, d));
    loom_tval factors[SPACE_MAX_LEVELS];
    for (int j = 0; j < n; j++)
      factors[j] = loom_tval_rv(v[j]);
    TRY(loom_sched_split(t, loop, factors, n, true, false, &parts, d));
    for (int j = 0; j < n; j++)
      tiles[idx[j]][n_tiles[idx[j]]++] = parts[j];
    if (fixed >= 0)
      tiles[idx[n]][n_tiles[idx[n]]++] = fixed;
  }
  loom_sched_rv order[SPACE_MAX_LEVELS * SPACE_MAX_LOOPS];
  int n_order = 0;
  for (int l = 0; l < n_levels; l++)
    for (int j = 0; j < n_tiles[l]; j++)
      order[n_order++] = tiles[l][j];
  return loom_sched_reorder(t, order, n_order, d);
}
