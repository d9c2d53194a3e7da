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
  /* A tuple reduction (loom_te_comm_reduce): comm->n sources in srcs and a
   * combiner over the copied lhs / rhs variables; src is srcs[0]. NULL for
   * the built-in reducers. */
  loom_te_comm_reducer *comm;
  loom_expr **srcs;
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
  /* The stage's outputs; every output points at the same array, and the
   * first output stands for the stage (attributes, loops, the block). */
  loom_te_tensor **outputs;
  int n_outputs;
  const char *op_name; /* the stage's name, which names its block */
  loom_te_tensor **layout_free; /* placeholders free to re-layout */
  int n_layout_free;
};

struct loom_te {
  loom_arena *arena;
  const char *error;
  loom_te_tensor *tensors[TE_MAX_TENSORS];
  int n_tensors;
  te_reduce reduces[TE_MAX_REDUCES];
  int n_reduces;
  struct { loom_var *var; loom_expr *min, *extent; } axes[TE_MAX_AXES];
  int n_axes;
  /* Set while a library operator runs inside a TE script (loom_te_op_apply):
   * the builder's inputs are these tensors, taken in order, and its output
   * is handed back in `applied` instead of becoming a function. */
  loom_te_tensor *const *given;
  int n_given, next_given;
  loom_te_tensor *applied;
};

/* Records the first error; returns NULL for `return te_fail(...)`. */
void *te_fail(loom_te *te, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const te_reduce *te_find_reduce(const loom_te *te, const loom_expr *e);
/* The extent and the start of a reduce axis; NULL when v is not one. */
loom_expr *te_axis_extent(const loom_te *te, const loom_var *v);
loom_expr *te_axis_min(const loom_te *te, const loom_var *v);
loom_te_tensor *te_find_tensor(const loom_te *te, const loom_buffer *b);

/* A topi function called in a TE script (script_topi.c), its arguments
 * already evaluated: a tensor, a list of tensors, integers (one or a
 * list), a number, a string, a bool or None. */
typedef enum {
  TE_ARG_NONE, TE_ARG_TENSOR, TE_ARG_TENSORS, TE_ARG_INTS, TE_ARG_FLOAT,
  TE_ARG_STR, TE_ARG_BOOL,
} te_arg_kind;

#define TE_ARG_MAX_ITEMS 16

typedef struct te_arg {
  const char *name; /* keyword, or NULL for a positional argument */
  te_arg_kind kind;
  loom_te_tensor *tensors[TE_ARG_MAX_ITEMS];
  int64_t ints[TE_ARG_MAX_ITEMS];
  int n;           /* tensors or ints */
  bool is_list;    /* ints given as a list or tuple, not one int */
  double f;
  const char *s;
  loom_loc loc;
} te_arg;

/* topi.NAME(args...) with NAME as written after "topi." ("nn.relu",
 * "matmul"): the operator library's operator that matches, applied to the
 * arguments. Unknown names get a diagnostic listing the known ones. */
loom_status te_topi_call(loom_te *te, const char *name, const te_arg *args,
                         int n, loom_te_tensor **out, loom_diag *d);

#endif
