/* The max-pool pattern: six loops (serial, plain, in any order) around one
 * block that computes, NHWC,
 *     Y[n, h, w, c] = T.max(Y[n, h, w, c], P[n, h*sh + rh*dh, w*sw + rw*dw, c])
 * (or the same NCHW) from an init of float32's lowest value. P is the
 * input itself, or an intermediate that the nest just before writes as a
 * copy of the input with that lowest value around it (topi's and the ONNX
 * importer's padding), which nothing else reads: oneDNN's pooling pads
 * with it too, so the two nests are one call. */
#include "dispatch/dispatch_impl.h"

#include <float.h>

static bool is_lowest(const loom_expr *e) {
  return e && e->kind == LOOM_EXPR_FLOAT && e->u.float_value == -(double)FLT_MAX;
}

/* The pool's iters, named by layout L (n, h, w, c, kh, kw in it[]), and
 * its strides and dilations; false when the block does not pool in L. */
static bool match_layout(const loom_block *b, const dispatch_layout *L,
                         const loom_expr *const *yi, const loom_expr *p, int it[6], int64_t s[2],
                         int64_t d[2]) {
  const loom_expr *const *pi = (const loom_expr *const *)p->u.load.indices;
  int at[4] = {L->n, L->h, L->w, L->c};
  for (int i = 0; i < 4; i++)
    it[i] = dispatch_iter_of(b, yi[at[i]]);
  if (!dispatch_is_var(pi[L->n], b->iter_vars[it[0]].var) ||
      !dispatch_is_var(pi[L->c], b->iter_vars[it[3]].var))
    return false;
  for (int i = 0; i < 2; i++) {
    int64_t a[2], c0;
    const loom_expr *e = pi[i ? L->w : L->h];
    int r = -1;
    for (int t = 0; t < b->n_iter_vars && r < 0; t++)
      if (b->iter_vars[t].kind == LOOM_ITER_REDUCE && (i == 0 || t != it[4]) &&
          dispatch_is_affine(e, b->iter_vars[it[1 + i]].var, b->iter_vars[t].var, a, &c0) &&
          a[0] > 0 && a[1] > 0 && c0 == 0)
        r = t;
    if (r < 0)
      return false;
    it[4 + i] = r;
    s[i] = a[0];
    d[i] = a[1];
  }
  return it[4] != it[5];
}

