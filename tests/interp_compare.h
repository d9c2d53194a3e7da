/* The interpreter as the oracle of a test: run a function on random inputs
 * and compare what two functions leave in their parameters. */
#ifndef LOOM_TESTS_INTERP_COMPARE_H
#define LOOM_TESTS_INTERP_COMPARE_H

#include "loom/interp.h"

#include <stdio.h>
#include <stdlib.h>

/* Allocates f's parameters into args, fills them with random values drawn
 * from seed and runs f on them; says why on stderr when it cannot. The
 * caller frees args with loom_interp_free_args, whatever the result. */
static inline bool interp_run_random(const loom_func *f, uint64_t seed,
                                     loom_interp_array **args) {
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
    fprintf(stderr, "interp: %s (line %d)\n", d.msg ? d.msg : "?", d.loc.line);
  loom_diag_free(&d);
  return ok;
}

/* Whether f and g leave exactly the same values in every parameter on the
 * inputs of seeds 1..seeds (false too when either cannot run). With report,
 * the first parameter that differs is named on stderr. */
static inline bool interp_same_results(const loom_func *f, const loom_func *g,
                                       int seeds, bool report) {
  bool ok = true;
  for (uint64_t seed = 1; seed <= (uint64_t)seeds && ok; seed++) {
    loom_interp_array *x[8] = {0}, *y[8] = {0};
    ok = f->n_params <= 8 && interp_run_random(f, seed, x) &&
         interp_run_random(g, seed, y);
    for (int i = 0; ok && i < f->n_params; i++) {
      char *why = NULL;
      if (x[i] && !loom_interp_compare(y[i], x[i], 0, 0, &why)) {
        if (report)
          fprintf(stderr, "parameter %d differs %s\n", i, why ? why : "");
        ok = false;
      }
      free(why);
    }
    loom_interp_free_args(f, x);
    loom_interp_free_args(g, y);
  }
  return ok;
}

#endif
