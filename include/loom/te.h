/* Compute definitions (TE): tensors described by an index -> expression rule,
 * turned into TensorIR the way TVM's te.create_prim_func does (one block per
 * compute stage), and the operator library built on them.
 *
 * A loom_te context builds in an arena the caller owns; every tensor,
 * variable and expression it hands out lives there. Builder calls never
 * fail loudly: on a bad request they record the first error in the context
 * and return NULL, and loom_te_create_prim_func reports it. */
#ifndef LOOM_TE_H
#define LOOM_TE_H

#include "loom/ir.h"

typedef struct loom_te loom_te;
typedef struct loom_te_tensor loom_te_tensor;

/* NULL when out of memory. The context lives in arena a. */
LOOM_API loom_te *loom_te_new(loom_arena *a);
LOOM_API loom_arena *loom_te_arena(const loom_te *te);
/* The first error recorded by a builder call, or NULL. */
LOOM_API const char *loom_te_error(const loom_te *te);

/* ---- variables, constants and tensors ----------------------------------- */

/* A symbolic int32 size (te.var). */
LOOM_API loom_var *loom_te_var(loom_te *te, const char *name);
LOOM_API loom_expr *loom_te_int(loom_te *te, int64_t v); /* int32 */
LOOM_API loom_expr *loom_te_const(loom_te *te, loom_dtype t,
                                  double v); /* any dtype */
LOOM_API loom_expr *loom_te_ref(loom_te *te, loom_var *v);

/* te.placeholder: an input tensor. shape entries are int32 expressions. */
LOOM_API loom_te_tensor *loom_te_placeholder(loom_te *te, const char *name,
                                             loom_expr *const *shape, int ndim,
                                             loom_dtype t);
/* The same with constant extents. */
LOOM_API loom_te_tensor *loom_te_placeholder_c(loom_te *te, const char *name,
                                               const int64_t *shape, int ndim,
                                               loom_dtype t);

/* te.reduce_axis over [0, extent). */
LOOM_API loom_var *loom_te_reduce_axis(loom_te *te, loom_expr *extent,
                                       const char *name);
/* te.reduce_axis((min, min + extent)): the block iter var's domain and the
 * loop start at min, as create_prim_func carries the range over. */
LOOM_API loom_var *loom_te_reduce_axis_range(loom_te *te, loom_expr *min,
                                             loom_expr *extent,
                                             const char *name);

/* The body of a compute stage: given one int32 index per output dimension,
 * returns the element's value, either a plain expression or, as the whole
 * body, a reduction made by loom_te_sum / max / min. NULL on error. */
typedef loom_expr *(*loom_te_fcompute)(loom_te *te, void *user,
                                       loom_expr *const *idx);

/* te.compute. axis_names (NULL: "i0", "i1", ...) name the loops; the block
 * iter vars are "v_" followed by them. The output dtype is the body's. */
LOOM_API loom_te_tensor *loom_te_compute(loom_te *te, const char *name,
                                         loom_expr *const *shape, int ndim,
                                         const char *const *axis_names,
                                         loom_te_fcompute f, void *user);
/* A stage whose body is a tuple reduction (loom_te_comm_reduce) has one
 * output per value, named "<name>_v0", "<name>_v1", ...; loom_te_compute
 * returns the first and loom_te_output(t, i) the i-th (TE's op.output(i)).
 * A single-output stage has one output, itself. */
LOOM_API int loom_te_n_outputs(const loom_te_tensor *t);
LOOM_API loom_te_tensor *loom_te_output(const loom_te_tensor *t, int i);
/* Adds an integer block attribute (TE's attrs=), such as softmax's "axis". */
LOOM_API void loom_te_set_attr_int(loom_te *te, loom_te_tensor *t,
                                   const char *key, int64_t v);
/* Adds a string block attribute ("schedule_rule"). */
LOOM_API void loom_te_set_attr_str(loom_te *te, loom_te_tensor *t,
                                   const char *key, const char *v);
/* Marks placeholder p free to re-layout for stage t (TE's attrs=
 * {"layout_free_placeholders": [p]}, as topi's dense marks its weight):
 * create_prim_func lists the parameter positions of such placeholders in
 * the function attribute "layout_free_buffers". */
