/* Inside the tuning engine: the pieces of the search that live in files of
 * their own. */
#ifndef LOOM_TUNE_IMPL_H
#define LOOM_TUNE_IMPL_H

#include "loom/db.h"
#include "loom/tune.h"

/* The form a workload is known by (task.c): f normalized, as
 * loom_tune_normalized gives it, and anonymous (loom_ir_func_anonymous), so
 * that functions equal up to names are one; NULL when out of memory. */
loom_func *tune_workload_form(loom_arena *a, const loom_func *f);
/* The task among the n of t whose workload is anon (of hash hash); -1 when
 * none is. */
int tune_task_find(const loom_task *t, int n, const loom_func *anon, uint64_t hash);

/* ---- the C backend (build.c, run.c, backend.c) ----------------------------- */

loom_status tune_c_build(const loom_func *const *funcs, int n,
                         const loom_builder_options *o, loom_build_set *out);
void tune_c_build_free(loom_build_set *b);
loom_status tune_c_runner_new(const loom_func *workload,
                              const loom_runner_options *o, void **runner,
                              loom_diag *d);
loom_status tune_c_runner_run(void *runner, const loom_kernel *kernels, int n,
                              loom_measured *out, loom_diag *d);
void tune_c_runner_free(void *runner);

/* ---- what every runner shares (run.c) --------------------------------------- */

/* What a child reports, in shared memory. */
typedef struct tune_report {
  int32_t kernel_rc;
  bool is_timed;
  bool is_stopped;    /* its first call ran past the stop time */
  double first_t0_ms; /* when the first call started (CLOCK_MONOTONIC) */
  loom_runtime_timing timing;
  char message[256];
} tune_report;

typedef struct tune_runner_state {
  const loom_func *f;
  const loom_runner_options *o;
  loom_interp_array **inputs;   /* the seeded inputs, per parameter */
  loom_interp_array **expect;   /* the interpreter's results, when checking */
  bool is_expect_measured;      /* expect holds the first kernel's results */
  double *largest;              /* per parameter, its largest |expected| */
  loom_runtime_array **arrays;  /* shared with the child */
  void **args;
  const int64_t **shapes;
  double *fscalars;
  loom_kernel kernel;           /* the candidate being measured */
  void **timed_args;            /* the child's private copies */
  tune_report *rep;
} tune_runner_state;

/* The seeded inputs and the shared arrays of r->f, under r->o. */
loom_status tune_runner_setup(tune_runner_state *r, loom_diag *d);
/* The interpreter's results, computed once, on the first call. */
loom_status tune_runner_expect(tune_runner_state *r, loom_diag *d);
/* The results now in r->arrays, taken as the expected ones on the first
 * call: for a workload the interpreter would take minutes over, the first
 * kernel measured (the tuner measures the function as dlight schedules it
 * first) is the reference the others are checked against. */
loom_status tune_runner_expect_measured(tune_runner_state *r, loom_diag *d);
/* Whether the interpreter would take too long over f to check a tuning's
 * kernels against it (more than about 10^8 operations). */
bool tune_runner_is_too_slow(const loom_func *f);
/* In the child, after a candidate's first call of first_ms: true when
 * that call is its measurement (r->rep's timing set: a call long past the
 * best, or long at all and no contender); else false with the number of
 * timed repeats it gets in *repeat (one when twice the best). */
bool tune_runner_first_call(tune_runner_state *r, double first_ms, int *repeat);
/* Why r->arrays differ from the expected results; NULL when they
 * match. */
char *tune_runner_check(tune_runner_state *r);
void tune_runner_teardown(tune_runner_state *r);

/* ---- the CUDA backend (run_cuda.c) ------------------------------------------- */

loom_status tune_cuda_check(const loom_target *t, const loom_module *m, loom_diag *d);
loom_status tune_cuda_build(const loom_func *const *funcs, int n,
                            const loom_builder_options *o, loom_build_set *out);
void tune_cuda_build_free(loom_build_set *b);
loom_status tune_cuda_runner_new(const loom_func *workload,
                                 const loom_runner_options *o, void **runner,
                                 loom_diag *d);
loom_status tune_cuda_runner_run(void *runner, const loom_kernel *kernels, int n,
                                 loom_measured *out, loom_diag *d);
void tune_cuda_runner_free(void *runner);

/* A candidate for the best, measured again before it is named (finalists.c). */
typedef struct tune_finalist {
  const loom_func *func; /* the scheduled function */
  const char *trace;     /* its trace as JSON, as its record holds it */
  double ms;             /* its latency so far; on return, the mean of all */
  char *error;           /* heap; on return, why it is out (NULL: it is not) */
} tune_finalist;

/* Builds the finalists and measures each `rounds` more times, taking turns
 * so that a burst of load elsewhere slows them alike; adds the new
 * latencies to their records in db (when not NULL). A finalist that fails
 * to build or fails any measurement now (a wrong result, a crash, a
 * time-out) is out: its error is set, it is measured no more, and its
 * records in db are disqualified, so that neither this search nor a later
 * apply can name it best. */
loom_status tune_remeasure(loom_tune_runner *runner, const loom_builder_options *bo,
                           loom_db *db, int64_t workload, const char *target,
                           tune_finalist *f, int n, int rounds, loom_diag *d);

#endif
