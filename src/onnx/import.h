/* Private to the importer: the values and calls of the graph being built,
 * shared by the reader (read.c), the layout conversion (layout.c) and the
 * folding of BatchNormalization into convolutions (fold.c). */
#ifndef LOOM_ONNX_IMPORT_H
#define LOOM_ONNX_IMPORT_H

#include "onnx_impl.h"

typedef enum { VAL_INPUT, VAL_WEIGHT, VAL_CALL } val_kind;

typedef struct ival {
  const char *name;             /* in the graph */
  const char *onnx;             /* the model's name; NULL for a copy */
  loom_tensor_info info;        /* as stored */
  const loom_onnx_tensor *data; /* weights */
  val_kind kind;
  bool is_used; /* an argument of a call, or an output of the graph */
  bool is_nhwc; /* a 4-D tensor of the model, stored channels-last */
  int other;    /* the same tensor in the other layout, once made; -1 */
  int index;    /* in the graph, once numbered */
} ival;

typedef struct icall {
  const char *func;
  int *args; /* ival indices */
  int n_args;
  int out;
} icall;

/* A distinct prim func: as built (named "main", for comparing) and as the
 * module holds it. */
typedef struct ifunc {
  loom_func *built;
  uint64_t hash;
  const char *base;
  loom_func *named;
} ifunc;

typedef struct importer {
  const char *path;
  loom_arena *a;
  loom_diag *d;
  int64_t opset;
  loom_onnx_options opts;
  const Onnx__GraphProto *graph;
  bool *is_folded; /* per node: a BatchNormalization folded into a Conv */
  ival *vals;
  int n_vals, cap_vals;
  icall *calls;
  int n_calls, cap_calls;
  ifunc *funcs;
  int n_funcs, cap_funcs;
} importer;

/* The value the model names `name`; -1 when none. */
int import_find(const importer *m, const char *name);
/* A new value; its index, or -1 when out of memory. */
int import_add_val(importer *m, const char *name, loom_tensor_info info,
                   val_kind kind);
/* A new weight holding t's data, converted first where the options read
 * its type as another (float_dtype); -1 when out of memory. */
int import_add_weight(importer *m, const char *name, const loom_onnx_tensor *t);
/* The call of the prim func made of n's arguments (n->args, their values
 * n->vals) and its result y, the result a new value named `name`. */
loom_status import_call(importer *m, onnx_node *n, const char *base,
                        loom_te_tensor *y, const char *name, int *out);

/* ---- layout.c ------------------------------------------------------------- */

/* Points n->vals at copies of its inputs in the layout op takes, making
 * them where needed, and sets n->is_nhwc. *is_nhwc_out: the result is
 * stored channels-last. */
loom_status onnx_layout_inputs(importer *m, onnx_node *n, const onnx_op *op,
                               bool *is_nhwc_out);
/* Value v as the model has it (NCHW): v itself, or its copy. */
loom_status onnx_layout_model(importer *m, int v, int *out);

/* ---- fold.c --------------------------------------------------------------- */

/* When n (node `index` of the graph) is a Conv whose result only a
 * BatchNormalization reads, all constant: n takes the folded weights and
 * bias and the batch norm's result, and the batch norm is marked folded. */
loom_status onnx_fold_bn(importer *m, onnx_node *n, int index);

#endif
