/* Costs of the host runtime the tuner pays per candidate: compiling a small
 * kernel, a run in a child process, the timer on a naive matmul (cold and
 * warm cache), and filling inputs compared with the interpreter's fill.
 * Build with `make bench`, run build/bench/bench_runtime. */
#include "loom/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static const char *matmul_src =
    "#include <stdint.h>\n"
    "int32_t mm(void **args) {\n"
    "  const float *A = args[0], *B = args[1];\n"
    "  float *C = args[2];\n"
    "  int64_t n = *(int64_t *)args[3];\n"
    "  for (int64_t i = 0; i < n; i++) {\n"
    "    for (int64_t j = 0; j < n; j++) C[i * n + j] = 0;\n"
    "    for (int64_t k = 0; k < n; k++)\n"
    "      for (int64_t j = 0; j < n; j++)\n"
    "        C[i * n + j] += A[i * n + k] * B[k * n + j];\n"
    "  }\n"
    "  return 0;\n"
    "}\n";

typedef struct call {
  int32_t (*k)(void **args);
  void **args;
} call;

static int run_call(void *ctx) {
  call *c = ctx;
  return c->k(c->args);
}

static int nothing(void *ctx) {
  (void)ctx;
  return 0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int fail(loom_diag *d) {
  fprintf(stderr, "error: %s\n", d->msg ? d->msg : "out of memory");
  for (int i = 0; i < d->n_notes; i++)
    fprintf(stderr, "note: %s\n", d->notes[i].msg);
  loom_diag_free(d);
  return 1;
}

int main(void) {
  loom_diag d;
  loom_diag_init(&d);
  /* Compile time, median of 5, at -O3 -march=native. */
  double ms[50];
  loom_runtime_lib *lib = NULL;
  for (int i = 0; i < 5; i++) {
    if (lib)
      loom_runtime_lib_free(lib);
    if (loom_runtime_compile(matmul_src, strlen(matmul_src), NULL, &lib, &ms[i], &d))
      return fail(&d);
  }
  qsort(ms, 5, sizeof *ms, cmp);
  printf("compile -O3 -march=native (matmul kernel): median %.1f ms\n", ms[2]);

  /* A child that does nothing: the fixed cost of isolation. */
  for (int i = 0; i < 50; i++) {
    loom_runtime_child_result r;
    if (loom_runtime_run_child(nothing, NULL, 10000, &r, &d))
      return fail(&d);
    ms[i] = r.ms;
  }
  qsort(ms, 50, sizeof *ms, cmp);
  printf("run_child (empty function): median %.3f ms, max %.3f ms\n", ms[25], ms[49]);

  int64_t n = 512, shape[2] = {n, n};
  loom_runtime_array *A = loom_runtime_array_new(LOOM_FLOAT32, shape, 2, 0);
  loom_runtime_array *B = loom_runtime_array_new(LOOM_FLOAT32, shape, 2, 0);
  loom_runtime_array *C = loom_runtime_array_new(LOOM_FLOAT32, shape, 2, 0);
  if (!A || !B || !C)
    return 1;
  double t0 = now_ms();
  loom_runtime_array_fill(A, 1);
  double fill_ms = now_ms() - t0;
  loom_interp_array *ref = loom_interp_array_new(LOOM_FLOAT32, shape, 2);
  loom_rng rng;
  loom_rng_seed(&rng, 1);
  t0 = now_ms();
  loom_interp_fill_random(ref, &rng);
  double interp_ms = now_ms() - t0;
  printf("fill float32 %lldx%lld: runtime %.2f ms, interpreter %.2f ms\n",
         (long long)n, (long long)n, fill_ms, interp_ms);
  loom_interp_array_free(ref);
  loom_runtime_array_fill(B, 2);

  void *args[4] = {A->data, B->data, C->data, &n};
  call c = {(int32_t (*)(void **))loom_runtime_lib_symbol(lib, "mm"), args};
  for (int flush = 0; flush <= 1; flush++) {
    loom_runtime_timer_config cfg = loom_runtime_timer_default();
    cfg.flush_cache = flush;
    loom_runtime_timing t;
    if (loom_runtime_time(run_call, &c, &cfg, &t, &d))
      return fail(&d);
    printf("matmul %lld^3 %s cache: median %.3f ms (%.2f GFLOP/s), "
           "stddev %.3f ms, number %d\n",
           (long long)n, flush ? "cold" : "warm", t.median_ms,
           2.0 * n * n * n / (t.median_ms * 1e6), t.stddev_ms, t.number);
  }
  printf("largest cache: %zu bytes\n", loom_runtime_cache_bytes());
  loom_runtime_array_free(A);
  loom_runtime_array_free(B);
  loom_runtime_array_free(C);
  loom_runtime_lib_free(lib);
  return 0;
}
