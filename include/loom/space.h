/* The design space of the tuner for CPUs: schedule rules that turn a
 * function into a few design spaces (traces whose sampling instructions are
 * the knobs), postprocessors that turn a sampled candidate's annotations into
 * real loops, and mutators that change one decision of a measured trace. All
 * of them read the target (include/loom/target.h).
 *
 * Rules live in src/tune/rules/, postprocessors in src/tune/postproc/,
 * mutators in src/tune/mutators/; docs/space.md states each one's
 * parameters, defaults and probabilities. */
#ifndef LOOM_SPACE_H
#define LOOM_SPACE_H

#include "loom/schedule.h"
#include "loom/target.h"

/* ---- design spaces (src/tune/rules/) ------------------------------------------ */

/* The design spaces of the function of m (a module holding one function,
 * named main): the rules applied post-order to every block, each rule
 * turning every schedule so far into one or more. Each space is a trace on
 * m, in arena a, that ends before postprocessing. A block a rule cannot
 * handle is left to the next rule, never an error; fails only when out of
 * memory. */
LOOM_API loom_status loom_space_generate(const loom_module *m,
                                         const loom_target *t, loom_arena *a,
                                         loom_trace **spaces, int *n_spaces,
                                         loom_diag *d);

/* ---- custom rules ---------------------------------------------------------------- */

/* A rule of the caller's, run before the built-in ones (MetaSchedule's
 * ApplyCustomRule, and rules added to the front of its list). With `block`
 * set, it takes the block of that name, or the blocks whose
 * `schedule_rule` annotation has that value, and claims them: the built-in
 * rules leave them alone; its refusal, or no such block, fails the
 * generation with its reason. With `block` NULL it is offered every block
 * the built-in rules would visit, in the same order, and a refusal only
 * means it does not apply there. apply gets a schedule of its own to change
 * (the block's name and random variable in it); the steps it applies,
 * sampling steps included, become part of the design space. */
typedef struct loom_space_rule {
  const char *block;
  loom_status (*apply)(void *ctx, loom_sched *s, const char *block,
                       loom_sched_rv rv, loom_diag *d);
  void *ctx;
} loom_space_rule;

/* A schedule script as a rule: ctx is a loom_space_script; the script
 * (loom_sched_run_script) names the block itself, by get_block. */
typedef struct loom_space_script {
  const char *text;
  size_t len;
  const char *file;
} loom_space_script;
LOOM_API loom_status loom_space_apply_script(void *ctx, loom_sched *s,
                                             const char *block,
                                             loom_sched_rv rv, loom_diag *d);

/* loom_space_generate with the caller's rules first, in the order given. */
LOOM_API loom_status loom_space_generate_with(const loom_module *m,
                                              const loom_target *t,
                                              const loom_space_rule *rules,
                                              int n_rules, loom_arena *a,
                                              loom_trace **spaces,
                                              int *n_spaces, loom_diag *d);

/* ---- postprocessors (src/tune/postproc/) --------------------------------------- */

/* Runs the postprocessors on a sampled candidate: an `enter_postproc`
 * instruction, then the steps that make its annotations real (parallel,
 * vectorized and unrolled loops, decomposed reductions), all recorded in s's
 * trace so that replaying the trace rebuilds the candidate. Fails with the
 * reason the candidate must be dropped. */
LOOM_API loom_status loom_space_postprocess(loom_sched *s, const loom_target *t,
                                            loom_diag *d);

/* The instructions of t before its `enter_postproc` (all of them when it
 * has none): what a mutator changes and a replay samples again. */
LOOM_API loom_trace loom_space_strip_postproc(const loom_trace *t);

/* ---- mutators (src/tune/mutators/) --------------------------------------------- */

typedef enum {
  LOOM_MUTATOR_TILE_SIZE,        /* move a factor between a perfect tile's levels */
  LOOM_MUTATOR_UNROLL,           /* another unroll depth */
  LOOM_MUTATOR_PARALLEL,         /* another parallel extent */
  LOOM_MUTATOR_COMPUTE_LOCATION, /* another compute location */
  LOOM_MUTATOR_THREAD_BINDING,   /* another thread count for an auto-bound loop */
  LOOM_MUTATOR_COUNT_
} loom_mutator_kind;

/* The probability each mutator is chosen with on target t (NULL: a CPU),
 * as MetaSchedule's defaults: on a CPU tile size 0.9, unroll 0.03,
 * parallel 0.02, compute location 0.05; on cuda tile size 0.9, unroll
 * 0.08, thread binding 0.02. */
LOOM_API double loom_mutator_probability(const loom_target *t,
                                         loom_mutator_kind k);

/* t (stripped of its postprocessing) with one decision changed by a mutator
 * drawn with the probabilities above, in arena a. Fails (LOOM_ERR, d says
 * why) when no mutator finds anything to change in t. */
LOOM_API loom_status loom_space_mutate(const loom_trace *t,
                                       const loom_target *tg, loom_rng *rng,
                                       loom_arena *a, loom_trace *out,
                                       loom_diag *d);

#endif
