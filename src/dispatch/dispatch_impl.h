/* Inside the dispatch pass: the checks the gemm and conv patterns share
 * (match.c). */
#ifndef LOOM_DISPATCH_IMPL_H
#define LOOM_DISPATCH_IMPL_H

#include "loom/dispatch.h"

/* Writes the reason into why (when not NULL) and returns false, so a
 * matcher refuses in one statement. */
bool dispatch_refuse(char *why, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether e is the variable v itself. */
bool dispatch_is_var(const loom_expr *e, const loom_var *v);

/* Whether e is the float constant zero. */
bool dispatch_is_zero(const loom_expr *e);

/* Whether b is dense, row-major, global, starts at its data pointer and has
 * the constant shape want[0..n). */
bool dispatch_is_compact(const loom_buffer *b, const int64_t *want, int n);

/* Whether b is a function parameter's buffer rather than one f
 * allocates. */
bool dispatch_is_param(const loom_func *f, const loom_buffer *b);

/* Whether each iter of the block realized at the bottom of loops[0..n_loops)
 * is bound to a loop of its own, over that loop's whole range from 0 (two
 * iters on one loop would make the library compute something else); ext[t]
 * gets iter t's extent. */
bool dispatch_bind_iters(const loom_stmt *const *loops, int n_loops, const loom_stmt *realize,
                         int64_t *ext, char *why, size_t n);

#endif
