/* The builder and the runner on a batch of candidates for one workload:
 * good ones, one the C backend refuses, one that crashes, one that hangs
 * and one that computes the wrong thing. Every failure is that candidate's
 * alone, with its reason; the good ones are measured and checked. */
#include "loom/script.h"
#include "loom/tune.h"
#include "test.h"

#include <stdlib.h>

#define N_GOOD 12

static const char *workload =
    "@T.prim_func\n"
    "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
    "    for i in range(64):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(64, i)\n"
    "            B[vi] = A[vi] * T.float32(2.0) + T.float32(1.0)\n";

/* Implementations of the workload: split loops of every factor. */
static void good_candidate(loom_buf *b, int k) {
  int f = 1 << (k % 7), outer = 64 / f;
  loom_buf_printf(b,
      "@T.prim_func\n"
      "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
      "    for io in range(%d):\n"
      "        for ii in %s(%d):\n"
      "            with T.block(\"B\"):\n"
      "                vi = T.axis.spatial(64, io * %d + ii)\n"
      "                B[vi] = A[vi] * T.float32(2.0) + T.float32(1.0)\n",
      outer, k % 2 ? "T.vectorized" : "range", f, f);
}

static const char *bad[] = {
    /* refused by the C backend */
    "@T.prim_func\n"
    "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
    "    T.evaluate(T.call_extern(\"void\", \"nowhere\", 1))\n",
    /* crashes */
    "@T.prim_func\n"
    "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
    "    for i in range(64):\n"
    "        B[T.int64(1099511627776) * T.Cast(\"int64\", i + 1)] = A[i]\n",
    /* hangs */
    "@T.prim_func\n"
    "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
    "    for i in range(T.int64(4611686018427387904)):\n"
    "        B[0] = B[0] * T.float32(0.5) + A[0]\n",
    /* wrong */
    "@T.prim_func\n"
    "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
    "    for i in range(64):\n"
    "        B[i] = A[i] * T.float32(2.0) + T.float32(1.5)\n",
};
#define N_BAD 4

static const loom_func *read_func(loom_arena *a, const char *text) {
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_script_read(text, strlen(text), "t.py", a, &m, &d);
  if (st != LOOM_OK)
    fprintf(stderr, "read: %s\n", d.msg);
  loom_diag_free(&d);
  return st == LOOM_OK ? m->funcs[0] : NULL;
}

