/* The interpreter as the oracle of a test: run a function on random inputs
 * and compare what two functions leave in their parameters. */
#ifndef LOOM_TESTS_INTERP_COMPARE_H
#define LOOM_TESTS_INTERP_COMPARE_H

#include "loom/codegen.h"
#include "loom/interp.h"
#include "loom/runtime.h"
#include "loom/tune.h"

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

/* Whether f and g leave the same values in every parameter on the inputs of
 * seeds 1..seeds (false too when either cannot run): exactly, or with
 * is_close floats within their dtype's tolerance (loom_tune_tolerance; for
 * schedules that add in another order, a reduction split across threads).
 * With report, the first parameter that differs is named on stderr. */
static inline bool interp_compare_results(const loom_func *f, const loom_func *g,
                                          int seeds, bool is_close, bool report) {
  bool ok = true;
  for (uint64_t seed = 1; seed <= (uint64_t)seeds && ok; seed++) {
    loom_interp_array *x[8] = {0}, *y[8] = {0};
    ok = f->n_params <= 8 && interp_run_random(f, seed, x) &&
         interp_run_random(g, seed, y);
    for (int i = 0; ok && i < f->n_params; i++) {
      char *why = NULL;
      double tol = x[i] && is_close ? loom_tune_tolerance(x[i]->dtype) : 0;
      if (x[i] && !loom_interp_compare(y[i], x[i], tol, tol, &why)) {
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

static inline bool interp_same_results(const loom_func *f, const loom_func *g,
                                       int seeds, bool report) {
  return interp_compare_results(f, g, seeds, false, report);
}

/* Compiles m with the C backend and runs its main on inputs drawn from seed
 * (the interpreter's, byte for byte); the output arrays go into out. */
static inline bool interp_run_compiled(const loom_module *m, uint64_t seed,
                                       loom_runtime_array **out) {
  const loom_func *f = m->funcs[0];
  loom_buf src;
  loom_buf_init(&src);
  loom_diag d;
  loom_diag_init(&d);
  loom_runtime_lib *lib = NULL;
  bool ok = loom_codegen_c_module(m, &src, &d) == LOOM_OK &&
            loom_runtime_compile(src.data, src.len, NULL, &lib, NULL, &d) ==
                LOOM_OK;
  if (!ok)
    fprintf(stderr, "C backend: %s\n", d.msg ? d.msg : "?");
  int32_t (*fn)(void *const *, const int64_t *const *) =
      ok ? (int32_t(*)(void *const *, const int64_t *const *))
               loom_runtime_lib_symbol(lib, "loom_main")
         : NULL;
  void *args[8];
  const int64_t *shapes[8];
  loom_rng r;
  loom_rng_seed(&r, seed);
  for (int i = 0; ok && i < f->n_params && i < 8; i++) {
    const loom_buffer *b = f->params[i].buffer;
    int64_t shape[8];
    for (int k = 0; k < b->ndim && k < 8; k++)
      loom_ir_is_const_int(b->shape[k], &shape[k]);
    out[i] = loom_runtime_array_new(b->dtype, shape, b->ndim, 0);
    if (!out[i]) {
      ok = false;
      break;
    }
    loom_interp_array v = loom_runtime_array_view(out[i]);
    loom_interp_fill_random(&v, &r);
    args[i] = out[i]->data;
    shapes[i] = out[i]->shape;
  }
  ok = ok && fn && fn(args, shapes) == 0;
  loom_runtime_lib_free(lib);
  loom_diag_free(&d);
  loom_buf_free(&src);
  return ok;
}

#endif
