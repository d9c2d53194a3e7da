/* The checks the gemm and conv patterns share. */
#include "dispatch/dispatch_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool dispatch_refuse(char *why, size_t n, const char *fmt, ...) {
  if (why && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return false;
}

bool dispatch_is_var(const loom_expr *e, const loom_var *v) {
  return e && e->kind == LOOM_EXPR_VAR && e->u.var == v;
}

bool dispatch_is_zero(const loom_expr *e) {
  return e && e->kind == LOOM_EXPR_FLOAT && e->u.float_value == 0.0;
}

bool dispatch_is_compact(const loom_buffer *b, const int64_t *want, int n) {
  if (b->ndim != n || b->strides || b->elem_offset || strcmp(b->scope, "global"))
    return false;
  for (int i = 0; i < n; i++) {
    int64_t e;
    if (!loom_ir_is_const_int(b->shape[i], &e) || e != want[i])
      return false;
  }
  return true;
}

bool dispatch_is_param(const loom_func *f, const loom_buffer *b) {
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer == b)
      return true;
  return false;
}

bool dispatch_bind_iters(const loom_stmt *const *loops, int n_loops, const loom_stmt *realize,
                         int64_t *ext, char *why, size_t n) {
  const loom_block *b = realize->u.realize.block;
  unsigned used = 0;
  for (int t = 0; t < b->n_iter_vars; t++) {
    const loom_iter_var *it = &b->iter_vars[t];
    int l = 0;
    while (l < n_loops && !dispatch_is_var(realize->u.realize.iter_values[t], loops[l]->u.loop.var))
      l++;
    int64_t lo, e, dlo, de;
    if (l == n_loops || (used >> l & 1) || !loom_ir_is_const_int(loops[l]->u.loop.min, &lo) ||
        lo != 0 || !loom_ir_is_const_int(loops[l]->u.loop.extent, &e) ||
        !loom_ir_is_const_int(it->dom.min, &dlo) || dlo != 0 ||
        !loom_ir_is_const_int(it->dom.extent, &de) || de != e || e <= 0)
      return dispatch_refuse(why, n, "block '%s' has an iter not bound to a whole loop of its "
                                     "own from 0", b->name);
    used |= 1u << l;
    ext[t] = e;
  }
  return true;
}
