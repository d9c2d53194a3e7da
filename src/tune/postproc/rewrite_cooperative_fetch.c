/* RewriteCooperativeFetch: a shared copy marked with
 * meta_schedule.cooperative_fetch = v (MultiLevelTiling's, its loops fused
 * into one) is split among the threads of the block it serves: its loop
 * becomes [rest, threadIdx.y, threadIdx.x, v], the thread parts bound with
 * the extents of the thread loops it sits under, and the v lanes
 * vectorized when v > 1, so each thread fetches v neighbours and the
 * threads of a warp fetch neighbouring runs. A copy under no thread loop
 * loses the mark and stays a serial loop. */
#include "tune/space_impl.h"

#include <string.h>

/* The extent of the loop bound to `tag` that sb's block sits under, or 0. */
static int64_t thread_extent(const space_block *sb, const char *tag) {
  int64_t ext;
  for (int k = 0; k < sb->n_loops; k++) {
    const loom_stmt *l = sb->loops[k];
    if (l->u.loop.kind == LOOM_FOR_THREAD_BINDING && l->u.loop.thread &&
        !strcmp(l->u.loop.thread, tag) && loom_ir_is_const_int(l->u.loop.extent, &ext))
      return ext;
  }
  return 0;
}

static loom_status rewrite(loom_sched *s, const char *func, const space_block *sb,
                           int64_t lanes, loom_diag *d) {
  loom_sched_rv b;
  TRY(space_get_block(s, func, sb->block->name, &b, d));
  TRY(space_unannotate(s, b, SPACE_ANN_COOPERATIVE_FETCH, d));
  int64_t tx = thread_extent(sb, "threadIdx.x"), ty = thread_extent(sb, "threadIdx.y");
  if (tx <= 0 || sb->n_loops == 0)
    return LOOM_OK;
  const loom_sched_rv *lp, *parts;
  int n;
  TRY(loom_sched_get_loops(s, b, &lp, &n, d));
  loom_tval f[4];
  int nf = 0, at_y = -1, at_x;
  f[nf++] = loom_tval_none();
  if (ty > 0) {
    at_y = nf;
    f[nf++] = loom_tval_int(ty);
  }
  at_x = nf;
  f[nf++] = loom_tval_int(tx);
  if (lanes > 1)
    f[nf++] = loom_tval_int(lanes);
  TRY(loom_sched_split(s, lp[n - 1], f, nf, true, false, &parts, d));
  loom_sched_rv y = at_y >= 0 ? parts[at_y] : -1, x = parts[at_x],
                v = lanes > 1 ? parts[nf - 1] : -1;
  if (y >= 0)
    TRY(loom_sched_bind(s, y, "threadIdx.y", d));
  TRY(loom_sched_bind(s, x, "threadIdx.x", d));
  return v >= 0 ? loom_sched_for_kind(s, LOOM_INST_VECTORIZE, v, d) : LOOM_OK;
}

loom_status space_rewrite_cooperative_fetch(loom_sched *s, loom_diag *d) {
  const loom_func *f = space_func(s);
  if (!f)
    return LOOM_OK;
  const char *names[SPACE_MAX_BLOCKS];
  int n = space_block_names(f, names, SPACE_MAX_BLOCKS);
  for (int i = 0; i < n; i++) {
    space_block sb;
    if (!space_find_block(space_func(s), names[i], &sb))
      continue;
    const loom_value *v = loom_ir_attr_get(sb.block->annotations, sb.block->n_annotations,
                                           SPACE_ANN_COOPERATIVE_FETCH);
    int64_t lanes;
    if (v && v->kind == LOOM_VALUE_EXPR && loom_ir_is_const_int(v->expr, &lanes))
      TRY(rewrite(s, f->name, &sb, lanes, d));
  }
  return LOOM_OK;
}
