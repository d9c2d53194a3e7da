/* The interpreter as oracle for the design space: for every function of
 * every TVMScript program under tests/<module>/cases/ and ../shared/corpus/
 * (other files there, TE and schedule scripts, are passed over), the spaces
 * are generated (never an error, long-tail programs included), SAMPLES
 * candidates of each are drawn with fresh decisions and postprocessed, and
 * each candidate must compute what the unscheduled function computes on the
 * same random inputs (when the function runs in the interpreter quickly and
 * without error). Its trace must also print to JSON, read back and replay
 * to the same module. The first candidate of each space of a few programs
 * is compiled with the C backend and run against the interpreter.
 * Postprocessing may drop a candidate only for a loop of dynamic extent or
 * what the C backend cannot express (an extern call).
 * Functions not compared are counted: too big for the interpreter, or
 * stopped by it, which only the programs meant to stop may be.
 * The same programs then go through the cuda design space: the candidates
 * are lowered for the GPU by its postprocessors' check, and the
 * interpreter, which runs thread loops as loops, compares them; a GPU
 * candidate may also be dropped for going past the GPU's limits.
 * LOOM_ORACLE_TIMES=1 prints the time each program takes, LOOM_ORACLE_SHOW=1
 * why the interpreter stops. */
#include "loom/interp.h"
#include "loom/space.h"
#include "loom/tune.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>
#include <time.h>

#define SAMPLES 8
/* Programs with more scalar steps than this are not interpreted (the 1024^3
 * matmul, the 56x56 convolution and the 128x1000 softmax of the corpus
 * take seconds to minutes in the interpreter, per candidate); the small
 * cases cover the same shapes, and the big ones are still generated,
 * sampled, postprocessed and replayed. */
#define MAX_WORK 300000.0
#define MAX_PARAMS 16

/* Programs whose candidates are also compiled and run. */
static const char *const built[] = {"matmul_64.py", "softmax.py", "conv2d.py",
                                    "exp_matmul.py", "matmul_relu.py",
                                    "layer_norm.py", "row_norm.py"};

/* Programs whose functions stop the interpreter on purpose (out of bounds,
 * failed asserts, extern calls, a shape no parameter gives). */
static const char *const meant_to_stop[] = {"errors.py", "stmts.py", "symbolic64.py",
                                            "crash.py", "parallel_assert_fails.py"};
#define N_MEANT_TO_STOP (sizeof meant_to_stop / sizeof *meant_to_stop)

static int n_candidates, n_dropped, n_built, n_funcs, n_unexpected;
static int n_tiled_kept; /* GPU candidates kept from a tiled space */
/* Functions whose candidates are not compared with the interpreter: too
 * big for it, or it stops with an error (the interpreter's error cases). */
static int n_too_big, n_interp_errors;
static int n_tensorized; /* spaces holding a tensorize step */
static int n_rfactored;  /* spaces holding an rfactor step */

/* Scalar steps of a statement: loop extents multiplied down to stores. */
static double work(const loom_stmt *s, int depth) {
  if (!s || depth > 200)
    return 0;
  switch (s->kind) {
  case LOOM_STMT_FOR: {
    int64_t e = 1;
    loom_ir_is_const_int(s->u.loop.extent, &e);
    return (double)e * work(s->u.loop.body, depth + 1);
  }
  case LOOM_STMT_BLOCK_REALIZE:
    return work(s->u.realize.block->init, depth + 1) +
           work(s->u.realize.block->body, depth + 1);
  case LOOM_STMT_SEQ: {
    double w = 0;
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      w += work(s->u.seq.stmts[i], depth + 1);
    return w;
  }
  case LOOM_STMT_IF:
    return work(s->u.if_.then_case, depth + 1) +
           work(s->u.if_.else_case, depth + 1);
  case LOOM_STMT_LET: return work(s->u.let.body, depth + 1);
  default: return 1;
  }
}

