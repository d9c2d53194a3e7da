/* Private to the ONNX importer: a node as its operator's builder sees it,
 * the helpers builders share (attributes, constant inputs, library ops),
 * and the operator table. */
#ifndef LOOM_ONNX_IMPL_H
#define LOOM_ONNX_IMPL_H

#include "loom/onnx.h"
#include "loom/te.h"
#include "onnx/onnx.pb-c.h"

#include <stdbool.h>

/* Rank limit of the tensors the importer builds (TE's). */
#define ONNX_MAX_RANK 16
/* The most inputs a variadic operator (Max, Sum, ...) takes. */
#define ONNX_MAX_INPUTS 16

/* One node being turned into a prim func. Inputs that are absent (an empty
 * name, as ONNX writes a skipped optional input) have a NULL info. An
 * input whose data is known at import (an initializer or a Constant node's
 * output) has it in data[i]; a builder that reads it as data (Reshape's
 * shape) does not make it an argument. */
typedef struct onnx_node {
  const Onnx__NodeProto *proto;
  const char *where;   /* "node 'NAME' (OP)", for messages */
  int64_t opset;
  loom_te *te;
  loom_arena *arena;
  int n_in;
  const loom_tensor_info **in;
  const loom_onnx_tensor **data;
  loom_te_tensor **args; /* the placeholders of inputs taken as arguments */
  int *vals;             /* the importer's value of each input; -1: absent */
  const char *output;    /* the name of its result */
  bool is_nhwc;          /* build channels-last (an ONNX_LAYOUT_NHWC operator) */
  bool is_f32_accumulated; /* loom_onnx_options' */
  loom_diag *d;
} onnx_node;

/* Builds the node's result from its inputs; the caller makes the prim func
 * of the arguments (node_arg, in input order) and the result. */
typedef loom_status (*onnx_builder)(onnx_node *n, loom_te_tensor **out);

/* What an operator does with 4-D activations the importer stores
 * channels-last (loom_onnx_options.is_channels_last): a model's tensors are
 * NCHW, and a copy in the other layout is made where an operator needs it. */
typedef enum onnx_layout {
  ONNX_LAYOUT_NCHW,   /* takes every input as the model has it */
  ONNX_LAYOUT_FOLLOW, /* elementwise on input 0: its result is stored alike */
  ONNX_LAYOUT_SAME,   /* elementwise on inputs of one shape, stored alike */
  ONNX_LAYOUT_NHWC,   /* builds channels-last from a 4-D input (is_nhwc) */
} onnx_layout;

typedef struct onnx_op {
  const char *type;  /* ONNX's op_type */
  onnx_builder build;
  const char *func;  /* the base name of the prim funcs made for it */
  onnx_layout layout;
  const char *attrs; /* the attributes it takes, space-separated */
} onnx_op;

/* The row for op_type; NULL when the importer lacks it. */
const onnx_op *onnx_op_find(const char *type);

/* ---- tensors (tensor.c) --------------------------------------------------- */

/* The loom dtype of an ONNX TensorProto.DataType; false for one Loom lacks
 * (string, complex). */
bool onnx_dtype(int32_t data_type, loom_dtype *out);
/* ONNX's name of a DataType ("FLOAT", "INT64"), for messages. */
const char *onnx_dtype_name(int32_t data_type);
/* Copies a TensorProto into arena a, its data dense and row-major. what
 * names it in messages. */
loom_status onnx_tensor_from_proto(const Onnx__TensorProto *p, loom_arena *a,
                                   const char *what, loom_onnx_tensor *out,
                                   loom_diag *d);
int64_t onnx_numel(const loom_tensor_info *t);
/* Bytes per element as the interpreter lays arrays out (bool: one byte). */
size_t onnx_elem_bytes(loom_dtype t);
/* Element i of a tensor's data as a double, or as an integer. */
double onnx_tensor_get(const loom_onnx_tensor *t, int64_t i);
int64_t onnx_tensor_get_int(const loom_onnx_tensor *t, int64_t i);
/* Stores v, rounded to nearest even, as element i of a floating-point
 * tensor. */
void onnx_tensor_put(loom_onnx_tensor *t, int64_t i, double v);
/* A copy of t in arena a with its elements converted to dtype dt. */
loom_status onnx_tensor_retype(loom_arena *a, const loom_onnx_tensor *t,
                               loom_dtype dt, const loom_onnx_tensor **out);

/* ---- node helpers (node.c) ------------------------------------------------ */

/* Records an error prefixed by the node ("node 'c1' (Conv): ..."). */
loom_status node_error(onnx_node *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

const Onnx__AttributeProto *node_attr(const onnx_node *n, const char *name);
int64_t node_attr_int(const onnx_node *n, const char *name, int64_t dflt);
double node_attr_float(const onnx_node *n, const char *name, double dflt);
/* The text of a string attribute, or dflt. */
const char *node_attr_str(const onnx_node *n, const char *name,
                          const char *dflt);
/* The values of an INTS attribute into out (at most max); the count, or -1
 * when the attribute is absent. More than max is an error (-2 with d set). */
int node_attr_ints(onnx_node *n, const char *name, int64_t *out, int max);

/* Input i as an argument of the prim func: its placeholder, made once. */
loom_te_tensor *node_arg(onnx_node *n, int i);
/* Whether input i is present (a non-empty name). */
bool node_has(const onnx_node *n, int i);
/* Input i read at import as integers (Reshape's shape); an error naming
 * what when it is not a constant. *count gets the number of values. */
loom_status node_const_ints(onnx_node *n, int i, const char *what,
                            int64_t *out, int max, int *count);

/* Applies library operator `op` to inputs, its settings given as
 * space-separated KEY=VALUE text formatted like printf. */
loom_status node_apply(onnx_node *n, const char *op,
                       loom_te_tensor *const *inputs, int n_inputs,
                       loom_te_tensor **out, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* "1,4,10,10": the extents as the operator library writes shapes. */
const char *node_shape_str(onnx_node *n, const int64_t *shape, int ndim);
const char *node_dtype_str(onnx_node *n, loom_dtype t);
/* The dtype a product of t's sums in: float32 for float16 and bfloat16
 * where the options ask (is_f32_accumulated), else t. */
loom_dtype node_acc_dtype(const onnx_node *n, loom_dtype t);
/* y converted to t by the library's cast (by TE for a scalar, which the
 * library's cast does not take); y itself when it has dtype t. */
loom_status node_cast(onnx_node *n, loom_te_tensor *y, loom_dtype t,
                        loom_te_tensor **out);

/* Constant extents as int32 expressions. */
void node_shape_exprs(onnx_node *n, const int64_t *shape, int ndim,
                      loom_expr **out);
/* An element of t, with dimensions of extent 1 read at 0 where the index
 * list (of a result of rank n_idx) is longer: numpy broadcasting. */
loom_expr *node_bcast_at(onnx_node *n, loom_te_tensor *t,
                         loom_expr *const *idx, int n_idx);
/* The broadcast shape of a and b; an error when they do not broadcast. */
loom_status node_bcast_shape(onnx_node *n, const loom_tensor_info *a,
                             const loom_tensor_info *b, int64_t *out,
                             int *ndim);
/* Normalizes an axis attribute against rank; an error when out of range. */
loom_status node_axis(onnx_node *n, const char *what, int64_t axis, int rank,
                      int *out);

/* ---- builders, one per operator (ops_*.c) --------------------------------- */

#define ONNX_OP(type, fn, func, layout, attrs)                                 \
  loom_status fn(onnx_node *n, loom_te_tensor **out);
#include "ops.def"
#undef ONNX_OP

#endif
