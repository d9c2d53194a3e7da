/* Private to the operator library: the settings record and the builders,
 * one per row of ops.def. */
#ifndef LOOM_TE_OPS_H
#define LOOM_TE_OPS_H

#include "te_impl.h"

struct loom_te_args {
  const loom_te_op *op;
  const char *const *settings;
  int n;
};

#define OP(name, fn, doc, ...)                                                 \
  loom_status fn(loom_te *te, const loom_te_args *args, loom_func **out,       \
                 loom_diag *d);
#include "ops.def"
#undef OP

/* Helpers shared by the builders. */
loom_expr *ops_int(loom_te *te, int64_t v);
/* The dtype the out_dtype key names; in where it is empty. */
loom_status ops_out_dtype(const loom_te_args *args, loom_dtype in,
                          loom_dtype *out, loom_diag *d);
/* Builds the function from the given tensors (inputs then outputs). */
loom_status ops_finish(loom_te *te, loom_te_tensor *const *t, int n,
                       loom_func **out, loom_diag *d);
/* A placeholder with constant extents. */
loom_te_tensor *ops_input(loom_te *te, const char *name, const int64_t *shape,
                          int ndim, loom_dtype t);
/* Elementwise application of a named activation to x. */
loom_expr *ops_activation(loom_te *te, const char *name, loom_expr *x);
/* True when the name is an activation ops_activation knows. */
bool ops_is_activation(const char *name);
/* topi's pad; `value` fills the border. */
loom_te_tensor *ops_pad(loom_te *te, loom_te_tensor *x, const int64_t *before,
                        const int64_t *after, loom_expr *value,
                        const char *name);
#endif
