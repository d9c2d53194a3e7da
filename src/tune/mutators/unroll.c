/* MutateUnroll: another unroll depth. The SampleCategorical decisions whose
 * value feeds a meta_schedule.unroll_explicit or unroll_implicit annotation
 * are the candidates; one is chosen uniformly and drawn again from its
 * other choices, weighted by their probabilities. MutateTileSize redraws
 * the vector lengths of cooperative fetches the same way. */
#include "tune/mutators/mutators.h"

#include <string.h>

static double prob(const loom_tval *v) {
  double p = v->kind == LOOM_TV_FLOAT ? v->f : v->kind == LOOM_TV_INT ? (double)v->i : 0;
  return p > 0 ? p : 0;
}

/* The SampleCategorical instruction of t that outputs rv, -1 if none. */
static int producer(const loom_trace *t, int64_t rv) {
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *inst = t->insts[i];
    if (inst->kind == LOOM_INST_SAMPLE_CATEGORICAL && inst->n_outputs == 1 &&
        inst->outputs[0] == rv)
      return i;
  }
  return -1;
}

bool mutator_can_redraw(const loom_inst *inst) {
  if (inst->decision.kind != LOOM_TV_INT || inst->n_attrs < 2 ||
      inst->attrs[1].kind != LOOM_TV_LIST)
    return false;
  const loom_tval *probs = &inst->attrs[1];
  for (int k = 0; k < probs->n; k++)
    if (k != inst->decision.i && prob(&probs->items[k]) > 0)
      return true;
  return false;
}

static bool is_unroll_key(const char *key) {
  return key && (!strcmp(key, "meta_schedule.unroll_explicit") ||
                 !strcmp(key, "meta_schedule.unroll_implicit"));
}

int mutator_categoricals(const loom_trace *t, bool (*is_key)(const char *),
                         int *cands) {
  int n = 0;
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *inst = t->insts[i];
    if (!is_key(mutator_ann_key(inst)) || inst->inputs[1].kind != LOOM_TV_RV)
      continue;
    int p = producer(t, inst->inputs[1].i);
    bool is_new = p >= 0 && mutator_can_redraw(t->insts[p]);
    for (int k = 0; k < n && is_new; k++)
      is_new = cands[k] != p;
    if (is_new)
      cands[n++] = p;
  }
  return n;
}

loom_status mutator_redraw_categorical(const loom_trace *t, bool (*is_key)(const char *),
                                       loom_rng *rng, loom_arena *a, loom_trace *out) {
  int *cands = loom_arena_alloc(a, (size_t)(t->n_insts ? t->n_insts : 1) * sizeof *cands);
  if (!cands)
    return LOOM_NOMEM;
  int n = mutator_categoricals(t, is_key, cands);
  if (n == 0)
    return LOOM_ERROR;
  return mutator_redraw_at(t, cands[loom_rng_below(rng, (uint64_t)n)], rng, a, out);
}

loom_status mutator_redraw_at(const loom_trace *t, int at, loom_rng *rng,
                              loom_arena *a, loom_trace *out) {
  const loom_inst *inst = t->insts[at];
  const loom_tval *probs = &inst->attrs[1];
  int64_t cur = inst->decision.i;
  double total = 0;
  for (int k = 0; k < probs->n; k++)
    total += k == cur ? 0 : prob(&probs->items[k]);
  double u = loom_rng_double(rng) * total;
  int64_t pick = -1;
  for (int k = 0; k < probs->n; k++) {
    double p = k == cur ? 0 : prob(&probs->items[k]);
    if (p <= 0)
      continue;
    pick = k;
    if (u < p)
      break;
    u -= p;
  }
  loom_inst changed = *inst;
  changed.decision = loom_tval_int(pick);
  return mutator_replace(t, at, &changed, a, out);
}

loom_status mutate_unroll(const loom_trace *t, const loom_target *tg,
                          loom_rng *rng, loom_arena *a, loom_trace *out) {
  (void)tg;
  return mutator_redraw_categorical(t, is_unroll_key, rng, a, out);
}
