/* The mutators of the CPU design space, each a function that changes one
 * decision (or annotation value) of a trace stripped of its postprocessing.
 * A mutator that finds nothing to change returns LOOM_ERROR without a
 * diagnostic; the dispatcher in mutate.c then draws another. */
#ifndef LOOM_TUNE_MUTATORS_H
#define LOOM_TUNE_MUTATORS_H

#include "loom/space.h"

typedef loom_status (*mutator_fn)(const loom_trace *t, const loom_target *tg,
                                  loom_rng *rng, loom_arena *a,
                                  loom_trace *out);

loom_status mutate_tile_size(const loom_trace *t, const loom_target *tg,
                             loom_rng *rng, loom_arena *a, loom_trace *out);
loom_status mutate_unroll(const loom_trace *t, const loom_target *tg,
                          loom_rng *rng, loom_arena *a, loom_trace *out);
loom_status mutate_parallel(const loom_trace *t, const loom_target *tg,
                            loom_rng *rng, loom_arena *a, loom_trace *out);
loom_status mutate_compute_location(const loom_trace *t, const loom_target *tg,
                                    loom_rng *rng, loom_arena *a,
                                    loom_trace *out);
loom_status mutate_thread_binding(const loom_trace *t, const loom_target *tg,
                                  loom_rng *rng, loom_arena *a, loom_trace *out);

/* t with instruction i replaced by a copy of *changed, in arena a; the
 * other instructions are shared. */
loom_status mutator_replace(const loom_trace *t, int i, const loom_inst *changed,
                            loom_arena *a, loom_trace *out);

/* inst is a SampleCategorical with a decision and another choice of
 * nonzero probability. */
bool mutator_can_redraw(const loom_inst *inst);
/* t with its SampleCategorical at index `at` drawn again among its other
 * choices, weighted by their probabilities. */
loom_status mutator_redraw_at(const loom_trace *t, int at, loom_rng *rng,
                              loom_arena *a, loom_trace *out);
/* The SampleCategorical instructions of t whose value feeds an Annotate
 * with a key is_key accepts, each once, with another choice to take:
 * their indices go into cands (room for t->n_insts); returns how many. */
int mutator_categoricals(const loom_trace *t, bool (*is_key)(const char *),
                         int *cands);
/* One of those, chosen uniformly, drawn again among its other choices by
 * their probabilities; LOOM_ERROR when there is none. */
loom_status mutator_redraw_categorical(const loom_trace *t, bool (*is_key)(const char *),
                                       loom_rng *rng, loom_arena *a, loom_trace *out);

/* The string value of an Annotate instruction's key, NULL when it has none. */
const char *mutator_ann_key(const loom_inst *inst);

#endif