bool loom_dispatch_match_pool(const loom_func *f, const loom_stmt *pad_loop,
                              const loom_stmt *loop, loom_pool *out, char *why, size_t n) {
  dispatch_nest ns;
  int64_t ext[6];
  if (!dispatch_take_nest(loop, &ns, why, n))
    return false;
  if (ns.n_loops != 6 || !ns.realize)
    return dispatch_refuse(why, n, "is not six loops around one block");
  const loom_stmt *s = ns.realize;
  const loom_block *b = s->u.realize.block;
  if (s->u.realize.predicate || b->n_iter_vars != 6 || b->n_alloc_buffers ||
      b->n_match_buffers || b->n_writes != 1)
    return dispatch_refuse(why, n, "block '%s' is not one output over an iter per loop",
                           b->name);
  if (!dispatch_bind_iters(ns.loops, ns.n_loops, ns.realize, ext, why, n))
    return false;
  const loom_stmt *st = b->body;
  if (!st || st->kind != LOOM_STMT_STORE || st->u.store.n_indices != 4)
    return dispatch_refuse(why, n, "block '%s' is not one store to Y[n, h, w, c]", b->name);
  const loom_buffer *y = st->u.store.buffer;
  const loom_expr *const *yi = (const loom_expr *const *)st->u.store.indices;
  int n_spatial = 0;
  for (int d = 0; d < 4; d++) {
    int t = dispatch_iter_of(b, yi[d]);
    n_spatial += t >= 0 && b->iter_vars[t].kind == LOOM_ITER_SPATIAL;
  }
  const loom_expr *v = st->u.store.value;
  if (n_spatial != 4 || !v || v->kind != LOOM_EXPR_MAX)
    return dispatch_refuse(why, n, "block '%s' does not take a maximum into Y at its spatial "
                                   "iters", b->name);
  /* max(Y, P[...]), either way round. */
  const loom_expr *acc = v->u.bin.a, *p = v->u.bin.b;
  if (!(acc->kind == LOOM_EXPR_LOAD && acc->u.load.buffer == y)) {
    acc = v->u.bin.b;
    p = v->u.bin.a;
  }
  bool is_acc = acc->kind == LOOM_EXPR_LOAD && acc->u.load.buffer == y &&
                acc->u.load.n_indices == 4;
  for (int d = 0; is_acc && d < 4; d++)
    is_acc = dispatch_is_var(acc->u.load.indices[d], yi[d]->u.var);
  const loom_stmt *in = b->init;
  bool is_init = in && in->kind == LOOM_STMT_STORE && in->u.store.buffer == y &&
                 in->u.store.n_indices == 4 && is_lowest(in->u.store.value);
  for (int d = 0; is_init && d < 4; d++)
    is_init = dispatch_is_var(in->u.store.indices[d], yi[d]->u.var);
  if (!is_acc || p->kind != LOOM_EXPR_LOAD || p->u.load.n_indices != 4 || !is_init)
    return dispatch_refuse(why, n, "block '%s' does not compute Y = max(Y, P[...]) from the "
                                   "lowest float32", b->name);
  const dispatch_layout *L = NULL;
  int it[6];
  int64_t stride[2], dil[2];
  for (int l = 0; l < 2 && !L; l++)
    if (match_layout(b, &dispatch_layouts[l], yi, p, it, stride, dil))
      L = &dispatch_layouts[l];
  if (!L)
    return dispatch_refuse(why, n, "block '%s' does not pool P[n, h*sh + rh*dh, w*sw + rw*dw, "
                                   "c] (or NCHW) into Y[n, h, w, c]", b->name);
  const loom_buffer *bp = p->u.load.buffer;
  if (!dispatch_is_f32(y->dtype) || !dispatch_is_f32(bp->dtype) || bp == y)
    return dispatch_refuse(why, n, "block '%s' is not float32 throughout", b->name);
  loom_pool c = {.y = y, .x = bp, .is_nchw = L == &dispatch_layouts[1],
                 .routine = "dnnl_pooling_forward"};
  c.n = ext[it[0]];
  c.oh = ext[it[1]];
  c.ow = ext[it[2]];
  c.c = ext[it[3]];
  c.kh = ext[it[4]];
  c.kw = ext[it[5]];
  int64_t ys[4], ps[4];
  ys[L->n] = c.n;
  ys[L->h] = c.oh;
  ys[L->w] = c.ow;
  ys[L->c] = c.c;
  int64_t reach[2];
  for (int i = 0; i < 2; i++) {
    c.stride[i] = stride[i];
    c.dilation[i] = dil[i];
  }
  reach[0] = (c.oh - 1) * c.stride[0] + (c.kh - 1) * c.dilation[0] + 1;
  reach[1] = (c.ow - 1) * c.stride[1] + (c.kw - 1) * c.dilation[1] + 1;
  if (!dispatch_is_compact(y, ys, 4) || !dispatch_shape4(bp, ps) || ps[L->n] != c.n ||
      ps[L->c] != c.c || ps[L->h] < reach[0] || ps[L->w] < reach[1])
    return dispatch_refuse(why, n, "block '%s' does not cover whole compact global buffers of "
                                   "constant shape", b->name);
  if (pad_loop && loom_ir_buffer_uses(pad_loop, bp->data).stores) {
    dispatch_pad dp;
    if (!dispatch_match_pad(f, pad_loop, loop, L, bp, ps, -(double)FLT_MAX,
                            "the lowest float32", &dp, why, n))
      return false;
    c.x = dp.x;
    c.pad = bp;
    c.pad_lo[0] = dp.lo[0];
    c.pad_lo[1] = dp.lo[1];
  }
  loom_ir_is_const_int(c.x->shape[L->h], &c.ih);
  loom_ir_is_const_int(c.x->shape[L->w], &c.iw);
  int64_t in_ext[2] = {c.ih, c.iw}, out_ext[2] = {c.oh, c.ow}, k[2] = {c.kh, c.kw};
  for (int i = 0; i < 2; i++) {
    int64_t hi = reach[i] - in_ext[i] - c.pad_lo[i];
    c.pad_hi[i] = hi > 0 ? hi : 0;
    if (c.pad_lo[i] >= k[i] || c.pad_hi[i] >= k[i]) /* a window of padding alone */
      return dispatch_refuse(why, n, "block '%s' pads by the window's extent or more",
                             b->name);
    if ((in_ext[i] + c.pad_lo[i] + c.pad_hi[i] - (k[i] - 1) * c.dilation[i] - 1) / c.stride[i] +
            1 != out_ext[i])
      return dispatch_refuse(why, n, "block '%s' computes a part of the pool that oneDNN's "
                                     "shapes do not describe", b->name);
  }
  *out = c;
  return true;
}
