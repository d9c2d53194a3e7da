/* The tuning engine's measuring half: the builder turns candidate prim funcs
 * into loaded kernels, and the runner measures them on seeded inputs,
 * checking results against the reference interpreter. A candidate that fails
 * to build, crashes, hangs or computes a wrong result is a failure with a
 * reason; the others are unaffected. Both belong to the backend of the
 * target (loom_backend below); the C backend's builder puts many candidates
 * in each C file and compiles files in parallel, its runner measures each
 * candidate in a child process. */
#ifndef LOOM_TUNE_H
#define LOOM_TUNE_H

#include "loom/db.h"
#include "loom/interp.h"
#include "loom/lower.h"
#include "loom/model.h"
#include "loom/runtime.h"
#include "loom/space.h"

/* What a backend built for one candidate, which only its own runner reads:
 * for the C backend a loom_c_kernel (the function, as dlsym gives it), for
 * the CUDA backend a loom_cuda_built. */
typedef const void *loom_kernel;
/* The calling convention of include/loom/codegen.h. */
typedef int32_t (*loom_c_kernel)(void *const *args, const int64_t *const *shapes);

/* ---- builder -------------------------------------------------------------- */

typedef struct loom_builder_options {
  int per_file;       /* candidates per C file; 0: 32 */
  int jobs;           /* compiles at once; 0: the online CPUs */
  double timeout_ms;  /* per compile; 0: 60000 */
  const char *cflags; /* NULL: $LOOM_CFLAGS, else the target's flags
                       * (loom_target_cflags) */
  const loom_target *target; /* NULL: this machine, detected */
  int nice;           /* the compiler runs under `nice -n` this; 0: not niced */
} loom_builder_options;

typedef struct loom_built {
  loom_kernel kernel; /* NULL when the candidate failed */
  char *error;        /* heap; why it failed */
  double compile_ms;  /* its share of its file's compile time */
  /* GPU kernels: the most registers a thread of them uses, and the bytes
   * spilled (ptxas's report); 0 for the C backend. */
  int registers;
  int64_t spill_bytes;
} loom_built;

struct loom_backend;

typedef struct loom_build_set {
  loom_built *items;  /* one per candidate, in order */
  int n;
  loom_runtime_lib **libs; /* the loaded files; kernels live as long */
  int n_libs;
  double wall_ms;     /* the whole build */
  const struct loom_backend *backend; /* that built it, and frees it */
} loom_build_set;

/* Builds funcs[0..n) with the backend of o's target. Fails only when out of
 * memory; each candidate's own failure (the code generator refusing it, the
 * compiler rejecting it or timing out) is in its item. The C backend
 * compiles a file that fails again one candidate at a time, so a failure
 * names its candidate. */
LOOM_API loom_status loom_tune_build(const loom_func *const *funcs, int n,
                                     const loom_builder_options *o,
                                     loom_build_set *out);
LOOM_API void loom_tune_build_free(loom_build_set *b);

/* The same build in a thread of its own: start returns at once (funcs'
 * functions must live until the wait), wait joins it and gives what
 * loom_tune_build would have, freeing the job. */
typedef struct loom_tune_build_job loom_tune_build_job;
LOOM_API loom_status loom_tune_build_start(const loom_func *const *funcs, int n,
                                           const loom_builder_options *o,
                                           LOOM_GIVE loom_tune_build_job **job);
LOOM_API loom_status loom_tune_build_wait(LOOM_TAKE loom_tune_build_job *job,
                                          loom_build_set *out);

/* ---- runner --------------------------------------------------------------- */