LOOM_API void loom_te_set_layout_free(loom_te *te, loom_te_tensor *t,
                                      loom_te_tensor *p);

/* Accessors; a NULL tensor has rank 0 and NULL dimensions. */
LOOM_API int loom_te_ndim(const loom_te_tensor *t);
LOOM_API loom_expr *loom_te_dim(const loom_te_tensor *t, int i);
LOOM_API loom_dtype loom_te_dtype(const loom_te_tensor *t);
LOOM_API const char *loom_te_name(const loom_te_tensor *t);

/* An element of a tensor: t[idx[0], ..., idx[ndim-1]]. */
LOOM_API loom_expr *loom_te_at(loom_te *te, loom_te_tensor *t,
                               loom_expr *const *idx, int n);

/* ---- expressions ------------------------------------------------------------
 * Arithmetic folds constants and identities (x + 0, x * 1) as TVM's operator
 * overloads do, so generated indices read as TVM prints them. */
LOOM_API loom_expr *loom_te_bin(loom_te *te, loom_expr_kind k, loom_expr *x,
                                loom_expr *y);
LOOM_API loom_expr *loom_te_add(loom_te *te, loom_expr *x, loom_expr *y);
LOOM_API loom_expr *loom_te_sub(loom_te *te, loom_expr *x, loom_expr *y);
LOOM_API loom_expr *loom_te_mul(loom_te *te, loom_expr *x, loom_expr *y);
LOOM_API loom_expr *loom_te_div(loom_te *te, loom_expr *x, loom_expr *y);
LOOM_API loom_expr *loom_te_cast(loom_te *te, loom_dtype t, loom_expr *x);
LOOM_API loom_expr *loom_te_if_then_else(loom_te *te, loom_expr *c,
                                         loom_expr *t, loom_expr *f);
LOOM_API loom_expr *loom_te_select(loom_te *te, loom_expr *c, loom_expr *t,
                                   loom_expr *f);
/* A math intrinsic (T.exp, T.sqrt, ...) of the argument's dtype. */
LOOM_API loom_expr *loom_te_call(loom_te *te, loom_op op,
                                 loom_expr *const *args, int n);
LOOM_API loom_expr *loom_te_call1(loom_te *te, loom_op op, loom_expr *x);
/* The smallest and largest values of a dtype (reduction identities). */
LOOM_API loom_expr *loom_te_min_value(loom_te *te, loom_dtype t);
LOOM_API loom_expr *loom_te_max_value(loom_te *te, loom_dtype t);

/* ---- reductions ----------------------------------------------------------
 * te.sum / te.max / te.min of src over the reduce axes, counting only the
 * points where `where` holds (NULL: all). Valid only as a compute body. */
typedef enum {
  LOOM_TE_SUM,
  LOOM_TE_MAX,
  LOOM_TE_MIN,
  LOOM_TE_PROD,
} loom_te_reducer;

LOOM_API loom_expr *loom_te_reduce(loom_te *te, loom_te_reducer r,
                                   loom_expr *src, loom_var *const *axes,
                                   int n_axes, loom_expr *where);
LOOM_API loom_expr *loom_te_sum(loom_te *te, loom_expr *src,
                                loom_var *const *axes, int n_axes,
                                loom_expr *where);

/* te.comm_reducer applied: n values reduced together, as TVM's argmax
 * keeps (index, value) pairs. The caller makes lhs[i] (the value so far)
 * and rhs[i] (the incoming one) as variables of src[i]'s dtype; result[i]
 * combines them and identity[i] starts the reduction. In the block, each
 * result is bound to a let variable "v_<output>" before the outputs are
 * stored, so that every result reads the old values (TVM's form). With
 * n == 1 the result is stored directly. The arrays are copied. */
typedef struct loom_te_comm_reducer {
  int n;
  loom_var *const *lhs;
  loom_var *const *rhs;
  loom_expr *const *result;
  loom_expr *const *identity;
} loom_te_comm_reducer;

#define LOOM_TE_MAX_VALUES 8

