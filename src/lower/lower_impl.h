/* The lowering passes, run in this order by loom_lower_func (lower.c). */
#ifndef LOOM_LOWER_IMPL_H
#define LOOM_LOWER_IMPL_H

#include "loom/arith.h"
#include "loom/lower.h"

/* ---- allocation placement and compaction (touch.c, place.c, compact.c) */

/* SURE_WRITE: the writes made whenever the statements run (none under an
 * IF, a block predicate or an init). */
enum { LOWER_TOUCH_READ = 1, LOWER_TOUCH_WRITE = 2, LOWER_TOUCH_ANY = 3,
       LOWER_TOUCH_SURE_WRITE = 4 };

/* What some statements do to one buffer, per dimension: the hull of the
 * indices they use (is_set: some access; is_whole: one that cannot be
 * bounded in the variables outside). is_escaped: its data pointer is used
 * otherwise than by loads and stores; is_carried: a block touching it has a
 * reduction or ordered iter var that depends on the carry variable. */
typedef struct lower_touch {
  loom_arith_intset *hull;
  bool *is_set, *is_whole;
  bool is_found, is_escaped, is_carried;
} lower_touch;

/* The accesses of kinds mask to b under the n statements, loops under them
 * relaxed, in arena a. Fails only when out of memory. */
loom_status lower_touch_eval(loom_arena *a, loom_arith_ctx *ctx,
                             const loom_stmt *const *stmts, int n,
                             const loom_buffer *b, int mask,
                             const loom_var *carry, lower_touch *out);

/* Moves each block's allocations down to the lowest loop or block holding
 * their uses, where that is safe; *body is replaced by the new tree. */
loom_status lower_place(loom_arena *a, loom_arith_ctx *ctx, loom_stmt **body);

/* A buffer shrunk to what its uses touch: compact has the new shape, and an
 * access at index i_k goes to i_k - mins[k]. */
typedef struct lower_compaction {
  const loom_buffer *buffer;
  loom_buffer *compact;
  loom_expr **mins;
} lower_compaction;

typedef struct lower_compactions {
  loom_ptrmap index; /* buffer -> position in items */
  lower_compaction *items;
  int n, cap;
} lower_compactions;

/* Finds the compaction of every allocation in body (zeroed *out first). */
loom_status lower_compact(loom_arena *a, loom_arith_ctx *ctx,
                          const loom_stmt *body, lower_compactions *out);
const lower_compaction *lower_compaction_of(const lower_compactions *C,
                                            const loom_buffer *b);
void lower_compactions_free(lower_compactions *C);
/* Declares the constant ranges of the loops and block iter vars of s. */
loom_status lower_bind_ranges(loom_arith_ctx *ctx, const loom_stmt *s,
                              int depth);

/* ---- the passes ------------------------------------------------------------ */

/* Removes blocks and flattens every buffer access of body, f's body or a
 * rewrite of it; buffers in C (may be NULL) get their compact layouts
 * (blocks.c). */
loom_status lower_blocks(loom_arena *a, const loom_func *f,
                         const loom_stmt *body, const lower_compactions *C,
                         loom_stmt **out, loom_diag *d);
/* Turns statements holding vector expressions into loops over lanes
 * (scalarize.c). */
loom_status lower_scalarize(loom_arena *a, loom_stmt *s, loom_stmt **out,
                            loom_diag *d);

/* Arithmetic that folds constants as it builds, so flat indices come out as
 * i * 1024 + j rather than 0 + i * 1024 + j * 1 (build.c). A scalar operand
 * meeting a vector one is broadcast. NULL when out of memory. */
loom_expr *lower_add(loom_arena *a, loom_expr *x, loom_expr *y);
loom_expr *lower_mul(loom_arena *a, loom_expr *x, loom_expr *y);
/* x converted to the integer dtype t (lanes kept). */
loom_expr *lower_to_index(loom_arena *a, loom_expr *x, loom_dtype t);
/* A statement of kind k at loc, or a LET / IF / SEQ ready made. */
loom_stmt *lower_let(loom_arena *a, loom_var *v, loom_expr *value,
                     loom_stmt *body);
loom_stmt *lower_if(loom_arena *a, loom_expr *cond, loom_stmt *then_case,
                    loom_loc loc);
loom_stmt *lower_seq2(loom_arena *a, loom_stmt *x, loom_stmt *y);

/* f with each cross-thread reduction (a reduction block whose reduce
 * bindings use a loop bound to threadIdx) rewritten for the GPU: partial
 * results in registers, combined across threads, written by one thread
 * (gpu_reduce.c). *out is f itself when it has none. Fails with d, at the
 * block, on one the rewrite does not cover. */
loom_status lower_gpu_reductions(loom_arena *a, const loom_func *f, loom_func **out,
                                 loom_diag *d);
/* Places __syncthreads() in kernel k's body (gpu_sync.c). */
loom_status lower_gpu_sync(loom_arena *a, loom_gpu_kernel *k, loom_diag *d);

#endif