typedef struct loom_runner_options {
  int repeat;            /* measurements; 0: 3 */
  double min_repeat_ms;  /* calls per measurement are chosen to last this; 0: 2 */
  bool flush_cache;      /* write over the last-level cache before each */
  double timeout_ms;     /* per candidate, build to last measurement; 0: 10000 */
  /* A first call this long is the measurement, unless it is within 1.2x
   * of best_ms; 0: 100. */
  double long_call_ms;
  /* The fastest candidate so far (0: none yet). A candidate whose first call
   * reaches stop_ratio times it (and 5 ms) is stopped there and measured by
   * the time it ran, unchecked (is_stopped); one 2x slower gets a single
   * repeat: either is out of the running, and its rank among the losers
   * matters less than the seconds spent timing it. */
  double best_ms;
  double stop_ratio;     /* 0: 3 */
  bool no_stop;          /* never stop a first call (slow ones run to the end) */
  uint64_t seed;         /* inputs are those of `loom interp --seed` */
  bool check;            /* compare the first call's result with the interpreter's */
  const int64_t *scalars;/* per parameter of the workload; NULL when none */
  const loom_target *target; /* whose backend measures; NULL: this machine */
  int threads;           /* OpenMP threads of parallel loops; 0: the default */
  /* How to set them; NULL: the C runner finds loom_set_num_threads in the
   * library of each kernel it measures. */
  void (*set_threads)(int);
  /* Called once the inputs are seeded, to change some (NULL: none): values
   * that must be valid indices, say. inputs has one array per parameter
   * (NULL for scalars). */
  void (*fill_hook)(void *ctx, const loom_func *f, loom_interp_array **inputs);
  void *fill_ctx;
} loom_runner_options;

typedef struct loom_measured {
  loom_runtime_timing timing; /* valid when error is NULL */
  /* Its first call reached the stop time (best_ms above): timing is the
   * time it ran, a lower bound, and its result was not checked. */
  bool is_stopped;
  char *error;                /* heap; why the candidate failed */
} loom_measured;

/* Measures kernels[0..n), all implementations of workload (same
 * parameters), on the same seeded inputs, each in isolation (the C backend:
 * a child process per candidate): a crash,
 * a hang past the timeout, a nonzero return or (with check) a result that
 * differs from the interpreter's beyond the tolerance of docs/cli.md is that
 * candidate's error. A NULL kernel is skipped with the error "not built".
 * Fails only when the inputs cannot be made or the interpreter cannot run
 * the workload (d says why). */
LOOM_API loom_status loom_tune_run(const loom_func *workload,
                                   const loom_kernel *kernels, int n,
                                   const loom_runner_options *o,
                                   loom_measured *out, loom_diag *d);
LOOM_API void loom_tune_measured_free(loom_measured *m, int n);

/* The same, for many batches of one workload: the inputs are made once, and
 * the interpreter's results computed once, on the first candidate that
 * runs. */
typedef struct loom_tune_runner loom_tune_runner;
LOOM_API loom_status loom_tune_runner_new(const loom_func *workload,
                                          const loom_runner_options *o,
                                          LOOM_GIVE loom_tune_runner **out,
                                          loom_diag *d);
LOOM_API loom_status loom_tune_runner_run(loom_tune_runner *r,
                                          const loom_kernel *kernels, int n,
                                          loom_measured *out, loom_diag *d);
LOOM_API void loom_tune_runner_free(LOOM_TAKE loom_tune_runner *r);
/* Changes the per-candidate time limit of later runs. */
LOOM_API void loom_tune_runner_set_timeout(loom_tune_runner *r,
                                           double timeout_ms);
/* Changes best_ms (above) for later runs. */
LOOM_API void loom_tune_runner_set_best(loom_tune_runner *r, double best_ms);

/* ---- backends --------------------------------------------------------------
 * What the tuner and `loom run` need of a target kind's code generator,
 * builder and runner, as one table per backend (src/tune/backend.c): the C
 * backend for cpu (build.c, run.c) is the first. loom_tune_build and the
 * loom_tune_runner functions go to the backend of their options' target. A
 * runner gets its options (which set_timeout and set_best change) by
 * pointer, for as long as it lives. */
