/* MutateParallel: another parallel extent. The value of a
 * meta_schedule.parallel annotation is the most iterations the postprocessor
 * may fuse into the parallel loop; MetaSchedule replays the trace to learn
 * the loop extents and picks a limit that fuses a different number of
 * loops. A trace alone carries no extents, so the limits offered here are
 * the plausible ones, cores times 1, 2, 4, ... jobs per core up to the
 * target's max_jobs_per_core (16 on a CPU), other than the current value. Two
 * limits may fuse the same loops; the search drops such a duplicate by its
 * hash. */
#include "tune/mutators/mutators.h"

#include <string.h>

/* Jobs per core go up to 4096 (the target option's limit), 2^12. */
#define N_LIMITS 13

loom_status mutate_parallel(const loom_trace *t, const loom_target *tg,
                            loom_rng *rng, loom_arena *a, loom_trace *out) {
  int n = 0;
  for (int i = 0; i < t->n_insts; i++) {
    const char *key = mutator_ann_key(t->insts[i]);
    n += key && !strcmp(key, "meta_schedule.parallel") &&
         t->insts[i]->inputs[1].kind == LOOM_TV_INT;
  }
  if (n == 0)
    return LOOM_ERROR;
  int pick = (int)loom_rng_below(rng, (uint64_t)n);
  int64_t cores = tg && tg->cpu.cores > 0 ? tg->cpu.cores : 1;
  int64_t most = tg && tg->max_jobs_per_core > 0 ? tg->max_jobs_per_core : 1;
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *inst = t->insts[i];
    const char *key = mutator_ann_key(inst);
    if (!key || strcmp(key, "meta_schedule.parallel") ||
        inst->inputs[1].kind != LOOM_TV_INT || pick-- > 0)
      continue;
    int64_t limits[N_LIMITS], cur = inst->inputs[1].i;
    int n_limits = 0;
    for (int k = 0; k < N_LIMITS && ((int64_t)1 << k) <= most; k++)
      if ((cores << k) != cur)
        limits[n_limits++] = cores << k;
    loom_tval *inputs = loom_arena_dup(a, inst->inputs, (size_t)inst->n_inputs * sizeof *inputs);
    if (!inputs)
      return LOOM_NOMEM;
    inputs[1] = loom_tval_int(limits[loom_rng_below(rng, (uint64_t)n_limits)]);
    loom_inst changed = *inst;
    changed.inputs = inputs;
    return mutator_replace(t, i, &changed, a, out);
  }
  return LOOM_ERROR;
}
