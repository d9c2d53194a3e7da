/* MutateComputeLocation: a SampleComputeLocation decision drawn again. The
 * valid locations depend on the loops the trace has built, which only a
 * replay knows, so the chosen decision is cleared: the replay with kept
 * decisions draws it anew among the locations valid at that point. A draw
 * that lands on the old location gives a duplicate the search drops. */
#include "tune/mutators/mutators.h"

loom_status mutate_compute_location(const loom_trace *t, const loom_target *tg,
                                    loom_rng *rng, loom_arena *a,
                                    loom_trace *out) {
  int kind = loom_inst_kind_by_json("SampleComputeLocation"), n = 0;
  if (kind < 0)
    return LOOM_ERROR;
  for (int i = 0; i < t->n_insts; i++)
    n += (int)t->insts[i]->kind == kind && t->insts[i]->decision.kind == LOOM_TV_INT;
  if (n == 0)
    return LOOM_ERROR;
  int pick = (int)loom_rng_below(rng, (uint64_t)n);
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *inst = t->insts[i];
    if ((int)inst->kind != kind || inst->decision.kind != LOOM_TV_INT || pick-- > 0)
      continue;
    loom_inst changed = *inst;
    changed.decision = loom_tval_none();
    return mutator_replace(t, i, &changed, a, out);
  }
  return LOOM_ERROR;
}