typedef struct loom_backend {
  const char *name;           /* "c" */
  loom_target_kind target;    /* the kind it generates code for */
  /* Fails with d when the code generator cannot express m for target t
   * (the postprocessors then drop the candidate). */
  loom_status (*check)(const loom_target *t, const loom_module *m, loom_diag *d);
  loom_status (*build)(const loom_func *const *funcs, int n,
                       const loom_builder_options *o, loom_build_set *out);
  void (*build_free)(loom_build_set *b);
  loom_status (*runner_new)(const loom_func *workload,
                            const loom_runner_options *o, void **runner,
                            loom_diag *d);
  loom_status (*runner_run)(void *runner, const loom_kernel *kernels, int n,
                            loom_measured *out, loom_diag *d);
  void (*runner_free)(void *runner);
} loom_backend;

/* The backend of t's kind (NULL t: this machine's CPU); NULL for a kind
 * without one, for which builds fail each candidate and runners and checks
 * fail with a diagnostic saying so. */
LOOM_API const loom_backend *loom_tune_backend(const loom_target *t);
/* The backend's check of m, or the diagnostic that t has no backend. */
LOOM_API loom_status loom_tune_check(const loom_target *t,
                                     const loom_module *m, loom_diag *d);

/* Float operations of one call of f (for GFLOP/s): float arithmetic and
 * math in stored values times the constant trip counts around them. */
LOOM_API double loom_tune_flops(const loom_func *f);

/* The relative and absolute tolerance results of dtype t are checked with. */
LOOM_API double loom_tune_tolerance(loom_dtype t);

/* ---- dlight: GPU schedules by rule (src/tune/dlight/) ------------------------
 * A function without a schedule is normalized, its blocks inlined where the
 * primitives allow, and offered rules in order; the first that recognizes
 * its shape schedules it from the target's description, in milliseconds,
 * without tuning (TVM's dlight; docs/dlight.md). */
typedef struct loom_dlight_rule {
  const char *name;
  /* Schedules the one function of *s for t: LOOM_OK when it takes it
   * (*s may be replaced by a schedule with more steps), LOOM_ERROR with why
   * saying what does not fit, LOOM_NOMEM. The pass hands each rule a copy,
   * so a rule that gives up half-way leaves nothing behind. */
  loom_status (*apply)(loom_sched **s, const loom_target *t, loom_diag *why);
} loom_dlight_rule;

/* The built-in rules in the order the pass offers them (Matmul,
 * GeneralReduction, Reduction, Fallback); *n gets their count. */
LOOM_API const loom_dlight_rule *const *loom_tune_dlight_rules(int *n);

/* f scheduled for t by the first of rules (NULL: the built-in ones) that
 * takes it: *sched holds the schedule (free it after *out's last use), of f
 * normalized in arena a, and *rule (when not NULL) names the rule. f itself,
 * *sched and *rule NULL, when f is marked tir.is_scheduled, binds threads
 * around every block, or no rule takes it. A function that binds threads
 * in part keeps its bound nests, and Fallback binds the blocks under no
 * bound loop (rule "Fallback"). explain (NULL: none) gets a line per rule
 * offered: why it does not apply, or that it schedules f. */
LOOM_API loom_status loom_tune_dlight(loom_arena *a, const loom_func *f,
                                      const loom_target *t,
                                      const loom_dlight_rule *const *rules, int n_rules,
                                      LOOM_GIVE loom_sched **sched, const loom_func **out,
                                      const char **rule, loom_buf *explain, loom_diag *d);

/* ---- fast tuning (src/tune/dlight/policy.c) ---------------------------------
 * Roller's idea on dlight's templates: a few tilings derived from the
 * hardware and ranked by a model of memory traffic and occupancy, each then
 * built and timed (docs/fast.md). */

/* A tiling of dlight's Matmul template. */
typedef struct loom_matmul_config {
  int64_t bm, bn; /* the block's tile of C */
  int64_t tm, tn; /* each thread's patch: (bm / tm) x (bn / tn) threads */
  int64_t bk;     /* the step of k through shared memory */
  double est_ms;  /* the policy's estimate; 0 for dlight's own tiling */
} loom_matmul_config;

