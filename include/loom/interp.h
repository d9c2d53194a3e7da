/* The reference interpreter: runs a prim func as written, before or after
 * scheduling, on host arrays. It is the oracle every transformation is checked
 * against, so it is exact before it is fast: every access is bounds-checked
 * and every value is rounded to its dtype after every op. Speed comes from
 * compiling the function once per run (variables to slots, one-lane values
 * of a known type on a scalar path), never from changing what it computes. */
#ifndef LOOM_INTERP_H
#define LOOM_INTERP_H

#include "loom/ir.h"

/* Vector values (T.Ramp, T.Broadcast, float32x8) have at most this many lanes. */
#define LOOM_INTERP_MAX_LANES 64

/* A dense row-major host array. Elements take the dtype's width in bytes
 * (bool is one uint8, float16 and bfloat16 are their raw 16 bits). The array
 * owns shape and data; free it with loom_interp_array_free. */
typedef struct loom_interp_array {
  loom_dtype dtype; /* lanes == 1 */
  int ndim;
  int64_t *shape;
  int64_t n_elems;
  void *data;
} loom_interp_array;

/* A zero-filled array; NULL when out of memory or when the shape is negative
 * or too large. */
LOOM_API LOOM_GIVE loom_interp_array *
loom_interp_array_new(loom_dtype t, const int64_t *shape, int ndim);
LOOM_API void loom_interp_array_free(LOOM_TAKE loom_interp_array *a);

/* Element i (row-major) as a double (ints are converted; exact up to 2^53). */
LOOM_API double loom_interp_array_get(const loom_interp_array *a, int64_t i);
/* Stores v into element i, converted and rounded as a T.Cast would. */
LOOM_API void loom_interp_array_set(loom_interp_array *a, int64_t i, double v);

/* Fills with deterministic data for the dtype: floats uniform in [-1, 1)
 * rounded to the dtype, signed ints in [-8, 8), unsigned in [0, 16), bool 0/1. */
LOOM_API void loom_interp_fill_random(loom_interp_array *a, loom_rng *r);

/* Makes one array per parameter of f (NULL for scalar parameters), zeroed.
 * A symbolic dimension takes its value from the scalar parameter that is the
 * same variable, read from scalar_args[param index] (scalar_args may be NULL
 * when f has no scalar parameters). arrays has f->n_params entries; on
 * failure every entry is NULL. */
LOOM_API loom_status
loom_interp_alloc_args(const loom_func *f, const int64_t *scalar_args,
                       LOOM_GIVE loom_interp_array **arrays, loom_diag *d);
/* Frees what loom_interp_alloc_args made. */
LOOM_API void loom_interp_free_args(const loom_func *f,
                                    loom_interp_array **arrays);

/* Runs f. args[i] is the array of buffer parameter i (its shape must match
 * the buffer's); scalar parameter i takes scalar_args[i]. Runtime errors
 * (out-of-bounds access, integer division by zero, a failed assert, an
 * extern call) stop the run with d located at the statement; the arrays then
 * hold whatever was written so far. */
LOOM_API loom_status loom_interp_run(const loom_func *f,
                                     loom_interp_array **args,
                                     const int64_t *scalar_args, loom_diag *d);

/* True when a and b have the same dtype, shape and elements: ints and bools
 * exactly, floats when |a-b| <= atol + rtol*|b| (NaN equals NaN). Otherwise,
 * when first_mismatch is not NULL, it gets a heap description of the first
 * difference with its indices ("at [1, 2]: 0.5 vs 0.25"); free() it. */
LOOM_API bool loom_interp_compare(const loom_interp_array *a,
                                  const loom_interp_array *b, double rtol,
                                  double atol, LOOM_GIVE char **first_mismatch);

/* Appends the elements as nested lists, one bracket level per dimension, in
 * full precision ("[[1, 2], [3, 4]]"), eliding with "..." after max_elems. */
LOOM_API void loom_interp_array_print(const loom_interp_array *a,
                                      int64_t max_elems, loom_buf *out);

/* Rounds x to the nearest float16 / bfloat16 (round to nearest, ties to even;
 * overflow gives inf) and returns the raw bits, or decodes raw bits. */
LOOM_API uint16_t loom_interp_f16_bits(double x);
LOOM_API double loom_interp_f16_value(uint16_t bits);
LOOM_API uint16_t loom_interp_bf16_bits(double x);
LOOM_API double loom_interp_bf16_value(uint16_t bits);

#endif