static bool run(const loom_func *f, uint64_t seed, loom_interp_array **args,
                bool quiet) {
  loom_diag d;
  loom_diag_init(&d);
  /* Every scalar parameter (and so every symbolic dimension) is 6. */
  int64_t scalars[64];
  for (int i = 0; i < 64; i++)
    scalars[i] = 6;
  bool ok = f->n_params <= 64 && loom_interp_alloc_args(f, scalars, args, &d) == LOOM_OK;
  loom_rng r;
  loom_rng_seed(&r, seed);
  for (int i = 0; ok && i < f->n_params; i++)
    if (args[i])
      loom_interp_fill_random(args[i], &r);
  ok = ok && loom_interp_run(f, args, scalars, &d) == LOOM_OK;
  if (!ok && !quiet)
    fprintf(stderr, "interp: %s\n", d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return ok;
}

static bool same_outputs(const loom_func *a, const loom_func *b,
                         uint64_t seed) {
  loom_interp_array *x[MAX_PARAMS] = {0}, *y[MAX_PARAMS] = {0};
  bool ok = a->n_params <= MAX_PARAMS && run(a, seed, x, false) && run(b, seed, y, false);
  for (int i = 0; ok && i < a->n_params; i++) {
    char *why = NULL;
    if (x[i] && !loom_interp_compare(y[i], x[i], 1e-4, 1e-5, &why)) {
      fprintf(stderr, "output %d differs %s\n", i, why ? why : "");
      ok = false;
    }
    free(why);
  }
  if (a->n_params <= MAX_PARAMS) {
    loom_interp_free_args(a, x);
    loom_interp_free_args(b, y);
  }
  return ok;
}

/* The candidate's trace, printed as JSON and read back, replays with its
 * decisions to the same module. */
static bool replays(const loom_module *m, loom_sched *s) {
  loom_trace t = loom_sched_trace(s);
  loom_buf b;
  loom_buf_init(&b);
  loom_trace_print_json(&t, LOOM_DIALECT_TIR, &b);
  loom_arena *a = loom_arena_new();
  loom_diag d;
  loom_diag_init(&d);
  loom_trace back;
  loom_sched *r = loom_sched_new(m, 99);
  bool ok = b.data && loom_trace_read_json(b.data, b.len, "c.json", a, &back,
                                           &d) == LOOM_OK;
  ok = ok && loom_trace_apply(&back, r, LOOM_REPLAY_CHECK, &d) == LOOM_OK;
  ok = ok && loom_ir_equal_module(loom_sched_module(r), loom_sched_module(s),
                                  NULL);
  if (!ok)
    fprintf(stderr, "replay: %s\n", d.msg ? d.msg : "differs");
  loom_sched_free(r);
  loom_diag_free(&d);
  loom_arena_free(a);
  loom_buf_free(&b);
  return ok;
}

/* Whether the file name of path is one of names. */
static bool is_named(const char *path, const char *const *names, size_t n) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t i = 0; i < n; i++)
    if (!strcmp(base, names[i]))
      return true;
  return false;
}

static bool is_built(const char *path) {
  return is_named(path, built, sizeof built / sizeof *built);
}

/* Compiles the candidates with the C backend, all in one file, and runs
 * them against the interpreter of the unscheduled function. The interpreter
 * runs a parallel loop one iteration after another, which hides a race
 * between iterations; the compiled kernels run with 4 threads, more than
 * the cores of a small machine, so that iterations interleave. */
static void build_and_run(const loom_func *w, const loom_func **funcs, int n) {
  loom_builder_options bo = {.per_file = SAMPLES, .jobs = 2, .cflags = "-O1"};
  loom_build_set b;
  CHECK(loom_tune_build(funcs, n, &bo, &b) == LOOM_OK);
  loom_kernel kernels[SAMPLES];
  for (int k = 0; k < n; k++) {
    if (b.items[k].error)
      fprintf(stderr, "build: %s\n", b.items[k].error);
    CHECK(b.items[k].kernel != NULL);
    kernels[k] = b.items[k].kernel;
  }
  loom_runner_options ro = {.repeat = 1, .timeout_ms = 5000, .seed = 5,
                            .check = true, .threads = 4};
  loom_measured meas[SAMPLES];
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_tune_run(w, kernels, n, &ro, meas, &d) == LOOM_OK);
  for (int k = 0; k < n; k++) {
    if (meas[k].error)
      fprintf(stderr, "run: %s\n", meas[k].error);
    CHECK(meas[k].error == NULL);
  }
  n_built += n;
  loom_tune_measured_free(meas, n);
  loom_tune_build_free(&b);
  loom_diag_free(&d);
}