LOOM_API loom_expr *loom_te_comm_reduce(loom_te *te,
                                        const loom_te_comm_reducer *r,
                                        loom_expr *const *src,
                                        loom_var *const *axes, int n_axes,
                                        loom_expr *where);

/* ---- TensorIR ---------------------------------------------------------------
 * te.create_prim_func: a prim func "main" whose parameters are args in order
 * (tensors, then nothing else; symbolic sizes are bound by the buffers'
 * shapes), with one block per compute stage reachable from args, in
 * dependence order, named after the stage; stages not in args become
 * buffers allocated in the root block. Fails with d when a builder call
 * failed, when a stage reads a placeholder that is not in args, or when the
 * result is not well formed. */
LOOM_API loom_status loom_te_create_prim_func(loom_te *te,
                                              loom_te_tensor *const *args,
                                              int n_args, loom_func **out,
                                              loom_diag *d);

/* ---- TE scripts --------------------------------------------------------------
 * Runs a TE script, the Python subset TVM users write (te.placeholder,
 * te.var, te.reduce_axis, te.compute with lambdas or simple defs, te.sum /
 * max / min with where=, te.comm_reducer, te.if_then_else, tir math and
 * helpers, topi functions the operator library has, te.create_prim_func), and
 * returns the function of the last te.create_prim_func call. Nodes go into
 * arena a; errors are located at FILE:LINE:COL of the offending expression
 * (d's source is set to text). */
LOOM_API loom_status loom_te_read_script(const char *text, size_t len,
                                         const char *file, loom_arena *a,
                                         loom_func **out, loom_diag *d);

/* ---- the operator library ------------------------------------------------ */

/* One parameter of an operator: its key and its default, as text. */
typedef struct loom_te_key {
  const char *name;
  const char *default_value;
} loom_te_key;

/* The values given for an operator's keys, looked up by the builder. */
typedef struct loom_te_args loom_te_args;

typedef loom_status (*loom_te_op_builder)(loom_te *te, const loom_te_args *args,
                                          loom_func **out, loom_diag *d);

#define LOOM_TE_MAX_KEYS 16

typedef struct loom_te_op {
  const char *name;
  loom_te_key keys[LOOM_TE_MAX_KEYS]; /* ends at a NULL name */
  loom_te_op_builder build;
  const char *doc;
} loom_te_op;

LOOM_API int loom_te_op_count(void);
LOOM_API const loom_te_op *loom_te_op_at(int i);
LOOM_API const loom_te_op *loom_te_op_find(const char *name);

/* Builds operator op with the given KEY=VALUE settings (n of them; others
 * take their defaults) into arena a. Fails with d naming the operator's keys
 * for an unknown key, and the expected form for a bad value. */
LOOM_API loom_status loom_te_op_build(const loom_te_op *op,
                                      const char *const *settings, int n,
                                      loom_arena *a, loom_func **out,
                                      loom_diag *d);

/* Applies op with KEY=VALUE settings to tensors of te, as a TE script's
 * topi call does: inputs are the tensors the builder takes, in its order,
 * with the shapes and dtypes the settings describe; *out is the op's
 * output, its stages now part of te, so that a caller can add stages after
 * it (a bias, an activation) before loom_te_create_prim_func. */
LOOM_API loom_status loom_te_op_apply(loom_te *te, const loom_te_op *op,
                                      const char *const *settings, int n,
                                      loom_te_tensor *const *inputs,
                                      int n_inputs, loom_te_tensor **out,
                                      loom_diag *d);

/* For builders: a key's value as an integer, a dtype or text. Each records
 * an error in d when the text does not parse. */
LOOM_API loom_status loom_te_args_int(const loom_te_args *args, const char *key,
                                      int64_t *out, loom_diag *d);
LOOM_API loom_status loom_te_args_dtype(const loom_te_args *args,
                                        const char *key, loom_dtype *out,
                                        loom_diag *d);
LOOM_API loom_status loom_te_args_str(const loom_te_args *args, const char *key,
                                      const char **out, loom_diag *d);
/* A comma-separated list of integers ("1,64,28,28"); at most max of them. */
LOOM_API loom_status loom_te_args_ints(const loom_te_args *args,
                                       const char *key, int64_t *out, int max,
                                       int *n, loom_diag *d);

#endif
