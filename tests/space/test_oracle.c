/* The interpreter as oracle for the design space: for every program of the
 * test cases and of ../shared/corpus small enough to interpret quickly,
 * the spaces are generated (never an error, long-tail programs included),
 * SAMPLES candidates of each are drawn with fresh decisions and
 * postprocessed, and each candidate must compute what the unscheduled
 * program computes on the same random inputs. Its trace must also print
 * to JSON, read back and replay to the same module. A few candidates are
 * compiled with the C backend and run against the interpreter. None of
 * these programs may have a candidate dropped by postprocessing.
 * LOOM_ORACLE_TIMES=1 prints the time each program takes. */
#include "loom/interp.h"
#include "loom/space.h"
#include "loom/tune.h"
#include "test.h"

#include <stdlib.h>
#include <time.h>

#define SAMPLES 8
/* Programs with more scalar steps than this are not interpreted (the 1024^3
 * matmul, the 56x56 convolution and the 128x1000 softmax of the corpus
 * take seconds to minutes in the interpreter, per candidate); the small
 * cases cover the same shapes, and the big ones are still generated,
 * sampled, postprocessed and replayed. */
#define MAX_WORK 300000.0

static const char *const local[] = {
    "tests/schedule/cases/matmul.py",     "tests/schedule/cases/matmul_64.py",
    "tests/schedule/cases/softmax.py",    "tests/schedule/cases/conv2d.py",
    "tests/schedule/cases/branches.py",   "tests/schedule/cases/twin.py",
    "tests/schedule/cases/chain.py",      "tests/tune/cases/mm64.py",
    "tests/arith/cases/seed_branches.py", "tests/arith/cases/seed_inplace.py",
    "tests/arith/cases/seed_loop_from_one.py",
    "tests/arith/cases/seed_prefix_sum.py",
    "tests/space/cases/scale_matmul.py",  "tests/space/cases/exp_matmul.py",
};
static const char *const corpus[] = {
    "conv2d_nhwc.py",   "matmul_1024.py",         "seed_branches.py",
    "seed_inplace.py",  "seed_loop_from_one.py", "seed_prefix_sum.py",
    "softmax.py",
};
/* Programs whose candidates are also compiled and run. */
static const char *const built[] = {"matmul_64.py", "softmax.py", "conv2d.py",
                                    "exp_matmul.py"};

static int n_candidates, n_dropped, n_built;

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

static bool run(const loom_func *f, uint64_t seed, loom_interp_array **args) {
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_interp_alloc_args(f, NULL, args, &d) == LOOM_OK;
  loom_rng r;
  loom_rng_seed(&r, seed);
  for (int i = 0; ok && i < f->n_params; i++)
    if (args[i])
      loom_interp_fill_random(args[i], &r);
  ok = ok && loom_interp_run(f, args, NULL, &d) == LOOM_OK;
  if (!ok)
    fprintf(stderr, "interp: %s\n", d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return ok;
}

static bool same_outputs(const loom_func *a, const loom_func *b,
                         uint64_t seed) {
  loom_interp_array *x[8] = {0}, *y[8] = {0};
  bool ok = a->n_params <= 8 && run(a, seed, x) && run(b, seed, y);
  for (int i = 0; ok && i < a->n_params; i++) {
    char *why = NULL;
    if (x[i] && !loom_interp_compare(y[i], x[i], 1e-4, 1e-5, &why)) {
      fprintf(stderr, "output %d differs %s\n", i, why ? why : "");
      ok = false;
    }
    free(why);
  }
  loom_interp_free_args(a, x);
  loom_interp_free_args(b, y);
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
  ok = ok && loom_trace_apply(&back, r, true, &d) == LOOM_OK;
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

static bool is_built(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t i = 0; i < sizeof built / sizeof *built; i++)
    if (!strcmp(base, built[i]))
      return true;
  return false;
}

/* Compiles the candidates with the C backend, all in one file, and runs
 * them against the interpreter. */
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
                            .check = true};
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

static void check_program(const char *path, const loom_target *tg) {
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  bool ok = loom_read_file(path, &text, &len, &d) == LOOM_OK;
  ok = ok && loom_script_read(text, len, path, a, &m, &d) == LOOM_OK;
  CHECK(ok);
  if (!ok) {
    fprintf(stderr, "%s: %s\n", path, d.msg ? d.msg : "?");
    loom_diag_free(&d);
    loom_arena_free(a);
    return;
  }
  free(text);
  loom_trace *spaces;
  int n_spaces = 0;
  CHECK(loom_space_generate(m, tg, a, &spaces, &n_spaces, &d) == LOOM_OK);
  CHECK(n_spaces >= 1);
  const loom_func *f = m->funcs[0];
  bool interpret = work(f->body, 0) <= MAX_WORK;
  loom_sched *keep[SAMPLES];
  int n_keep = 0;
  for (int k = 0; k < n_spaces; k++) {
    loom_sched *cands[SAMPLES];
    const loom_func *funcs[SAMPLES];
    int n_ok = 0;
    for (int i = 0; i < SAMPLES; i++) {
      loom_sched *s = loom_sched_new(m, 1000 * (uint64_t)k + (uint64_t)i);
      loom_diag cd;
      loom_diag_init(&cd);
      loom_status st = loom_trace_apply(&spaces[k], s, false, &cd);
      CHECK(st == LOOM_OK);
      if (st == LOOM_OK)
        st = loom_space_postprocess(s, tg, &cd);
      n_candidates++;
      if (st != LOOM_OK) {
        n_dropped++;
        fprintf(stderr, "%s: space %d candidate %d dropped: %s\n", path, k,
                i, cd.msg ? cd.msg : "?");
        loom_sched_free(s);
      } else {
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
      if (i == 0 && n_keep < SAMPLES && is_built(path))
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

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  loom_target tg;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu -cores=2", &tg, &d) == LOOM_OK);
  loom_diag_free(&d);
  char path[1024];
  for (size_t i = 0; i < sizeof local / sizeof *local; i++) {
    snprintf(path, sizeof path, "%s/%s", root, local[i]);
    clock_t c0 = clock();
    check_program(path, &tg);
    if (getenv("LOOM_ORACLE_TIMES"))
      fprintf(stderr, "%s: %.2f s\n", path, (double)(clock() - c0) / CLOCKS_PER_SEC);
  }
  int n_corpus = 0;
  for (size_t i = 0; i < sizeof corpus / sizeof *corpus; i++) {
    snprintf(path, sizeof path, "%s/../shared/corpus/%s", root, corpus[i]);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    fclose(f);
    n_corpus++;
    clock_t c0 = clock();
    check_program(path, &tg);
    if (getenv("LOOM_ORACLE_TIMES"))
      fprintf(stderr, "%s: %.2f s\n", path, (double)(clock() - c0) / CLOCKS_PER_SEC);
  }
  CHECK(n_dropped == 0);
  CHECK(n_built > 0);
  printf("oracle: %d candidates, %d dropped, %d built; %d corpus programs\n",
         n_candidates, n_dropped, n_built, n_corpus);
  return test_summary("space oracle");
}
