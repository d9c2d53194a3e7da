/* MutateThreadBinding: another thread count. The candidates are the
 * SampleCategorical decisions that give the factor of a split [None, v]
 * whose inner loop is then bound to threadIdx.x (what AutoBind and
 * CrossThreadReduction record); one is chosen uniformly and drawn again
 * from its other choices, weighted by their probabilities. */
#include "tune/mutators/mutators.h"

#include <string.h>

static bool is_rv(const loom_tval *v, int n_rvs) {
  return v->kind == LOOM_TV_RV && v->i >= 0 && v->i < n_rvs;
}

/* The split [None, v] of v sampled by instruction `sampler[v]`: its inner
 * loop, or -1. */
static int64_t sampled_inner_loop(const loom_inst *inst, const int *sampler,
                                  int n_rvs) {
  if (inst->kind != LOOM_INST_SPLIT || inst->n_inputs != 3 ||
      inst->n_outputs != 2 || inst->inputs[1].kind != LOOM_TV_NONE ||
      !is_rv(&inst->inputs[2], n_rvs) || sampler[inst->inputs[2].i] < 0 ||
      inst->outputs[1] < 0 || inst->outputs[1] >= n_rvs)
    return -1;
  return inst->outputs[1];
}

static bool is_thread_x_bind(const loom_inst *inst, int n_rvs) {
  return inst->kind == LOOM_INST_BIND && inst->n_inputs == 1 &&
         inst->n_attrs == 1 && inst->attrs[0].kind == LOOM_TV_STR &&
         !strcmp(inst->attrs[0].s, "threadIdx.x") &&
         is_rv(&inst->inputs[0], n_rvs);
}

loom_status mutate_thread_binding(const loom_trace *t, const loom_target *tg,
                                  loom_rng *rng, loom_arena *a, loom_trace *out) {
  (void)tg;
  int n_rvs = t->n_rvs > 0 ? t->n_rvs : 1;
  /* sampler[v]: the categorical that outputs value v; split_of[l]: the
   * categorical whose value split off inner loop l; -1 for neither. */
  int *sampler = loom_arena_alloc(a, (size_t)n_rvs * sizeof *sampler);
  int *split_of = loom_arena_alloc(a, (size_t)n_rvs * sizeof *split_of);
  int *cands = loom_arena_alloc(a, (size_t)(t->n_insts ? t->n_insts : 1) * sizeof *cands);
  if (!sampler || !split_of || !cands)
    return LOOM_NOMEM;
  for (int v = 0; v < n_rvs; v++)
    sampler[v] = split_of[v] = -1;
  int n = 0;
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *inst = t->insts[i];
    int64_t inner;
    if (inst->kind == LOOM_INST_SAMPLE_CATEGORICAL && inst->n_outputs == 1 &&
        inst->outputs[0] >= 0 && inst->outputs[0] < t->n_rvs)
      sampler[inst->outputs[0]] = i;
    else if ((inner = sampled_inner_loop(inst, sampler, t->n_rvs)) >= 0)
      split_of[inner] = sampler[inst->inputs[2].i];
    else if (is_thread_x_bind(inst, t->n_rvs) &&
             split_of[inst->inputs[0].i] >= 0 &&
             mutator_can_redraw(t->insts[split_of[inst->inputs[0].i]]))
      cands[n++] = split_of[inst->inputs[0].i];
  }
  if (n == 0)
    return LOOM_ERROR;
  return mutator_redraw_at(t, cands[loom_rng_below(rng, (uint64_t)n)], rng, a, out);
}
