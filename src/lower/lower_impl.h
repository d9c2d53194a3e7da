/* The lowering passes, run in this order by loom_lower_func (lower.c). */
#ifndef LOOM_LOWER_IMPL_H
#define LOOM_LOWER_IMPL_H

#include "loom/lower.h"

/* Removes blocks and flattens every buffer access (blocks.c). */
loom_status lower_blocks(loom_arena *a, const loom_func *f, loom_stmt **body,
                         loom_diag *d);
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

#endif
