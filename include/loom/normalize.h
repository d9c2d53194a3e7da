/* Normalization (K0): IRModule -> IRModule rewrites that put hand-written
 * TensorIR into the form the schedule primitives reason about, without
 * changing what it computes. Loops are made to start at 0, statements
 * written outside any block are wrapped in blocks, blocks that use loop
 * variables directly get iter vars (their kinds decided by the dependence
 * analysis), and every block's read and write regions are inferred again.
 * Each pass is available alone; loom_normalize_module runs them all, in
 * table order. */
#ifndef LOOM_NORMALIZE_H
#define LOOM_NORMALIZE_H

#include "loom/ir.h"

/* The passes, in the order loom_normalize_module runs them. */
typedef enum {
  LOOM_NORMALIZE_WRAP_ROOT,  /* "wrap-root": statements outside blocks */
  LOOM_NORMALIZE_LOOP_ZERO,  /* "loop-zero": loops start at 0 */
  LOOM_NORMALIZE_ITER_VARS,  /* "iter-vars": blocks get iter vars */
  LOOM_NORMALIZE_REGIONS,    /* "regions": reads and writes inferred again */
  LOOM_NORMALIZE_COUNT_
} loom_normalize_pass;

/* The pass's name on the command line ("loop-zero") and a one-line summary. */
LOOM_API const char *loom_normalize_pass_name(loom_normalize_pass p);
LOOM_API const char *loom_normalize_pass_summary(loom_normalize_pass p);
/* Finds a pass by name; -1 when there is none. */
LOOM_API int loom_normalize_pass_lookup(const char *name);

/* Runs one pass over every function of m (borrowed). *out is new in arena
 * a and shares m's unchanged subtrees (m itself when nothing changed). The
 * result is checked with loom_ir_verify_module; a failure there, or in the
 * dependence analysis, fills d. */
LOOM_API loom_status loom_normalize_run(loom_arena *a, const loom_module *m,
                                        loom_normalize_pass p,
                                        loom_module **out, loom_diag *d);
/* Runs every pass, in order. */
LOOM_API loom_status loom_normalize_module(loom_arena *a, const loom_module *m,
                                           loom_module **out, loom_diag *d);
/* Runs every pass on one function; *out is f itself when nothing changed. */
LOOM_API loom_status loom_normalize_func(loom_arena *a, const loom_func *f,
                                         const loom_func **out, loom_diag *d);

#endif