/* The policy's best k tilings, best first, for the matmul of the one
 * function of m (as the tuner keeps it, normalized) on cuda target t; *n
 * gets their count, 0 when the function has no block Matmul takes. */
LOOM_API loom_status loom_tune_fast_configs(const loom_module *m, const loom_target *t,
                                            int k, loom_matmul_config *out, int *n,
                                            loom_diag *d);

/* The candidates fast tuning measures for the one function of m: dlight's
 * schedule with Matmul held to each of the policy's k - 1 best tilings, and
 * to dlight's own (so that the best measured is never slower than dlight's
 * default); for a function without a matmul, dlight's schedule alone. Each
 * *out[i] is a schedule of m; *n gets their count (0: dlight takes nothing). */
LOOM_API loom_status loom_tune_fast_candidates(const loom_module *m, const loom_target *t,
                                               int k, LOOM_GIVE loom_sched **out, int *n,
                                               loom_diag *d);

/* ---- the CUDA backend (src/tune/run_cuda.c) -----------------------------------
 * A function built for a cuda target: dlight's schedule when it binds
 * no threads, lowered (loom_lower_gpu), printed as CUDA C and compiled by
 * NVRTC for t's architecture. No GPU is needed to build. */
typedef struct loom_cuda_built loom_cuda_built;

LOOM_API loom_status loom_tune_cuda_build(const loom_func *f,
                                          const loom_target *t,
                                          LOOM_GIVE loom_cuda_built **out,
                                          loom_diag *d);
/* The CUDA C of f (after dlight's schedule when it binds no
 * thread), appended to out: what loom_tune_cuda_build compiles. */
LOOM_API loom_status loom_tune_cuda_emit(const loom_func *f, const loom_target *t,
                                         loom_buf *out, loom_diag *d);
LOOM_API const char *loom_tune_cuda_source(const loom_cuda_built *b);
LOOM_API const loom_runtime_cubin *loom_tune_cuda_cubin(const loom_cuda_built *b);
LOOM_API const loom_gpu_func *loom_tune_cuda_lowered(const loom_cuda_built *b);
LOOM_API void loom_tune_cuda_built_free(LOOM_TAKE loom_cuda_built *b);

/* The host statements of a built function run in this process
 * (src/tune/cuda_host.c): its module loaded into cu's context, its
 * parameters bound to device memory, and each call launching its kernels
 * and calling cuBLAS in order on the default stream, without waiting for
 * them. Device memory the host statements allocate (intermediates between
 * kernels) is allocated at the first call and kept until the host is
 * freed. blas is where cuBLAS is kept once opened, shared by the hosts
 * given the same one (NULL: the host's own). */
typedef struct loom_cuda_host loom_cuda_host;

LOOM_API loom_status loom_tune_cuda_host_new(loom_runtime_cuda *cu, const loom_cuda_built *b,
                                             loom_runtime_cublas **blas,
                                             LOOM_GIVE loom_cuda_host **out, loom_diag *d);
LOOM_API void loom_tune_cuda_host_free(LOOM_TAKE loom_cuda_host *h);
/* Binds parameter i: a buffer to the device address dev[i], its symbolic
 * dimensions to shapes[i] (the dimensions of the array given), a scalar to
 * scalars[i] (0 when scalars is NULL). */
LOOM_API loom_status loom_tune_cuda_host_bind(loom_cuda_host *h, const uint64_t *dev,
                                              const int64_t *const *shapes,
                                              const int64_t *scalars, loom_diag *d);
LOOM_API loom_status loom_tune_cuda_host_call(loom_cuda_host *h, loom_diag *d);

/* ---- tasks ---------------------------------------------------------------- */

/* A distinct workload of a module: functions equal up to renaming (and their
 * names) are one task, weighted by how many there are. */
