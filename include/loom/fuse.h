/* Operator fusion: the calls of a graph function grouped, and each group's
 * prim funcs merged into one, as TVM's FuseOps and FuseTIR do for a Relax
 * function whose operators are TensorIR. A convolution or matrix product
 * takes the elementwise operators after it (bias, batch norm, ReLU), chains
 * of elementwise and broadcast operators join the injective operator or
 * reduction they feed, and injective operators (reshapes, transposes,
 * pads) join what reads them when only injective operators lie between.
 * The merged function computes the same tensors with one kernel: its
 * intermediates are buffers it allocates, which a schedule may inline or
 * compute in place (docs/fuse.md). */
#ifndef LOOM_FUSE_H
#define LOOM_FUSE_H

#include "loom/ir.h"

/* What a prim func does, in the order fusion ranks it (TVM's
 * OpPatternKind; the values are TVM's). */
typedef enum loom_fuse_kind {
  LOOM_FUSE_ELEMWISE = 0,    /* every read at the point written */
  LOOM_FUSE_BROADCAST = 1,   /* reads at the point written, some axes dropped */
  LOOM_FUSE_INJECTIVE = 2,   /* each output element from inputs by index maps */
  LOOM_FUSE_REDUCE = 3,      /* a commutative reduction */
  LOOM_FUSE_OUT_EWISE = 4,   /* a product or pooling that elementwise ops may follow */
  LOOM_FUSE_OPAQUE = 8,      /* anything else: never fused */
} loom_fuse_kind;

LOOM_API const char *loom_fuse_kind_name(loom_fuse_kind k);

/* The kind of f, from its blocks' access patterns as TVM's
 * AnnotateTIROpPattern finds it. */
LOOM_API loom_fuse_kind loom_fuse_kind_of(const loom_func *f);

/* The groups of g's calls: group[k] is the index of the last call of the
 * group call k belongs to (k itself for a call left alone). Calls that m
 * lacks, or whose callee cannot be merged, stay alone. */
LOOM_API loom_status loom_fuse_partition(const loom_module *m, const loom_graph *g,
                                         int *group);

/* m with every graph function fused: each group of two or more calls
 * becomes one call of a new prim func "fused_<callees>" (one for each
 * distinct merged function), the callees no call reaches any more are
 * dropped. The result is a new module in arena a (sharing m's unchanged
 * nodes); m is not changed. When explain is not NULL it receives a line
 * per fused function: its name, the calls it merges and their kinds. */
LOOM_API loom_status loom_fuse_module(loom_arena *a, const loom_module *m,
                                      loom_module **out, loom_buf *explain,
                                      loom_diag *d);

/* m with each prim func's parameters that every call of a graph function
 * passes a constant (parameter n_constant_from or later of the graph: a
 * model's weights) listed in its "layout_free_buffers", as TVM's
 * AttachAttrLayoutFreeBuffers lists them: such a buffer holds the same
 * data on every call, so a kernel may keep a copy of it in another layout
 * (oneDNN's reordered weights). A function called from no graph, or with
 * other tensors there, is left as it is. */
LOOM_API loom_status loom_fuse_mark_constants(loom_arena *a, const loom_module *m,
                                              int n_constant_from, loom_module **out);

#endif
