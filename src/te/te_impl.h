/* Private structures of the TE module: the builder context, tensors and
 * the reductions a compute body may end in. */
#ifndef LOOM_TE_IMPL_H
#define LOOM_TE_IMPL_H

#include "loom/te.h"

#include <stdbool.h>

/* Limits of a compute definition, reported as errors when exceeded. */
#define TE_MAX_RANK 16
#define TE_MAX_TENSORS 256
#define TE_MAX_REDUCES 256
#define TE_MAX_AXES 1024

typedef struct te_reduce {
  loom_expr *marker; /* what loom_te_reduce returned */
  loom_te_reducer reducer;
  loom_expr *src;
  loom_var **axes;
  int n_axes;
  loom_expr *where; /* NULL: always */
} te_reduce;

struct loom_te_tensor {
  loom_buffer *buffer;
  bool is_compute;
  loom_var **axes;           /* one per dimension (compute only) */
  loom_expr *body;           /* plain body, or NULL when reduce is set */
  const te_reduce *reduce;
  loom_attr *attrs;
  int n_attrs;
};

struct loom_te {
  loom_arena *arena;
  const char *error;
  loom_te_tensor *tensors[TE_MAX_TENSORS];
  int n_tensors;
  te_reduce reduces[TE_MAX_REDUCES];
  int n_reduces;
  struct { loom_var *var; loom_expr *extent; } axes[TE_MAX_AXES];
  int n_axes;
};

/* Records the first error; returns NULL for `return te_fail(...)`. */
void *te_fail(loom_te *te, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const te_reduce *te_find_reduce(const loom_te *te, const loom_expr *e);
/* The extent of a reduce axis; NULL when v is not one. */
loom_expr *te_axis_extent(const loom_te *te, const loom_var *v);
loom_te_tensor *te_find_tensor(const loom_te *te, const loom_buffer *b);

#endif
