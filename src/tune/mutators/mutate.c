/* Picks a mutator by MetaSchedule's probabilities for the target and
 * applies it; one
 * that finds nothing to change is set aside and another drawn from the
 * rest, so a trace fails only when no mutator applies at all. */
#include "tune/mutators/mutators.h"

#include <string.h>

typedef struct mutator {
  double probability;
  mutator_fn fn;
} mutator;

static const mutator cpu_mutators[LOOM_MUTATOR_COUNT_] = {
    [LOOM_MUTATOR_TILE_SIZE] = {0.90, mutate_tile_size},
    [LOOM_MUTATOR_UNROLL] = {0.03, mutate_unroll},
    [LOOM_MUTATOR_PARALLEL] = {0.02, mutate_parallel},
    [LOOM_MUTATOR_COMPUTE_LOCATION] = {0.05, mutate_compute_location},
    [LOOM_MUTATOR_THREAD_BINDING] = {0, mutate_thread_binding},
};

/* No compute location or parallel mutator on a GPU (MetaSchedule's
 * DefaultCUDA). */
static const mutator cuda_mutators[LOOM_MUTATOR_COUNT_] = {
    [LOOM_MUTATOR_TILE_SIZE] = {0.90, mutate_tile_size},
    [LOOM_MUTATOR_UNROLL] = {0.08, mutate_unroll},
    [LOOM_MUTATOR_PARALLEL] = {0, mutate_parallel},
    [LOOM_MUTATOR_COMPUTE_LOCATION] = {0, mutate_compute_location},
    [LOOM_MUTATOR_THREAD_BINDING] = {0.02, mutate_thread_binding},
};

static const mutator *table(const loom_target *t) {
  return t && t->kind == LOOM_TARGET_CUDA ? cuda_mutators : cpu_mutators;
}

double loom_mutator_probability(const loom_target *t, loom_mutator_kind k) {
  return k >= 0 && k < LOOM_MUTATOR_COUNT_ ? table(t)[k].probability : 0;
}

loom_status loom_space_mutate(const loom_trace *t, const loom_target *tg,
                              loom_rng *rng, loom_arena *a, loom_trace *out,
                              loom_diag *d) {
  const mutator *mutators = table(tg);
  bool is_tried[LOOM_MUTATOR_COUNT_] = {false};
  for (int k = 0; k < LOOM_MUTATOR_COUNT_; k++)
    is_tried[k] = mutators[k].probability <= 0;
  for (int round = 0; round < LOOM_MUTATOR_COUNT_; round++) {
    double total = 0;
    for (int k = 0; k < LOOM_MUTATOR_COUNT_; k++)
      total += is_tried[k] ? 0 : mutators[k].probability;
    double u = loom_rng_double(rng) * total;
    int pick = -1;
    if (total <= 0)
      break;
    for (int k = 0; k < LOOM_MUTATOR_COUNT_; k++) {
      if (is_tried[k])
        continue;
      pick = k;
      if (u < mutators[k].probability)
        break;
      u -= mutators[k].probability;
    }
    loom_status st = mutators[pick].fn(t, tg, rng, a, out);
    if (st != LOOM_ERROR)
      return st;
    is_tried[pick] = true;
  }
  return loom_diag_error(d, (loom_loc){0},
                         "no mutator finds a decision to change in the trace "
                         "(no perfect tile with a factor to move, no unroll or "
                         "parallel annotation, no compute location)");
}

loom_status mutator_replace(const loom_trace *t, int i, const loom_inst *changed,
                            loom_arena *a, loom_trace *out) {
  loom_inst **insts = loom_arena_alloc(a, (size_t)(t->n_insts ? t->n_insts : 1) * sizeof *insts);
  loom_inst *copy = loom_arena_alloc(a, sizeof *copy);
  if (!insts || !copy)
    return LOOM_NOMEM;
  memcpy(insts, t->insts, (size_t)t->n_insts * sizeof *insts);
  *copy = *changed;
  insts[i] = copy;
  *out = (loom_trace){insts, t->n_insts, t->n_rvs};
  return LOOM_OK;
}

const char *mutator_ann_key(const loom_inst *inst) {
  if (inst->kind != LOOM_INST_ANNOTATE || inst->n_inputs < 2 || inst->n_attrs < 1 ||
      inst->attrs[0].kind != LOOM_TV_STR)
    return NULL;
  return inst->attrs[0].s;
}
