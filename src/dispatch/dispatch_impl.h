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

#endif