typedef struct loom_task {
  const loom_func *func;   /* the first function of the task, as written */
  const loom_func *anon;   /* its loom_ir_func_anonymous form */
  uint64_t hash;           /* of anon */
  int weight;
} loom_task;

/* The form of f the tuner schedules and the database keys: f normalized
 * (include/loom/normalize.h: loops from 0, statements in blocks, iter vars,
 * regions), or f itself where normalization fails. NULL when out of
 * memory. */
LOOM_API const loom_func *loom_tune_normalized(loom_arena *a,
                                               const loom_func *f);

/* The tasks of m in the order their first function appears, in arena a;
 * each task's anon is its loom_tune_normalized form, anonymous. */
LOOM_API loom_status loom_tune_extract_tasks(loom_arena *a,
                                             const loom_module *m,
                                             loom_task **tasks, int *n);

/* How the trial budget is shared among tasks, round by round. */
typedef enum {
  LOOM_TASK_ROUND_ROBIN, /* cycle through the tasks not yet finished */
  LOOM_TASK_GRADIENT,    /* MetaSchedule's gradient-based choice, below */
} loom_task_policy;

typedef struct loom_task_scheduler loom_task_scheduler;

/* For n tasks with the given weights; NULL when out of memory. seed breaks
 * ties. The gradient policy runs one round-robin pass first; then each round
 * it picks the task with the largest (alpha * g1 + (1 - alpha) * g2) * weight,
 * where b is the task's best latency after each of its rounds, g1 the mean
 * improvement over the last `window` rounds and g2 = b[last] / rounds; a task
 * with no valid result yet comes last (alpha 0.2, window 3). */
LOOM_API LOOM_GIVE loom_task_scheduler *
loom_task_scheduler_new(loom_task_policy p, const int *weights, int n,
                        uint64_t seed);
LOOM_API void loom_task_scheduler_free(LOOM_TAKE loom_task_scheduler *s);
/* The task to give the next round to, or -1 when every task is finished. */
LOOM_API int loom_task_scheduler_next(loom_task_scheduler *s);
/* Reports a round of task i: its best latency so far (0: none valid yet). */
LOOM_API void loom_task_scheduler_report(loom_task_scheduler *s, int i,
                                         double best_ms);
/* Marks task i finished (its trials spent, or its space exhausted). */
LOOM_API void loom_task_scheduler_finish(loom_task_scheduler *s, int i);

/* ---- search --------------------------------------------------------------- */

typedef enum {
  LOOM_SEARCH_EVOLUTIONARY, /* mutate the best measured traces' decisions */
  LOOM_SEARCH_REPLAY_TRACE, /* replay the space's trace with fresh decisions */
  LOOM_SEARCH_REPLAY_FUNC,  /* run the space's script again with a fresh seed */
  /* Fast tuning: on a cuda target the trials are the candidates of
   * loom_tune_fast_candidates, each measured once; on a CPU, the
   * evolutionary search's first o->trials over the generated spaces. No
   * space script. */
  LOOM_SEARCH_FAST,
} loom_search_strategy;

/* What a search reports after each measured batch. */
typedef struct loom_tune_progress {
  const char *task;     /* the task's function name */
  int trials, max_trials, failures;
  double best_ms;       /* 0 until one candidate succeeded */
  double baseline_ms;   /* the unscheduled function */
  double elapsed_s;
  double flops;         /* per call, 0 when not a float computation */
  int rejected;         /* candidates dropped before measuring */
} loom_tune_progress;

