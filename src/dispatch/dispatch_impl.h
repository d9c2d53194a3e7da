/* Inside the dispatch pass: the checks the gemm, conv and pool patterns
 * share (match.c, window.c). */
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

/* ---- window.c: what the conv and pool patterns share -------------------- */

/* Where each axis sits in the data (P, X and Y) and, for a conv, in the
 * weights. */
typedef struct dispatch_layout {
  const char *name;
  int n, c, h, w;     /* in P, X and Y */
  int kh, kw, ci, co; /* in W */
} dispatch_layout;

/* NHWC (weights HWIO), then NCHW (weights OIHW). */
extern const dispatch_layout dispatch_layouts[2];

/* Perfectly nested loops down to one block: at most 7 of them. */
typedef struct dispatch_nest {
  const loom_stmt *loops[7];
  int n_loops;
  const loom_stmt *realize; /* the block at the bottom; NULL: none */
} dispatch_nest;

/* The plain serial loops from loop down, and the block under them; false
 * (and why) at a loop of another kind or with annotations. */
bool dispatch_take_nest(const loom_stmt *loop, dispatch_nest *out, char *why, size_t n);

/* The iter whose variable e is; -1 when e is not one. */
int dispatch_iter_of(const loom_block *b, const loom_expr *e);

/* Whether e is c0 + a[0] v0 + a[1] v1 (v1 may be NULL), in any order. */
bool dispatch_is_affine(const loom_expr *e, const loom_var *v0, const loom_var *v1, int64_t a[2],
                        int64_t *c0);

/* Whether t is float32, one lane. */
bool dispatch_is_f32(loom_dtype t);

/* The constant shape of b, ndim 4; false when it is not compact or not
 * constant. */
bool dispatch_shape4(const loom_buffer *b, int64_t *shape);

/* The input a padding nest copies and the rows and columns before it. */
typedef struct dispatch_pad {
  const loom_buffer *x;
  int64_t lo[2];
} dispatch_pad;

/* Whether the nest under pad_loop writes p (of shape ps, in layout L) as a
 * copy of another buffer X with fill (fill_name in messages) around it
 * along h and w, P being the function's own and read by the nest user
 * alone; out gets X and the padding before. */
bool dispatch_match_pad(const loom_func *f, const loom_stmt *pad_loop, const loom_stmt *user,
                        const dispatch_layout *L, const loom_buffer *p, const int64_t *ps,
                        double fill, const char *fill_name, dispatch_pad *out, char *why,
                        size_t n);

#endif
