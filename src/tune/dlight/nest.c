/* A block's loops by the kind of iter each binds, and the reorder that puts
 * them in that order: the first step of every rule. */
#include "tune/dlight/dlight_impl.h"

void dlight_nest_of(const space_block *sb, dlight_nest *out) {
  *out = (dlight_nest){.spatial_extent = 1, .reduce_extent = 1};
  int n = 0;
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < sb->n_loops; i++) {
      const loom_iter_var *iv = space_iter_of_loop(sb, sb->loops[i]->u.loop.var);
      int kind = !iv ? 2 : iv->kind == LOOM_ITER_SPATIAL ? 0 : iv->kind == LOOM_ITER_REDUCE ? 1 : 2;
      if (kind != pass)
        continue;
      out->order[n++] = i;
      int64_t e, *product = kind == 0 ? &out->spatial_extent : &out->reduce_extent;
      if (kind < 2 && (*product < 0 || !loom_ir_is_const_int(sb->loops[i]->u.loop.extent, &e)))
        *product = -1;
      else if (kind < 2)
        *product *= e;
      out->n_spatial += kind == 0;
      out->n_reduce += kind == 1;
    }
  out->n_loops = n;
}

loom_status dlight_nest_reorder(loom_sched *s, const char *name, const dlight_nest *nest,
                                loom_sched_rv *ordered, loom_diag *why) {
  loom_sched_rv block;
  const loom_sched_rv *loops;
  int n_loops;
  TRY(loom_sched_get_block(s, name, NULL, &block, why));
  TRY(loom_sched_get_loops(s, block, &loops, &n_loops, why));
  if (n_loops != nest->n_loops)
    return loom_diag_error(why, (loom_loc){0}, "block '%s' has loops above its scope's",
                           name);
  bool is_reordered = false;
  for (int i = 0; i < nest->n_loops; i++) {
    ordered[i] = loops[nest->order[i]];
    is_reordered |= nest->order[i] != i;
  }
  return is_reordered ? loom_sched_reorder(s, ordered, nest->n_loops, why) : LOOM_OK;
}

int64_t dlight_row_threads(const loom_target *t, const int64_t *extents, int n) {
  int64_t cap = DLIGHT_ROW_THREADS, smallest = INT64_MAX;
  if (t->gpu.max_threads_per_block > 0 && t->gpu.max_threads_per_block < cap)
    cap = t->gpu.max_threads_per_block;
  for (int i = 0; i < n; i++)
    smallest = extents[i] < smallest ? extents[i] : smallest;
  int64_t dividing = 1, fitting = 1;
  bool divides = true;
  while (dividing * 2 <= cap && divides) {
    for (int i = 0; i < n; i++)
      divides &= extents[i] % (dividing * 2) == 0;
    dividing = divides ? dividing * 2 : dividing;
  }
  while (fitting * 2 <= cap && fitting * 2 <= smallest)
    fitting *= 2;
  int warp = t->gpu.warp_size > 0 ? t->gpu.warp_size : 32;
  return dividing >= warp ? dividing : fitting >= warp ? fitting : 0;
}