typedef struct loom_tune_options {
  loom_search_strategy strategy;
  int trials;            /* candidates measured per task, at most */
  int batch;             /* candidates built and measured together; 0: 16 */
  /* Evolutionary: candidates of each generation; 0: 128. The fastest
   * measured fifth of it (MetaSchedule's init_measured_ratio) are kept as
   * parents and start every round's population. */
  int population;
  int genetic_iters;     /* evolutionary: generations per round; 0: 4 */
  double mutate_prob;    /* evolutionary: a child is a mutation; 0: 0.85 */
  double eps_greedy;     /* evolutionary: share of random picks; 0: 0.05 */
  uint64_t seed;
  /* The machine the rules generate spaces for and the postprocessors and
   * mutators read (cores, vector width); every measurement is recorded
   * under its key (loom_target_key). NULL: loom_target_detect's. */
  const loom_target *target;
  /* Rules of the caller's, run before the built-in ones when the spaces
   * are generated (loom_space_generate_with); borrowed. */
  const loom_space_rule *rules;
  int n_rules;
  /* The unscheduled function is not measured (baseline_ms stays 0): for
   * workloads whose naive form runs for minutes. */
  bool skip_baseline;
  /* Propose and build the next batch (the compiler under nice 19) while
   * one is measured, instead of one batch after the other: faster on an
   * otherwise idle machine, starved where other work keeps the cores busy
   * (docs/tune.md). */
  bool pipeline;
  /* Before the best is named, the fastest few measured within 1.5x of it
   * (the unscheduled function too) are measured this many times more, in
   * turns, and ranked by the mean of all their measurements, which their
   * records in the database then hold; 0: 2, negative: never. */
  int finalist_rounds;
  loom_builder_options builder;
  loom_runner_options runner;
  /* Ranks candidates before measuring (higher is better) and learns from
   * each measured batch; NULL: random ranks. Borrowed. */
  loom_model *model;
  void (*progress)(void *ctx, const loom_tune_progress *p);
  void *progress_ctx;
} loom_tune_options;

typedef struct loom_tune_result {
  double best_ms, baseline_ms; /* 0 when none succeeded; the best may be a
                                  record of the database */
  char *best_trace;            /* heap; the best schedule as a script */
  int trials, failures;
  int remeasured;              /* finalists measured again (0: none) */
  int disqualified;            /* finalists out: they failed being measured
                                  again, and their records are failures */
  /* Candidates dropped before measuring: a replay or a postprocessor
   * refused them. They are not trials. */
  int rejected;
  char *rejections;            /* heap; the first few distinct reasons, one a
                                  line; NULL when none */
  int stopped;                 /* trials stopped in their first call (best_ms
                                  of loom_runner_options) */
  int resumed;                 /* schedules the database held from earlier
                                  runs (the function as written aside), not
                                  measured again */
  double propose_s, build_s, run_s; /* where the time went; build_s is the
                                       time spent waiting for builds */
  double build_wall_s;         /* the builds' own time, overlapped or not */
  double final_s;              /* measuring the unscheduled function and the
                                  finalists again, outside the trials */
} loom_tune_result;

/* Tunes one task over its design spaces: the one a schedule script
 * describes (its sampling instructions are the knobs; it is run on a module
 * holding the task's function alone, named main), or, when space is NULL,
 * those loom_space_generate makes for o->target_desc. Every candidate is
 * postprocessed (loom_space_postprocess) before it is measured; one that
 * fails is rejected with its reason. Every measurement, failures included,
 * is committed to db (NULL: none) with the full trace, postprocessing
 * included, and the best records of db seed the evolutionary population.
 * Every schedule db holds for the task on the target already is marked
 * measured, so a run resumed after an interruption measures none of them
 * again (only the unscheduled function, the reference, is measured each
 * run). Fails with d when the space cannot be applied to the task at all,
 * or on a database error. */
LOOM_API loom_status loom_tune_task(const loom_task *task, const char *space,
                                    size_t space_len, const char *space_file,
                                    loom_db *db, const loom_tune_options *o,
                                    loom_tune_result *out, loom_diag *d);
LOOM_API void loom_tune_result_free(loom_tune_result *r);
/* r as one JSON object, the line `loom tune --json` prints for task t:
 * task, weight, trials, failures, rejected, stopped, disqualified, resumed, best_ms,
 * baseline_ms, gflops (0 when not a float computation or none succeeded)
 * and trace (the best schedule's script, or null). */
