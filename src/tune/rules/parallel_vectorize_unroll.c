/* ParallelizeVectorizeUnroll: marks the root block with how far the
 * postprocessor may parallelize (cores x 16 jobs), vectorize (64 lanes) and
 * unroll (a depth sampled uniformly from 0, 16, 64, 512, for functions that
 * are not purely spatial). The loops themselves change in postprocessing. */
#include "tune/space_impl.h"

#define MAX_JOBS_PER_CORE 16
#define MAX_VECTORIZE_EXTENT 64

static const int64_t unroll_steps[] = {0, 16, 64, 512};
#define N_STEPS (int)(sizeof unroll_steps / sizeof *unroll_steps)

static loom_status annotate(const space_ctx *x, loom_sched *s,
                            loom_sched_rv root, loom_diag *d) {
  int64_t jobs = (int64_t)(x->target->cores > 0 ? x->target->cores : 1) *
                 MAX_JOBS_PER_CORE;
  TRY(space_annotate(s, root, SPACE_ANN_PARALLEL, loom_tval_int(jobs), d));
  TRY(space_annotate(s, root, SPACE_ANN_VECTORIZE,
                     loom_tval_int(MAX_VECTORIZE_EXTENT), d));
  if (space_func_is_spatial(space_func(s)))
    return LOOM_OK;
  loom_tval cand[N_STEPS], prob[N_STEPS];
  for (int i = 0; i < N_STEPS; i++) {
    cand[i] = loom_tval_int(unroll_steps[i]);
    prob[i] = (loom_tval){.kind = LOOM_TV_FLOAT, .f = 1.0 / N_STEPS};
  }
  loom_tval attrs[2] = {{.kind = LOOM_TV_LIST, .n = N_STEPS, .items = cand},
                        {.kind = LOOM_TV_LIST, .n = N_STEPS, .items = prob}};
  const loom_sched_rv *v;
  TRY(space_apply(s, LOOM_INST_SAMPLE_CATEGORICAL, NULL, 0, attrs, 2, &v,
                  NULL, d));
  return space_annotate(s, root, SPACE_ANN_UNROLL_EXPLICIT, loom_tval_rv(v[0]),
                        d);
}

static loom_status apply(const space_ctx *x, loom_sched *s, const char *name,
                         loom_sched_rv rv, space_list *out) {
  space_block sb;
  const loom_func *f = space_func(s);
  if (!f || !space_find_block(f, name, &sb) || sb.scope)
    return space_list_push(out, s);
  return space_try(x, s, rv, annotate, out);
}

const space_rule space_rule_parallel_vectorize_unroll = {
    "ParallelizeVectorizeUnroll", apply};
