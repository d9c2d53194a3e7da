/* The finalists of a search, measured again. A search keeps whichever
 * candidate measured fastest once, and among hundreds of candidates within
 * a few per cent of each other the fastest single measurement is often a
 * lucky one (the winner's curse): a kernel 1% slower, or the untouched
 * function itself, can take the place of a better one. Measuring the few
 * that could be best again, in turns, and ranking by the mean of every
 * measurement keeps luck from naming the best. A finalist that fails any of
 * it is out: a kernel with a race may be right once and wrong later. */
#include "tune/tune_impl.h"

#include <stdlib.h>

/* Marks f out, with why. */
static loom_status disqualify(tune_finalist *f, const char *what,
                              const char *why) {
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_printf(&b, "disqualified: its %s again failed: %s", what,
                  why ? why : "no reason given");
  if (b.has_failed) {
    loom_buf_free(&b);
    return LOOM_NOMEM;
  }
  f->error = loom_buf_take(&b);
  return LOOM_OK;
}

loom_status tune_remeasure(loom_tune_runner *runner, const loom_builder_options *bo,
                           loom_db *db, int64_t workload, const char *target,
                           tune_finalist *f, int n, int rounds, loom_diag *d) {
  if (n <= 0 || rounds <= 0)
    return LOOM_OK;
  const loom_func **funcs = calloc((size_t)n, sizeof *funcs);
  double *got = calloc((size_t)(n * rounds), sizeof *got);
  int *n_got = calloc((size_t)n, sizeof *n_got);
  if (!funcs || !got || !n_got) {
    free(funcs);
    free(got);
    free(n_got);
    return LOOM_NOMEM;
  }
  for (int i = 0; i < n; i++)
    funcs[i] = f[i].func;
  loom_build_set b;
  loom_status st = loom_tune_build(funcs, n, bo, &b);
  /* No stop: every finalist runs to its end. */
  loom_tune_runner_set_best(runner, 0);
  for (int i = 0; i < n && st == LOOM_OK; i++)
    if (!b.items[i].kernel)
      st = disqualify(&f[i], "build", b.items[i].error);
  for (int r = 0; r < rounds && st == LOOM_OK; r++)
    for (int i = 0; i < n && st == LOOM_OK; i++) {
      if (f[i].error)
        continue;
      loom_measured m;
      st = loom_tune_runner_run(runner, &b.items[i].kernel, 1, &m, d);
      if (st == LOOM_OK && m.error)
        st = disqualify(&f[i], "measurement", m.error);
      else if (st == LOOM_OK && m.timing.median_ms > 0)
        got[i * rounds + n_got[i]++] = m.timing.median_ms;
      loom_tune_measured_free(&m, 1);
    }
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    if (f[i].error) {
      if (db && f[i].trace)
        st = loom_db_disqualify(db, workload, target, f[i].trace, f[i].error, d);
      continue;
    }
    if (n_got[i] == 0)
      continue;
    double sum = f[i].ms;
    for (int k = 0; k < n_got[i]; k++)
      sum += got[i * rounds + k];
    f[i].ms = sum / (1 + n_got[i]);
    if (db)
      st = loom_db_add_latencies(db, workload, target, f[i].trace, &got[i * rounds],
                                 n_got[i], d);
  }
  loom_tune_build_free(&b);
  free(funcs);
  free(got);
  free(n_got);
  return st;
}