LOOM_API void loom_tune_result_json(const loom_task *t, const loom_tune_result *r,
                                    loom_buf *out);

/* ---- networks ----------------------------------------------------------------- */

/* One task of a graph's tuning: its workload, weighted by the graph's calls
 * of it, and what its rounds found. */
typedef struct loom_graph_task {
  loom_task task;
  int rounds, trials, failures;
  double best_ms, baseline_ms; /* 0: none succeeded / not measured */
  char *best_trace;            /* heap; NULL when none succeeded */
} loom_graph_task;

typedef struct loom_graph_tuning {
  loom_arena *arena;           /* the tasks' workload forms */
  loom_graph_task *tasks;      /* in the order the graph first calls them */
  int n_tasks;
  int trials;                  /* measured, all tasks together */
  /* The graph's time by its calls' kernels alone: each call at its task's
   * best (its unscheduled time where none succeeded), and unscheduled. */
  double estimate_ms, baseline_ms;
} loom_graph_tuning;

/* Tunes the prim funcs graph g of m calls under one budget of trials (a
 * network, as MetaSchedule tunes a model): equal workloads are one task,
 * weighted by how many calls reach it; rounds of o->batch trials (16 when
 * 0) go to the task the gradient scheduler picks, each a resumed
 * loom_tune_task over the generated spaces that commits to db, until the
 * budget or every task's space is spent. With LOOM_SEARCH_FAST each task
 * has one round of its top o->trials (20 when 0) instead. trials <= 0: 32
 * a task (fast: K a task). */
LOOM_API loom_status loom_tune_graph(const loom_module *m, const loom_graph *g, int trials,
                                     const loom_tune_options *o, loom_db *db,
                                     loom_graph_tuning *out, loom_diag *d);
LOOM_API void loom_graph_tuning_free(loom_graph_tuning *t);

/* The cost model of a tuning run, kept in the database db under the state
 * "model.xgb", so that a run starts from what earlier ones learned:
 * XGBoost's, loaded from db when it holds one (random ranks when is_random).
 * A state this Loom cannot read is dropped and a new model started, with
 * *note (heap, when note is not NULL) saying so. save keeps m's state in
 * db (nothing for a model that does not learn). */
LOOM_API loom_status loom_tune_model_open(loom_db *db, bool is_random, uint64_t seed,
                                          LOOM_GIVE loom_model **out, char **note,
                                          loom_diag *d);
LOOM_API loom_status loom_tune_model_save(const loom_model *m, loom_db *db,
                                          loom_diag *d);

/* ---- apply-db (K1) -------------------------------------------------------- */

/* A module with each function that matches a tuned workload rewritten into
 * its best schedule. It owns the schedules the new functions live in. */
typedef struct loom_applied {
  loom_module *module;
  bool *is_applied;   /* per function of module */
  /* Per function not applied: the key of a target with records of its
   * workload when the target asked for has none (else NULL). */
  const char **elsewhere;
  int n_applied;
  void *owned_;       /* schedules and memory, freed with the result */
} loom_applied;

/* For each function of m: finds its workload (structurally, whatever its
 * name), replays the fastest record on target (a key, loom_target_key; NULL:
 * any) on it, and keeps the function's name and attributes, adding
 * "tir.is_scheduled". A function with no record stays as it is; building
 * never tunes. Fails with d when a
 * stored trace no longer applies (the database is from another Loom). */
LOOM_API loom_status loom_tune_apply_db(const loom_module *m, loom_db *db,
                                        const char *target, loom_applied *out,
                                        loom_diag *d);
LOOM_API void loom_tune_applied_free(loom_applied *a);

/* ---- the module pipeline (K2, src/tune/pipeline.c) -------------------------
 * Module passes in the user's order: each function is taken by the first
 * pass that handles it, and the later passes never see it. */

