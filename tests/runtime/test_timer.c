/* Timing: a compiled kernel that spins a known 2 ms gives times in a loose
 * band around it (a sanity check, never a speed test), the chosen number of
 * calls fills min_repeat_ms, the statistics are ordered, a failing call and
 * a bad configuration are errors, and the cache flush runs. */
#include "loom/runtime.h"
#include "rt_util.h"
#include "test.h"

#include <math.h>

/* spin(args): busy-waits *args[0] microseconds on CLOCK_MONOTONIC, counting
 * calls in *args[1]; returns *args[2]. */
static const char *spin_src =
    "#define _POSIX_C_SOURCE 200809L\n"
    "#include <stdint.h>\n"
    "#include <time.h>\n"
    "static double now_us(void) {\n"
    "  struct timespec ts;\n"
    "  clock_gettime(CLOCK_MONOTONIC, &ts);\n"
    "  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;\n"
    "}\n"
    "int32_t spin(void **args) {\n"
    "  int64_t us = *(int64_t *)args[0];\n"
    "  (*(int64_t *)args[1])++;\n"
    "  double end = now_us() + (double)us;\n"
    "  while (now_us() < end) {}\n"
    "  return (int32_t)*(int64_t *)args[2];\n"
    "}\n";

typedef struct spin_call {
  test_kernel kernel;
  int64_t us, calls, ret;
} spin_call;

static int run_spin(void *ctx) {
  spin_call *s = ctx;
  void *args[3] = {&s->us, &s->calls, &s->ret};
  return s->kernel(args);
}

static void check_ordered(const loom_runtime_timing *t) {
  CHECK(t->min_ms <= t->median_ms && t->median_ms <= t->max_ms);
  CHECK(t->min_ms <= t->mean_ms && t->mean_ms <= t->max_ms);
  CHECK(t->stddev_ms >= 0 && t->stddev_ms <= t->max_ms - t->min_ms + 1e-9);
}

static void test_spin(test_kernel k) {
  spin_call s = {k, 2000, 0, 0};
  loom_runtime_timer_config cfg = loom_runtime_timer_default();
  cfg.repeat = 5;
  cfg.number = 2;
  loom_runtime_timing t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_runtime_time(run_spin, &s, &cfg, &t, &d) == LOOM_OK);
  /* The spin ends by the clock, so only preemption on a busy machine can
   * stretch a measurement: the lower bound is firm, the upper bound is put
   * on the least disturbed measurement. */
  if (!(t.min_ms >= 1.0 && t.min_ms <= 40.0))
    fprintf(stderr, "2 ms spin: min %g ms, median %g ms\n", t.min_ms, t.median_ms);
  CHECK(t.min_ms >= 1.0 && t.min_ms <= 40.0);
  CHECK(t.repeat == 5 && t.number == 2);
  CHECK(s.calls == 1 + 5 * 2); /* warm-up, then repeat x number */
  check_ordered(&t);

  /* number 0: calls of 0.2 ms are batched to fill at least min_repeat_ms. */
  s = (spin_call){k, 200, 0, 0};
  cfg = loom_runtime_timer_default();
  cfg.min_repeat_ms = 5;
  cfg.repeat = 3;
  CHECK(loom_runtime_time(run_spin, &s, &cfg, &t, &d) == LOOM_OK);
  CHECK(t.number >= 2 && t.number <= 100);
  /* Preemption during calibration may stop the growth early, never late. */
  CHECK(t.median_ms * t.number >= 2.0);
  CHECK(t.min_ms >= 0.1 && t.min_ms <= 4.0);
  check_ordered(&t);

  /* A cold cache before each measurement. */
  cfg = (loom_runtime_timer_config){.warmup = 0, .repeat = 3, .number = 1,
                                    .flush_cache = true};
  s = (spin_call){k, 1000, 0, 0};
  CHECK(loom_runtime_time(run_spin, &s, &cfg, &t, &d) == LOOM_OK);
  CHECK(s.calls == 3 && t.min_ms >= 0.5 && t.min_ms <= 20.0);
  loom_diag_free(&d);
}

static void test_errors(test_kernel k) {
  spin_call s = {k, 0, 0, 5};
  loom_runtime_timing t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_runtime_time(run_spin, &s, NULL, &t, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "returned 5");
  CHECK(s.calls == 1); /* stopped at the first failing call */
  loom_diag_free(&d);

  loom_runtime_timer_config bad[] = {
      {.warmup = -1, .repeat = 1},
      {.warmup = 0, .repeat = 0},
      {.warmup = 0, .repeat = 1, .number = -2},
      {.warmup = 0, .repeat = 1, .min_repeat_ms = NAN},
      {.warmup = 0, .repeat = 1, .min_repeat_ms = -1},
  };
  s.ret = 0;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    loom_diag_init(&d);
    s.calls = 0;
    CHECK(loom_runtime_time(run_spin, &s, &bad[i], &t, &d) == LOOM_ERROR);
    CHECK(d.msg && strstr(d.msg, "timer") && s.calls == 0);
    loom_diag_free(&d);
  }
}

int main(void) {
  size_t llc = loom_runtime_cache_bytes();
  CHECK(llc >= 64 * 1024 && llc <= ((size_t)1 << 32));
  loom_runtime_lib *lib = compile_src(spin_src, false);
  CHECK(lib != NULL);
  test_kernel k =
      lib ? (test_kernel)loom_runtime_lib_symbol(lib, "spin") : NULL;
  CHECK(k != NULL);
  if (k) {
    test_spin(k);
    test_errors(k);
  }
  loom_runtime_lib_free(lib);
  return test_summary("runtime_timer");
}
