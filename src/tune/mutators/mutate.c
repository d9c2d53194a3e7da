/* Picks a mutator by MetaSchedule's CPU probabilities and applies it; one
 * that finds nothing to change is set aside and another drawn from the
 * rest, so a trace fails only when no mutator applies at all. */
#include "tune/mutators/mutators.h"

#include <string.h>

static const struct {
  double probability;
  mutator_fn fn;
} mutators[LOOM_MUTATOR_COUNT_] = {
    [LOOM_MUTATOR_TILE_SIZE] = {0.90, mutate_tile_size},
    [LOOM_MUTATOR_UNROLL] = {0.03, mutate_unroll},
    [LOOM_MUTATOR_PARALLEL] = {0.02, mutate_parallel},
    [LOOM_MUTATOR_COMPUTE_LOCATION] = {0.05, mutate_compute_location},
};

double loom_mutator_probability(loom_mutator_kind k) {
  return k >= 0 && k < LOOM_MUTATOR_COUNT_ ? mutators[k].probability : 0;
}

loom_status loom_space_mutate(const loom_trace *t, const loom_target *tg,
                              loom_rng *rng, loom_arena *a, loom_trace *out,
                              loom_diag *d) {
  bool is_tried[LOOM_MUTATOR_COUNT_] = {false};
  for (int round = 0; round < LOOM_MUTATOR_COUNT_; round++) {
    double total = 0;
    for (int k = 0; k < LOOM_MUTATOR_COUNT_; k++)
      total += is_tried[k] ? 0 : mutators[k].probability;
    double u = loom_rng_double(rng) * total;
    int pick = -1;
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