/* The space binds a tiling's threads (MultiLevelTiling's GPU structure). */
static bool is_tiled(const loom_trace *t) {
  for (int q = 0; q < t->n_insts; q++)
    if (t->insts[q]->kind == LOOM_INST_BIND)
      return true;
  return false;
}

/* Whether a candidate may be dropped for this reason. */
static bool is_expected_drop(const char *why, const loom_target *tg) {
  /* On a GPU: past its limits, or nested blocks each bound to threads of
   * their own extent in one kernel (tests/interp/cases/blocks.py; TVM
   * binds them alike and fails as well). */
  if (why && tg->kind == LOOM_TARGET_CUDA &&
      (strstr(why, "VerifyGPUCode") || strstr(why, "threads per block") ||
       strstr(why, "shared memory") ||
       strstr(why, "every loop bound to one thread axis in a kernel must have the same extent")))
    return true;
  return why && (strstr(why, "DisallowDynamicLoop") ||
                 strstr(why, "cannot call extern"));
}

static void check_func(const char *path, const loom_func *f0,
                       const loom_target *tg) {
  loom_arena *a = loom_arena_new();
  loom_module *m = loom_ir_module(a);
  loom_func **fs = loom_arena_alloc(a, sizeof *fs);
  if (!m || !fs) {
    CHECK(false);
    loom_arena_free(a);
    return;
  }
  fs[0] = (loom_func *)f0;
  m->funcs = fs;
  m->n_funcs = 1;
  n_funcs++;
  loom_diag d;
  loom_diag_init(&d);
  loom_trace *spaces;
  int n_spaces = 0;
  CHECK(loom_space_generate(m, tg, a, &spaces, &n_spaces, &d) == LOOM_OK);
  CHECK(n_spaces >= 1);
  if (d.has_error)
    fprintf(stderr, "%s: %s: %s\n", path, f0->name, d.msg ? d.msg : "?");
  const loom_func *f = m->funcs[0];
  bool interpret = work(f->body, 0) <= MAX_WORK;
  n_too_big += !interpret;
  if (interpret) {
    /* A function that fails in the interpreter (on purpose, in the
     * interpreter's error cases) has nothing to compare. */
    loom_interp_array *x[MAX_PARAMS] = {0};
    interpret = f->n_params <= MAX_PARAMS && run(f, 17, x, !getenv("LOOM_ORACLE_SHOW"));
    if (f->n_params <= MAX_PARAMS)
      loom_interp_free_args(f, x);
    n_interp_errors += !interpret;
    if (!interpret && !is_named(path, meant_to_stop, N_MEANT_TO_STOP)) {
      CHECK(false);
      fprintf(stderr, "%s: %s: the interpreter stops; its candidates go unchecked\n",
              path, f0->name);
    }
  }
  loom_sched *keep[SAMPLES];
  int n_keep = 0;
  for (int k = 0; k < n_spaces; k++) {
    for (int q = 0; q < spaces[k].n_insts; q++)
      n_tensorized += spaces[k].insts[q]->kind == LOOM_INST_TENSORIZE;
    for (int q = 0; q < spaces[k].n_insts; q++)
      if (spaces[k].insts[q]->kind == LOOM_INST_RFACTOR) {
        n_rfactored++;
        break;
      }
    loom_sched *cands[SAMPLES];
    const loom_func *funcs[SAMPLES];
    int n_ok = 0;
    /* A GPU tiling draws its thread counts, and most draws of a small
     * kernel fall short of a warp: draw until SAMPLES are kept, as the
     * search's sampling does. */
    int tries = tg->kind == LOOM_TARGET_CUDA ? 8 * SAMPLES : SAMPLES;
    for (int i = 0; i < tries && n_ok < SAMPLES; i++) {
      loom_sched *s = loom_sched_new(m, 1000 * (uint64_t)k + (uint64_t)i);
      loom_diag cd;
      loom_diag_init(&cd);
      loom_status st = loom_trace_apply(&spaces[k], s, LOOM_REPLAY_RESAMPLE, &cd);
      CHECK(st == LOOM_OK);
      if (st == LOOM_OK)
        st = loom_space_postprocess(s, tg, &cd);
      n_candidates++;
      if (st != LOOM_OK) {
        n_dropped++;
        if (getenv("LOOM_ORACLE_DROPS"))
          fprintf(stderr, "%s: dropped: %s\n", path, cd.msg ? cd.msg : "?");
        if (!is_expected_drop(cd.msg, tg)) {
          n_unexpected++;
          CHECK(false);
          fprintf(stderr, "%s: %s: space %d candidate %d dropped: %s\n",
                  path, f0->name, k, i, cd.msg ? cd.msg : "?");
        }
        loom_sched_free(s);
      } else {
        n_tiled_kept += tg->kind == LOOM_TARGET_CUDA && is_tiled(&spaces[k]);
        cands[n_ok] = s;
        funcs[n_ok++] = loom_sched_module(s)->funcs[0];
      }
      loom_diag_free(&cd);
    }
    for (int i = 0; i < n_ok; i++) {
      CHECK(replays(m, cands[i]));
      if (interpret && !same_outputs(f, funcs[i], 17 + (uint64_t)i)) {
        CHECK(false);
        loom_trace t = loom_sched_trace(cands[i]);
        loom_buf b;
        loom_buf_init(&b);
        loom_trace_print_py(&t, LOOM_DIALECT_TIR, &b);
        fprintf(stderr, "%s: space %d: wrong candidate:\n%s\n", path, k,
                b.data ? b.data : "");
        loom_buf_free(&b);
      }
    }
    /* The first candidate of each space is kept for one build. */
    for (int i = 0; i < n_ok; i++) {
      if (i == 0 && n_keep < SAMPLES && is_built(path) && tg->kind == LOOM_TARGET_CPU)
        keep[n_keep++] = cands[i];
      else
        loom_sched_free(cands[i]);
    }
  }
  const loom_func *to_build[SAMPLES];
  for (int i = 0; i < n_keep; i++)
    to_build[i] = loom_sched_module(keep[i])->funcs[0];
  if (n_keep > 0)
    build_and_run(f, to_build, n_keep);
  for (int i = 0; i < n_keep; i++)
    loom_sched_free(keep[i]);
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* Checks every function of the program at path; false when the file is
 * not a TVMScript program. */
static bool check_program(const char *path, const loom_target *tg) {
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  bool ok = loom_read_file(path, &text, &len, &d) == LOOM_OK;
  if (ok) {
    ok = loom_script_read(text, len, path, a, &m, &d) == LOOM_OK;
    free(text);
  }
  for (int i = 0; ok && i < m->n_funcs; i++)
    check_func(path, m->funcs[i], tg);
  loom_diag_free(&d);
  loom_arena_free(a);
  return ok;
}

static int by_name(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every .py file of dir, in name order; returns how many were programs. */
static int check_dir(const char *dir, const loom_target *tg) {
  DIR *dp = opendir(dir);
  if (!dp)
    return 0;
  char *names[256];
  int n = 0, n_programs = 0;
  struct dirent *e;
  while ((e = readdir(dp)) && n < 256) {
    size_t len = strlen(e->d_name);
    if (len > 3 && !strcmp(e->d_name + len - 3, ".py"))
      names[n++] = strdup(e->d_name);
  }
  closedir(dp);
  qsort(names, (size_t)n, sizeof *names, by_name);
  for (int i = 0; i < n; i++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    clock_t c0 = clock();
    n_programs += check_program(path, tg);
    if (getenv("LOOM_ORACLE_TIMES"))
      fprintf(stderr, "%s: %.2f s\n", path,
              (double)(clock() - c0) / CLOCKS_PER_SEC);
    free(names[i]);
  }
  return n_programs;
}

/* Every program again, through the cuda design space. */
static void check_cuda(const char *root) {
  loom_target tg;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cuda -arch=sm_80", &tg, &d) == LOOM_OK);
  loom_diag_free(&d);
  n_candidates = n_dropped = n_funcs = n_too_big = n_interp_errors = 0;
  char path[1024];
  int n_programs = 0;
  static const char *const dirs[] = {"tests/space/cases", "tests/schedule/cases",
                                     "tests/interp/cases", "tests/dlight/cases"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
    snprintf(path, sizeof path, "%s/%s", root, dirs[i]);
    n_programs += check_dir(path, &tg);
  }
  snprintf(path, sizeof path, "%s/../shared/corpus", root);
  n_programs += check_dir(path, &tg);
  CHECK(n_programs >= 20);
  printf("oracle on cuda: %d programs, %d functions (%d too big to interpret, %d "
         "stopped by the interpreter); %d candidates, %d dropped, %d kept from spaces with threads bound\n",
         n_programs, n_funcs, n_too_big, n_interp_errors, n_candidates, n_dropped,
         n_tiled_kept);
  /* Tiled candidates that launch are found for the matmuls and
   * convolutions, and checked like the rest. */
  CHECK(n_tiled_kept >= 100);
  CHECK(n_unexpected == 0);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  loom_target tg;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu -cores=2", &tg, &d) == LOOM_OK);
  loom_diag_free(&d);
  char path[1024];
  snprintf(path, sizeof path, "%s/tests", root);
  DIR *dp = opendir(path);
  CHECK(dp != NULL);
  char *modules[64];
  int n_modules = 0, n_local = 0;
  struct dirent *e;
  while (dp && (e = readdir(dp)) && n_modules < 64)
    if (e->d_name[0] != '.')
      modules[n_modules++] = strdup(e->d_name);
  if (dp)
    closedir(dp);
  qsort(modules, (size_t)n_modules, sizeof *modules, by_name);
  for (int i = 0; i < n_modules; i++) {
    snprintf(path, sizeof path, "%s/tests/%s/cases", root, modules[i]);
    n_local += check_dir(path, &tg);
    free(modules[i]);
  }
  snprintf(path, sizeof path, "%s/../shared/corpus", root);
  int n_corpus = check_dir(path, &tg);
  CHECK(n_local >= 20);
  CHECK(n_built > 0);
  /* AddRFactor: the reductions of softmax and of the row sums. */
  CHECK(n_rfactored >= 8);
  CHECK(n_tensorized == 0); /* only with -tensorize=1 */
  /* Auto-tensorize: kernels whose blocks fit the built-in intrinsics, with
   * the rule on; the tensorized spaces are checked as every space is. */
  static const char *const with_intrins[] = {
      "tests/schedule/cases/tensorize_mix.py", "tests/space/cases/dense_relu.py",
      "tests/schedule/cases/matmul_64.py"};
  loom_target tt;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu -cores=2 -tensorize=1", &tt, &d) == LOOM_OK);
  loom_diag_free(&d);
  for (size_t i = 0; i < sizeof with_intrins / sizeof *with_intrins; i++) {
    snprintf(path, sizeof path, "%s/%s", root, with_intrins[i]);
    CHECK(check_program(path, &tt));
  }
  CHECK(n_tensorized >= 3);
  printf("oracle: %d programs here, %d in the corpus, %d functions (%d too big to "
         "interpret, %d stopped by the interpreter); %d candidates, %d dropped, %d "
         "built; %d spaces rfactored, %d tensorized\n",
         n_local, n_corpus, n_funcs, n_too_big, n_interp_errors, n_candidates,
         n_dropped, n_built, n_rfactored, n_tensorized);
  /* The work estimate leaves out only the big kernels (the corpus's, a few
   * cases'): a fifth of the functions at most. */
  CHECK(n_too_big * 5 <= n_funcs);
  check_cuda(root);
  return test_summary("space oracle");
}
