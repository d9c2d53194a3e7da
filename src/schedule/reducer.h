/* Commutative reducers: recognising the reduction a block performs (its
 * init stores and update stores, one or several buffers updated together)
 * as one of the known reducers, as rfactor needs. Private to src/schedule. */
#ifndef LOOM_SCHED_REDUCER_H
#define LOOM_SCHED_REDUCER_H

#include "schedule/sched_impl.h"

/* The most buffers one reduction updates together (argmax: two). */
#define SCHED_MAX_REDUCE_BUFFERS 4

/* A block's reduction: buffer i is initialised to identity[i] and updated
 * to combine(lhs[i], rhs[i]), where lhs[i] is the load of buffer i at the
 * common indices. Buffers are in the order of the updates. */
typedef struct sched_reduction {
  int reducer; /* index into the reducer table */
  int n;
  loom_buffer *buffers[SCHED_MAX_REDUCE_BUFFERS];
  loom_expr **indices; /* of the first update, shared by all */
  int n_indices;
  loom_expr *identity[SCHED_MAX_REDUCE_BUFFERS];
  loom_expr *lhs[SCHED_MAX_REDUCE_BUFFERS];
  loom_expr *rhs[SCHED_MAX_REDUCE_BUFFERS];
} sched_reduction;

/* Reads block b's init and body as a reduction and matches a reducer.
 * Returns NULL on success; otherwise the message, which names the block
 * and the condition it breaks, formatted into why (size n_why). */
const char *sched_match_reduction(const loom_block *b, sched_reduction *out,
                                  char *why, size_t n_why);

/* The combined values of reducer r for operands x and y (r's buffer count
 * of each), in out. False when out of memory. */
bool sched_reducer_combine(loom_arena *a, int r, loom_expr *const *x,
                           loom_expr *const *y, loom_expr **out);

#endif
