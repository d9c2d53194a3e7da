/* Inside the fusion pass: the kinds (kind.c), the grouping (partition.c),
 * the merging of a group's functions (merge.c) and the pass (fuse.c). */
#ifndef LOOM_FUSE_IMPL_H
#define LOOM_FUSE_IMPL_H

#include "loom/fuse.h"

/* Parameters a merged callee may have: a graph call's tensors and its
 * result. */
#define FUSE_MAX_PARAMS 65

/* Can f's body be merged with others: a root block holding the rest, every
 * parameter (FUSE_MAX_PARAMS at most) a compact global buffer of constant
 * shape? */
bool fuse_is_mergeable(const loom_func *f);

/* One prim func computing calls[0..n) of g (a group: every value they make
 * but the last call's is read only inside it), named name, in arena a. Its
 * parameters are the values the calls read from outside, in the order of
 * first use, then the last call's result. */
loom_status fuse_merge(loom_arena *a, const loom_module *m, const loom_graph *g,
                       const int *calls, int n, const char *name,
                       loom_func **out, loom_diag *d);

#endif