int main(void) {
  loom_arena *a = loom_arena_new();
  const loom_func *w = read_func(a, workload);
  const loom_func *cands[N_GOOD + N_BAD];
  for (int k = 0; k < N_GOOD; k++) {
    loom_buf b;
    loom_buf_init(&b);
    good_candidate(&b, k);
    cands[k] = read_func(a, b.data);
    loom_buf_free(&b);
  }
  for (int k = 0; k < N_BAD; k++)
    cands[N_GOOD + k] = read_func(a, bad[k]);
  int n = N_GOOD + N_BAD;
  for (int k = 0; k < n; k++)
    CHECK(cands[k] != NULL);

  loom_builder_options bo = {.per_file = 5, .jobs = 2, .cflags = "-O1"};
  loom_build_set b;
  CHECK(loom_tune_build(cands, n, &bo, &b) == LOOM_OK);
  CHECK(b.n == n);
  CHECK(b.n_libs == 3); /* 15 printable candidates, 5 per file */
  for (int k = 0; k < n; k++)
    CHECK((b.items[k].kernel != NULL) == (k != N_GOOD));
  CHECK_CONTAINS(b.items[N_GOOD].error, "cannot call extern function nowhere");

  /* The build and the postprocessors' check are the target's backend's:
   * the C backend for a cpu, which refuses what its code generator cannot
   * print, as the build did. */
  const loom_backend *be = loom_tune_backend(NULL);
  CHECK(be && !strcmp(be->name, "c") && be->target == LOOM_TARGET_CPU);
  CHECK(b.backend == be);
  loom_target cpu;
  loom_target_detect(&cpu);
  CHECK(loom_tune_backend(&cpu) == be);
  loom_module one = {.funcs = (loom_func **)&cands[N_GOOD], .n_funcs = 1};
  loom_diag cd;
  loom_diag_init(&cd);
  CHECK(be->check(&cpu, &one, &cd) == LOOM_ERROR);
  CHECK_CONTAINS(cd.msg, "cannot call extern function nowhere");
  loom_diag_free(&cd);
  loom_diag_init(&cd);
  one.funcs = (loom_func **)&cands[0];
  CHECK(be->check(&cpu, &one, &cd) == LOOM_OK);
  loom_diag_free(&cd);

  /* The same build in the background, the compiler niced, gives the same
   * kernels and errors. */
  loom_tune_build_job *job;
  loom_build_set bg;
  loom_builder_options nbo = bo;
  nbo.nice = 5;
  CHECK(loom_tune_build_start(cands, n, &nbo, &job) == LOOM_OK);
  CHECK(loom_tune_build_wait(job, &bg) == LOOM_OK);
  CHECK(bg.n == n && bg.n_libs == 3);
  for (int k = 0; k < n; k++)
    CHECK((bg.items[k].kernel != NULL) == (k != N_GOOD));
  CHECK_CONTAINS(bg.items[N_GOOD].error, "cannot call extern function nowhere");
  loom_tune_build_free(&bg);

  loom_kernel kernels[N_GOOD + N_BAD];
  for (int k = 0; k < n; k++)
    kernels[k] = b.items[k].kernel;
  loom_runner_options ro = {.repeat = 2, .timeout_ms = 500, .seed = 3, .check = true};
  loom_measured m[N_GOOD + N_BAD];
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_tune_run(w, kernels, n, &ro, m, &d) == LOOM_OK);
  for (int k = 0; k < N_GOOD; k++) {
    if (m[k].error)
      fprintf(stderr, "candidate %d: %s\n", k, m[k].error);
    CHECK(m[k].error == NULL && m[k].timing.repeat == 2 && m[k].timing.median_ms > 0);
  }
  CHECK_STREQ(m[N_GOOD].error, "not built");
  CHECK_CONTAINS(m[N_GOOD + 1].error, "killed by signal 11 (SIGSEGV)");
  CHECK_CONTAINS(m[N_GOOD + 2].error, "timed out after 500 ms");
  CHECK_CONTAINS(m[N_GOOD + 3].error, "wrong result: B differs from the interpreter");
  loom_tune_measured_free(m, n);

  /* The stop rule: with a best of 2 ms, a first call still running at 3x
   * (6 ms) is stopped and measured by the time it ran, unchecked; a fast
   * candidate is measured as usual; without the rule the same kernel runs
   * into the time limit. */
  loom_kernel pair[2] = {kernels[N_GOOD + 2], kernels[0]};
  ro.best_ms = 2;
  CHECK(loom_tune_run(w, pair, 2, &ro, m, &d) == LOOM_OK);
  CHECK(m[0].error == NULL && m[0].is_stopped);
  CHECK(m[0].timing.median_ms >= 6 && m[0].timing.median_ms < 400 && m[0].timing.number == 1);
  CHECK(m[1].error == NULL && !m[1].is_stopped && m[1].timing.repeat == 2);
  loom_tune_measured_free(m, 2);
  ro.no_stop = true;
  CHECK(loom_tune_run(w, pair, 1, &ro, m, &d) == LOOM_OK);
  CHECK_CONTAINS(m[0].error, "timed out after 500 ms");
  loom_tune_measured_free(m, 1);

  /* Every first call counts as long here: it is the measurement, unless
   * the candidate is within 1.2x of the best, when it is timed as usual. */
  ro = (loom_runner_options){.repeat = 2, .timeout_ms = 500, .seed = 3,
                             .long_call_ms = 1e-9, .best_ms = 1e-6};
  CHECK(loom_tune_run(w, kernels, 1, &ro, m, &d) == LOOM_OK);
  CHECK(m[0].error == NULL && m[0].timing.repeat == 1 && m[0].timing.number == 1);
  loom_tune_measured_free(m, 1);
  ro.best_ms = 1e6;
  CHECK(loom_tune_run(w, kernels, 1, &ro, m, &d) == LOOM_OK);
  CHECK(m[0].error == NULL && m[0].timing.repeat == 2);
  loom_tune_measured_free(m, 1);
  loom_tune_build_free(&b);

  /* A compiler that rejects every file: each candidate is retried alone and
   * fails with the compiler's message. */
  loom_builder_options broken = {.per_file = 8, .jobs = 2, .cflags = "-O1 -fno-such-flag-anywhere"};
  CHECK(loom_tune_build(cands, 3, &broken, &b) == LOOM_OK);
  for (int k = 0; k < 3; k++) {
    CHECK(b.items[k].kernel == NULL);
    CHECK_CONTAINS(b.items[k].error, "C compiler");
  }
  loom_tune_build_free(&b);

  /* The thread count: the runner sets it through loom_set_num_threads of
   * the kernel's own library, in tuning as in `loom run`, without being
   * handed the setter. This kernel fails unless it was set to 3. */
  static const char *threads_src =
      "#include <stdint.h>\n"
      "static int n_threads;\n"
      "void loom_set_num_threads(int n) { n_threads = n; }\n"
      "int32_t kern(void *const *args, const int64_t *const *shapes) {\n"
      "  (void)args, (void)shapes;\n"
      "  return n_threads == 3 ? 0 : 7;\n"
      "}\n";
  loom_runtime_lib *lib;
  CHECK(loom_runtime_compile(threads_src, strlen(threads_src), NULL, &lib, NULL, &d) == LOOM_OK);
  loom_kernel k3 = lib ? loom_runtime_lib_symbol(lib, "kern") : NULL;
  CHECK(k3 != NULL);
  loom_runner_options to = {.repeat = 1, .timeout_ms = 5000, .threads = 3};
  CHECK(loom_tune_run(w, &k3, 1, &to, m, &d) == LOOM_OK);
  CHECK(m[0].error == NULL);
  loom_tune_measured_free(m, 1);
  to.threads = 2;
  CHECK(loom_tune_run(w, &k3, 1, &to, m, &d) == LOOM_OK);
  CHECK_CONTAINS(m[0].error, "7");
  loom_tune_measured_free(m, 1);
  loom_runtime_lib_free(lib);

  /* OpenMP's threads are started before the first call, through
   * loom_warm_threads of the kernel's library: this kernel fails unless it
   * was called first (the C backend's warms up OpenMP's threads). */
  static const char *warm_src =
      "#include <stdint.h>\n"
      "static int is_warm;\n"
      "void loom_warm_threads(void) { is_warm = 1; }\n"
      "int32_t kern(void *const *args, const int64_t *const *shapes) {\n"
      "  (void)args, (void)shapes;\n"
      "  return is_warm ? 0 : 7;\n"
      "}\n";
  CHECK(loom_runtime_compile(warm_src, strlen(warm_src), NULL, &lib, NULL, &d) == LOOM_OK);
  loom_kernel kw = lib ? loom_runtime_lib_symbol(lib, "kern") : NULL;
  CHECK(kw != NULL);
  loom_runner_options wo = {.repeat = 1, .timeout_ms = 5000};
  CHECK(loom_tune_run(w, &kw, 1, &wo, m, &d) == LOOM_OK);
  CHECK(m[0].error == NULL);
  loom_tune_measured_free(m, 1);
  loom_runtime_lib_free(lib);

  /* Outputs of small values are held to their own scale: 5% off on values
   * near 1e-3 (a softmax's) is a wrong result, which an absolute tolerance
   * of 1e-4 let through. */
  const char *small =
      "@T.prim_func\n"
      "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
      "    for i in range(64):\n"
      "        with T.block(\"B\"):\n"
      "            vi = T.axis.spatial(64, i)\n"
      "            B[vi] = A[vi] * T.float32(%s)\n";
  char text[2][512];
  snprintf(text[0], sizeof text[0], small, "0.001");
  snprintf(text[1], sizeof text[1], small, "0.00105");
  const loom_func *scaled[2] = {read_func(a, text[0]), read_func(a, text[1])};
  CHECK(scaled[0] && scaled[1]);
  CHECK(loom_tune_build(scaled, 2, &bo, &b) == LOOM_OK);
  loom_kernel ks[2] = {b.items[0].kernel, b.items[1].kernel};
  loom_runner_options so = {.repeat = 1, .timeout_ms = 5000, .check = true, .seed = 2};
  CHECK(loom_tune_run(scaled[0], ks, 2, &so, m, &d) == LOOM_OK);
  CHECK(m[0].error == NULL);
  CHECK_CONTAINS(m[1].error, "wrong result: B differs from the interpreter");
  loom_tune_measured_free(m, 2);
  loom_tune_build_free(&b);
  loom_diag_free(&d);
  loom_arena_free(a);
  return test_summary("tune");
}