typedef enum {
  LOOM_PASS_DISPATCH, /* "dispatch": a library computes it (loom/dispatch.h) */
  LOOM_PASS_MANUAL,   /* "manual=DIR": a pair of DIR names its replacement */
  LOOM_PASS_APPLY_DB, /* "apply-db": its best record in the database */
  LOOM_PASS_DLIGHT,   /* "dlight": dlight's rules (cuda targets) */
  LOOM_PASS_DEFAULT,  /* "default": as written on a CPU, dlight's on cuda */
  /* "best": of what dispatch, manual, apply-db and default would make, the
   * fastest measured on this machine (the choice kept in the database) */
  LOOM_PASS_BEST,
  LOOM_PASS_COUNT_
} loom_pass_kind;

#define LOOM_PIPELINE_MAX 8

typedef struct loom_pipeline {
  loom_pass_kind passes[LOOM_PIPELINE_MAX];
  int n;
  const char *manual_dir; /* manual's DIR, within the spec's text */
  size_t manual_dir_len;
} loom_pipeline;

/* The pass's name as the command line spells it. */
LOOM_API const char *loom_pass_name(loom_pass_kind k);
/* Reads "dispatch,manual=DIR,apply-db,default": fails with d naming the
 * unknown pass and the known ones, a pass given twice, or an empty list. */
LOOM_API loom_status loom_pipeline_parse(const char *spec, loom_pipeline *out,
                                         loom_diag *d);

typedef struct loom_compiled {
  loom_module *module;  /* m's functions, each as its pass left it */
  const char **pass;    /* per function: the pass that took it; NULL: none */
  const char **why;     /* per function: what that pass did, or why none took it */
  void *owned_;         /* memory and schedules, freed with the result */
} loom_compiled;

/* Manual dispatch's pairs: each file DIR/NAME.py holds a function named
 * `before` and the optimized TensorIR named `after` that replaces it, with
 * the same parameters; a function of a program matches `before` by
 * structural equality, modulo names, as apply-db matches workloads. */
typedef struct loom_manual loom_manual;

LOOM_API LOOM_GIVE loom_manual *loom_manual_new(void);
/* Reads every DIR/\*.py, in name order. A file that does not read, lacks
 * `before` or `after`, or whose `after` takes other parameters fails with d
 * at its file and line; d may point into m, so print it before freeing m. */
LOOM_API loom_status loom_manual_load(loom_manual *m, const char *dir, loom_diag *d);
LOOM_API int loom_manual_count(const loom_manual *m);
/* The replacement of f, named and attributed as f, in arena a; NULL when
 * no pair matches. *file (when not NULL) names the pair's file. */
LOOM_API const loom_func *loom_manual_find(const loom_manual *m, loom_arena *a,
                                           const loom_func *f, const char **file);
LOOM_API void loom_manual_free(LOOM_TAKE loom_manual *m);

/* Runs pipeline p over m for target t; db (NULL: none) is what apply-db
 * reads, and apply-db without one is an error; manual (NULL: none) holds
 * the pairs of p's manual pass, loaded by the caller. */
LOOM_API loom_status loom_tune_compile(const loom_module *m, const loom_pipeline *p,
                                       const loom_target *t, loom_db *db,
                                       const loom_manual *manual, loom_compiled *out,
                                       loom_diag *d);
/* The same with the pipeline as text: parses spec (loom_pipeline_parse),
 * loads the pairs of its manual pass, opens the database at db_path (NULL:
 * none; "loom.db" when the pipeline has apply-db) and runs the pipeline. The
 * result keeps the database and the pairs open until it is freed, on
 * failure too: d may point into the pairs' files, so print it first. */
LOOM_API loom_status loom_tune_compile_spec(const loom_module *m, const char *spec,
                                            const loom_target *t, const char *db_path,
                                            loom_compiled *out, loom_diag *d);
LOOM_API void loom_tune_compiled_free(loom_compiled *c);

#endif
