/* RewriteReductionBlock: every block that still has an init gets it split
 * off by decompose_reduction above its first loop that a reduce iter
 * depends on, as MetaSchedule does, so the init runs once per output
 * element instead of under a test in every reduction step. A block that
 * reduces across threads (a reduce iter bound through a thread loop) keeps
 * its init: the GPU lowering makes it a cross-thread reduction. */
#include "tune/space_impl.h"

#include <string.h>

static bool feeds_reduce(const space_block *sb, const loom_var *v) {
  const loom_stmt *r = sb->realize;
  for (int i = 0; i < sb->block->n_iter_vars; i++)
    if (sb->block->iter_vars[i].kind != LOOM_ITER_SPATIAL &&
        loom_ir_expr_uses(r->u.realize.iter_values[i], v))
      return true;
  return false;
}

/* The index of the first of sb's loops that a non-spatial iter's binding
 * uses; -1 when none does, or when a thread loop does. */
static int first_reduce_loop(const space_block *sb) {
  int first = -1;
  for (int k = 0; k < sb->n_loops; k++) {
    const loom_stmt *l = sb->loops[k];
    if (!feeds_reduce(sb, l->u.loop.var))
      continue;
    if (l->u.loop.kind == LOOM_FOR_THREAD_BINDING)
      return -1;
    if (first < 0)
      first = k;
  }
  return first;
}

loom_status space_rewrite_reduction_block(loom_sched *s, loom_diag *d) {
  const loom_func *f = space_func(s);
  if (!f)
    return LOOM_OK;
  const char *names[SPACE_MAX_BLOCKS];
  int n = space_block_names(f, names, SPACE_MAX_BLOCKS);
  for (int i = 0; i < n; i++) {
    space_block sb;
    f = space_func(s);
    if (!space_find_block(f, names[i], &sb) || !sb.scope || !sb.block->init)
      continue;
    int k = first_reduce_loop(&sb);
    if (k < 0)
      continue;
    loom_sched_rv b;
    const loom_sched_rv *loops;
    int n_loops;
    TRY(space_get_block(s, f->name, names[i], &b, d));
    TRY(loom_sched_get_loops(s, b, &loops, &n_loops, d));
    if (k >= n_loops)
      continue;
    loom_tval in[2] = {loom_tval_rv(b), loom_tval_rv(loops[k])};
    /* A block decompose_reduction refuses keeps its init, which lowering
     * handles anyway: the candidate stays valid, only slower. */
    loom_diag scratch;
    loom_diag_init(&scratch);
    loom_status st = space_apply(s, LOOM_INST_DECOMPOSE_REDUCTION, in, 2, NULL,
                                 0, NULL, NULL, &scratch);
    loom_diag_free(&scratch);
    if (st == LOOM_NOMEM)
      return st;
  }
  return LOOM_OK;
}
