/* dlight's try_inline, which every rule starts from. */
#include "tune/dlight/dlight_impl.h"

loom_status dlight_try_step(loom_sched **s, loom_inst_kind kind, const char *name,
                           const loom_tval *attrs, int n_attrs, bool *is_done) {
  loom_sched *c = loom_sched_copy(*s);
  if (!c)
    return LOOM_NOMEM;
  loom_diag why;
  loom_diag_init(&why);
  loom_sched_rv block;
  bool ok = loom_sched_get_block(c, name, NULL, &block, &why) == LOOM_OK;
  loom_tval in = loom_tval_rv(block);
  ok = ok && space_apply(c, kind, &in, 1, attrs, n_attrs, NULL, NULL, &why) == LOOM_OK;
  loom_diag_free(&why);
  loom_sched_free(ok ? *s : c);
  if (ok)
    *s = c;
  *is_done |= ok;
  return LOOM_OK;
}

loom_status dlight_inline_all(loom_sched **s) {
  for (int round = 0; round < SPACE_MAX_BLOCKS; round++) {
    const char *names[SPACE_MAX_BLOCKS];
    int n = space_block_names(space_func(*s), names, SPACE_MAX_BLOCKS);
    bool is_done = false;
    for (int i = 0; i < n && !is_done; i++) {
      TRY(dlight_try_step(s, LOOM_INST_COMPUTE_INLINE, names[i], NULL, 0, &is_done));
      if (!is_done)
        TRY(dlight_try_step(s, LOOM_INST_REVERSE_COMPUTE_INLINE, names[i], NULL, 0, &is_done));
    }
    if (!is_done)
      return LOOM_OK; /* else the block names changed: list them again */
  }
  return LOOM_OK;
}
