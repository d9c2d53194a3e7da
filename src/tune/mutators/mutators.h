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

/* t with instruction i replaced by a copy of *changed, in arena a; the
 * other instructions are shared. */
loom_status mutator_replace(const loom_trace *t, int i, const loom_inst *changed,
                            loom_arena *a, loom_trace *out);

/* The string value of an Annotate instruction's key, NULL when it has none. */
const char *mutator_ann_key(const loom_inst *inst);

#endif
