/* Tuning throughput: candidates measured per second on a 512^3 matmul over a
 * hand-written space of tile sizes, with the time split between proposing
 * (schedule replay), building (C backend and compiler; the time waited for
 * it, and its own time, overlapped with measuring when pipelined) and
 * running (child processes, timing). Run with `make bench`;
 * `bench_tune --pipeline` builds the next batch while one is measured. */
#include "loom/script.h"
#include "loom/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N 512
#define TRIALS 64

static const char *space =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "v4, v5, v6 = sch.sample_perfect_tile(loop=l1, n=3, max_innermost_factor=16)\n"
    "l7, l8, l9 = sch.split(loop=l1, factors=[v4, v5, v6])\n"
    "v10, v11, v12 = sch.sample_perfect_tile(loop=l2, n=3, max_innermost_factor=32)\n"
    "l13, l14, l15 = sch.split(loop=l2, factors=[v10, v11, v12])\n"
    "v16, v17 = sch.sample_perfect_tile(loop=l3, n=2, max_innermost_factor=16)\n"
    "l18, l19 = sch.split(loop=l3, factors=[v16, v17])\n"
    "sch.reorder(l7, l13, l8, l14, l18, l9, l19, l15)\n"
    "sch.parallel(loop=l7)\n"
    "sch.vectorize(loop=l15)\n";

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  bool pipeline = argc > 1 && !strcmp(argv[1], "--pipeline");
  char text[2048];
  snprintf(text, sizeof text,
           "@T.prim_func\n"
           "def mm(A: T.Buffer((%d, %d), \"float32\"), B: T.Buffer((%d, %d), \"float32\"), C: T.Buffer((%d, %d), \"float32\")):\n"
           "    T.func_attr({\"tir.noalias\": True})\n"
           "    for i, j, k in T.grid(%d, %d, %d):\n"
           "        with T.block(\"C\"):\n"
           "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
           "            with T.init():\n"
           "                C[vi, vj] = T.float32(0.0)\n"
           "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
           N, N, N, N, N, N, N, N, N);
  loom_arena *a = loom_arena_new();
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  loom_task *tasks;
  int n;
  if (loom_script_read(text, strlen(text), "mm.py", a, &m, &d) != LOOM_OK ||
      loom_tune_extract_tasks(a, m, &tasks, &n) != LOOM_OK) {
    fprintf(stderr, "bench_tune: %s\n", d.msg ? d.msg : "out of memory");
    return 1;
  }
  /* The interpreter's check of a 512^3 matmul would dominate; the runner
   * tests check results, this measures the engine. Twice: ranked at random,
   * then by the XGBoost model (features of every member of each
   * generation). */
  for (int with_model = 0; with_model < 2; with_model++) {
    loom_model *model = NULL;
    if (with_model && loom_model_xgb_new(&(loom_model_options){.seed = 1}, &model, &d) != LOOM_OK) {
      fprintf(stderr, "bench_tune: %s\n", d.msg ? d.msg : "out of memory");
      return 1;
    }
    loom_tune_options o = {.strategy = LOOM_SEARCH_EVOLUTIONARY, .trials = TRIALS,
                           .batch = 16, .seed = 1, .model = model,
                           .pipeline = pipeline};
    o.runner.repeat = 3;
    o.runner.timeout_ms = 20000;
    loom_tune_result r;
    double t0 = now_s();
    if (loom_tune_task(&tasks[0], space, strlen(space), "space.py", NULL, &o, &r, &d) != LOOM_OK) {
      fprintf(stderr, "bench_tune: %s\n", d.msg ? d.msg : "out of memory");
      return 1;
    }
    double total = now_s() - t0;
    printf("tune %dx%dx%d (%s%s), %d trials on %ld cores: %.1f s, %.2f candidates/s\n", N, N,
           N, model ? "xgboost ranks" : "random ranks", pipeline ? ", pipelined" : "",
           r.trials, sysconf(_SC_NPROCESSORS_ONLN),
           total, r.trials / total);
    printf("  propose %.1f s, build %.1f s waited (%.1f s in all), run %.1f s (incl. the "
           "baseline, about %.1f s)\n",
           r.propose_s, r.build_s, r.build_wall_s, r.run_s, r.baseline_ms / 1e3);
    printf("  without the baseline: %.2f candidates/s; %d stopped in their first call\n",
           r.trials / (total - r.baseline_ms / 1e3), r.stopped);
    printf("  best %.3f ms (%.1f GFLOP/s), unscheduled %.3f ms, %d failures, %d rejected\n",
           r.best_ms, 2.0 * N * N * N / (r.best_ms * 1e6), r.baseline_ms, r.failures, r.rejected);
    loom_tune_result_free(&r);
    loom_model_free(model);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
  return 0;
}
