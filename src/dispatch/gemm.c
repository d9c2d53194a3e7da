/* The gemm pattern: loops i, j, k (in any order, perfectly nested, serial,
 * plain) around one block that computes
 *     C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
 * (A or B possibly transposed), with an init of zero or none, every iter
 * bound to its loop alone, over compact row-major buffers of one float
 * type that BLAS has a routine for. */
#include "loom/dispatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool refuse(char *why, size_t n, const char *fmt, ...) {
  if (why && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return false;
}

static bool is_var(const loom_expr *e, const loom_var *v) {
  return e && e->kind == LOOM_EXPR_VAR && e->u.var == v;
}

static bool is_load_of(const loom_expr *e, const loom_buffer *b, const loom_var *x,
                       const loom_var *y) {
  return e && e->kind == LOOM_EXPR_LOAD && e->u.load.buffer == b &&
         e->u.load.n_indices == 2 && is_var(e->u.load.indices[0], x) &&
         is_var(e->u.load.indices[1], y);
}

static bool is_zero(const loom_expr *e) {
  return e && e->kind == LOOM_EXPR_FLOAT && e->u.float_value == 0.0;
}

/* Whether b is dense, row-major and starts at its data pointer, with a
 * constant shape of two dimensions. */
static bool is_compact_2d(const loom_buffer *b, int64_t *rows, int64_t *cols) {
  return b->ndim == 2 && !b->strides && !b->elem_offset &&
         loom_ir_is_const_int(b->shape[0], rows) && loom_ir_is_const_int(b->shape[1], cols) &&
         !strcmp(b->scope, "global");
}

/* The product's two factors as loads, A's first: either order of the
 * multiplication. */
static bool split_product(const loom_expr *e, const loom_expr **x, const loom_expr **y) {
  if (!e || e->kind != LOOM_EXPR_MUL)
    return false;
  *x = e->u.bin.a;
  *y = e->u.bin.b;
  return (*x)->kind == LOOM_EXPR_LOAD && (*y)->kind == LOOM_EXPR_LOAD;
}

