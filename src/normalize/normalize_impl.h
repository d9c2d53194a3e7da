/* Private to the normalization passes: the pass functions the table in
 * normalize.c names, and what they share (substitution through statements,
 * the buffers visible at a point, region inference for a new block). */
#ifndef LOOM_NORMALIZE_IMPL_H
#define LOOM_NORMALIZE_IMPL_H

#include "loom/arith.h"
#include "loom/normalize.h"

/* One pass over one function: *out is f itself when nothing changed. */
typedef loom_status (*norm_pass_fn)(loom_arena *a, const loom_func *f,
                                    loom_func **out, loom_diag *d);

loom_status norm_wrap_root(loom_arena *a, const loom_func *f, loom_func **out,
                           loom_diag *d);
loom_status norm_loop_zero(loom_arena *a, const loom_func *f, loom_func **out,
                           loom_diag *d);
loom_status norm_iter_vars(loom_arena *a, const loom_func *f, loom_func **out,
                           loom_diag *d);
loom_status norm_regions(loom_arena *a, const loom_func *f, loom_func **out,
                         loom_diag *d);

/* The buffers visible at a point of a function, innermost last: the
 * parameters' buffers, then the allocations and match buffers of the
 * enclosing blocks and allocation statements. A walker pushes on the way
 * down and restores n on the way up. Heap-allocated. */
typedef struct norm_bufs {
  loom_buffer **items;
  int n, cap;
} norm_bufs;

bool norm_bufs_push(norm_bufs *l, loom_buffer *b);
/* Starts l with f's parameter buffers. */
bool norm_bufs_init(norm_bufs *l, const loom_func *f);
/* Pushes what block b defines for its body (allocations, match buffers). */
bool norm_bufs_push_block(norm_bufs *l, const loom_block *b);
void norm_bufs_free(norm_bufs *l);

/* Replaces each use of vars[i] by vals[i] in s, through nested blocks'
 * bindings, predicates, iter var domains, regions, inits and bodies
 * (loom_ir_mutate_stmt with the variables). Integer expressions that
 * change (indices, bindings, bounds, conditions) are simplified under ctx,
 * so `i_ + 1 - 1` reads `i_`. Returns s itself when nothing changed; NULL
 * when out of memory. */
loom_stmt *norm_subst_stmt(loom_arena *a, loom_arith_ctx *ctx, loom_stmt *s,
                           const loom_var *const *vars, loom_expr *const *vals,
                           int n);


/* Fills in the regions of block b (not yet shared) from the buffers in
 * `visible` that b does not define itself. Returns false when they cannot be
 * inferred (b keeps what it had) or memory runs out. */
bool norm_infer_regions(loom_arena *a, loom_block *b, const norm_bufs *visible);

/* A copy of s with each child statement (a loop's body, a block's init and
 * body, a sequence's items, both branches of an if, ...) replaced by what fn
 * returns for it; s itself when every child comes back unchanged. fn returns
 * NULL when out of memory, and so does this. */
typedef loom_stmt *(*norm_child_fn)(void *arg, loom_stmt *child);
loom_stmt *norm_map_children(loom_arena *a, loom_stmt *s, norm_child_fn fn,
                             void *arg);

/* A copy of f with body `body`; NULL when out of memory. */
loom_func *norm_with_body(loom_arena *a, const loom_func *f, loom_stmt *body);
/* A shallow copy of s, NULL when out of memory. */
loom_stmt *norm_copy_stmt(loom_arena *a, const loom_stmt *s);
/* The root block realize of f (the function body when it is a block
 * realize), or NULL. */
const loom_stmt *norm_root(const loom_func *f);

#endif