bool loom_dispatch_match_gemm(const loom_func *f, const loom_stmt *loop, loom_gemm *out,
                              char *why, size_t n) {
  (void)f;
  const loom_stmt *loops[3], *s = loop;
  int n_loops = 0;
  while (s && s->kind == LOOM_STMT_FOR && n_loops < 3) {
    if (s->u.loop.kind != LOOM_FOR_SERIAL || s->u.loop.n_annotations)
      return refuse(why, n, "loop '%s' is not a plain serial loop", s->u.loop.var->name);
    loops[n_loops++] = s;
    s = s->u.loop.body;
  }
  if (n_loops != 3 || !s || s->kind != LOOM_STMT_BLOCK_REALIZE)
    return refuse(why, n, "is not three loops around one block");
  const loom_block *b = s->u.realize.block;
  if (s->u.realize.predicate || b->n_iter_vars != 3 || s->u.realize.n_iter_values != 3 ||
      b->n_alloc_buffers || b->n_match_buffers || b->n_writes != 1)
    return refuse(why, n, "block '%s' is not one output over three iters", b->name);
  /* Each iter is bound to one loop, over the loop's whole range. */
  const loom_var *iv[3] = {NULL, NULL, NULL}; /* i, j, k */
  int64_t ext[3] = {0, 0, 0};
  int n_spatial = 0;
  for (int t = 0; t < 3; t++) {
    const loom_iter_var *it = &b->iter_vars[t];
    int l = 0;
    while (l < 3 && !is_var(s->u.realize.iter_values[t], loops[l]->u.loop.var))
      l++;
    int64_t lo, e, dlo, de;
    if (l == 3 || !loom_ir_is_const_int(loops[l]->u.loop.min, &lo) || lo != 0 ||
        !loom_ir_is_const_int(loops[l]->u.loop.extent, &e) ||
        !loom_ir_is_const_int(it->dom.min, &dlo) || dlo != 0 ||
        !loom_ir_is_const_int(it->dom.extent, &de) || de != e)
      return refuse(why, n, "block '%s' has an iter not bound to a whole loop from 0",
                    b->name);
    if (it->kind == LOOM_ITER_SPATIAL && n_spatial < 2) {
      iv[n_spatial] = it->var;
      ext[n_spatial++] = e;
    } else if (it->kind == LOOM_ITER_REDUCE && !iv[2]) {
      iv[2] = it->var;
      ext[2] = e;
    } else {
      return refuse(why, n, "block '%s' is not two spatial iters and one reduction", b->name);
    }
  }
  /* The store: C[vi, vj] = C[vi, vj] + A * B, in either order. */
  const loom_stmt *st = b->body;
  if (!st || st->kind != LOOM_STMT_STORE || st->u.store.n_indices != 2)
    return refuse(why, n, "block '%s' is not one store", b->name);
  const loom_buffer *c = st->u.store.buffer;
  const loom_var *vi = iv[0], *vj = iv[1], *vk = iv[2];
  if (!is_var(st->u.store.indices[0], vi) || !is_var(st->u.store.indices[1], vj)) {
    const loom_var *t = vi;
    vi = vj;
    vj = t;
    int64_t te = ext[0];
    ext[0] = ext[1];
    ext[1] = te;
  }
  if (!is_var(st->u.store.indices[0], vi) || !is_var(st->u.store.indices[1], vj))
    return refuse(why, n, "block '%s' does not store C[i, j]", b->name);
  const loom_expr *v = st->u.store.value, *acc, *prod;
  if (!v || v->kind != LOOM_EXPR_ADD)
    return refuse(why, n, "block '%s' does not add a product to C", b->name);
  acc = v->u.bin.a;
  prod = v->u.bin.b;
  if (!is_load_of(acc, c, vi, vj)) {
    acc = v->u.bin.b;
    prod = v->u.bin.a;
  }
  const loom_expr *x, *y;
  if (!is_load_of(acc, c, vi, vj) || !split_product(prod, &x, &y))
    return refuse(why, n, "block '%s' does not add a product of two loads to C[i, j]",
                  b->name);
  /* A is the factor indexed by i. */
  if (is_load_of(y, y->u.load.buffer, vi, vk) || is_load_of(y, y->u.load.buffer, vk, vi)) {
    const loom_expr *t = x;
    x = y;
    y = t;
  }
  bool ta = is_load_of(x, x->u.load.buffer, vk, vi);
  bool tb = is_load_of(y, y->u.load.buffer, vj, vk);
  if (!(ta || is_load_of(x, x->u.load.buffer, vi, vk)) ||
      !(tb || is_load_of(y, y->u.load.buffer, vk, vj)))
    return refuse(why, n, "block '%s' does not multiply A[i, k] by B[k, j] (either "
                          "transposed)", b->name);
  const loom_buffer *ba = x->u.load.buffer, *bb = y->u.load.buffer;
  if (ba == c || bb == c)
    return refuse(why, n, "block '%s' reads its output as a factor", b->name);
  /* One float type BLAS has, everywhere. */
  loom_dtype t = c->dtype;
  const char *routine = t.code == LOOM_DT_FLOAT && t.bits == 32 && t.lanes == 1 ? "cblas_sgemm"
                        : t.code == LOOM_DT_FLOAT && t.bits == 64 && t.lanes == 1
                            ? "cblas_dgemm" : NULL;
  if (!routine || !loom_dtype_eq(ba->dtype, t) || !loom_dtype_eq(bb->dtype, t) ||
      !loom_dtype_eq(v->dtype, t))
    return refuse(why, n, "block '%s' is not float32 or float64 throughout", b->name);
  int beta;
  if (!b->init)
    beta = 1;
  else if (b->init->kind == LOOM_STMT_STORE && b->init->u.store.buffer == c &&
           b->init->u.store.n_indices == 2 && is_var(b->init->u.store.indices[0], vi) &&
           is_var(b->init->u.store.indices[1], vj) && is_zero(b->init->u.store.value))
    beta = 0;
  else
    return refuse(why, n, "block '%s' starts C from something other than zero", b->name);
  int64_t r[3][2];
  if (!is_compact_2d(ba, &r[0][0], &r[0][1]) || !is_compact_2d(bb, &r[1][0], &r[1][1]) ||
      !is_compact_2d(c, &r[2][0], &r[2][1]))
    return refuse(why, n, "block '%s' uses a buffer that is not a compact global matrix "
                          "of constant shape", b->name);
  int64_t m = ext[0], nn = ext[1], k = ext[2];
  if (r[0][0] != (ta ? k : m) || r[0][1] != (ta ? m : k) || r[1][0] != (tb ? nn : k) ||
      r[1][1] != (tb ? k : nn) || r[2][0] != m || r[2][1] != nn)
    return refuse(why, n, "block '%s' covers part of its buffers, not all of them", b->name);
  if (m > INT32_MAX || nn > INT32_MAX || k > INT32_MAX)
    return refuse(why, n, "block '%s' is larger than BLAS's int extents", b->name);
  *out = (loom_gemm){.a = ba, .b = bb, .c = c, .trans_a = ta, .trans_b = tb, .m = m,
                     .n = nn, .k = k, .beta = beta, .routine = routine};
  return true;
}
