/* The conv2d pattern: seven loops (serial, plain, in any order) around one
 * block that computes, with NHWC input and HWIO weights,
 *     Y[n, h, w, co] = Y[n, h, w, co] + P[n, h*sh + rh*dh, w*sw + rw*dw, ci] * W[rh, rw, ci, co]
 * (or the same with NCHW input and OIHW weights), with an init of zero or
 * none. P is the input itself, or an intermediate that the nest just
 * before writes as a zero padding of the input,
 *     P[n, h, w, c] = T.if_then_else(lo_h <= h and h < hi_h and lo_w <= w and w < hi_w,
 *                                    X[n, h - lo_h, w - lo_w, c], T.float32(0))
 * and that nothing else reads: oneDNN takes the padding as arguments, so
 * the two nests are one call. */
#include "dispatch/dispatch_impl.h"

/* Whether e mentions v, through index arithmetic. */
static bool mentions(const loom_expr *e, const loom_var *v) {
  if (!e)
    return false;
  if (e->kind == LOOM_EXPR_VAR)
    return e->u.var == v;
  if (e->kind >= LOOM_EXPR_ADD && e->kind <= LOOM_EXPR_MAX)
    return mentions(e->u.bin.a, v) || mentions(e->u.bin.b, v);
  return false;
}

/* Whether e divides v (floor division) somewhere: a group's channels,
 * co // (co per group) * (ci per group) + ci. */
static bool divides(const loom_expr *e, const loom_var *v) {
  if (!e || e->kind < LOOM_EXPR_ADD || e->kind > LOOM_EXPR_MAX)
    return false;
  if (e->kind == LOOM_EXPR_FLOORDIV && mentions(e->u.bin.a, v))
    return true;
  return divides(e->u.bin.a, v) || divides(e->u.bin.b, v);
}

/* ---- the conv nest -------------------------------------------------------------- */

/* The conv's factors and iters, named by layout L; false when the block
 * does not convolve in that layout. it[] holds the iters of n, h, w, co,
 * kh, kw, ci; s and d the strides and dilations. */
static bool match_layout(const loom_block *b, const dispatch_layout *L, const loom_expr *store_idx[4],
                         const loom_expr *p, const loom_expr *w, int it[7], int64_t s[2],
                         int64_t d[2]) {
  const loom_expr *const *pi = (const loom_expr *const *)p->u.load.indices;
  const loom_expr *const *wi = (const loom_expr *const *)w->u.load.indices;
  int at_y[4] = {L->n, L->h, L->w, L->c}, at_w[3] = {L->kh, L->kw, L->ci};
  for (int i = 0; i < 4; i++)
    it[i] = dispatch_iter_of(b, store_idx[at_y[i]]);
  if (dispatch_iter_of(b, wi[L->co]) != it[3])
    return false;
  for (int i = 0; i < 3; i++) {
    it[4 + i] = dispatch_iter_of(b, wi[at_w[i]]);
    if (it[4 + i] < 0 || b->iter_vars[it[4 + i]].kind != LOOM_ITER_REDUCE)
      return false;
  }
  if (it[4] == it[5] || it[4] == it[6] || it[5] == it[6])
    return false;
  if (!dispatch_is_var(pi[L->n], b->iter_vars[it[0]].var) ||
      !dispatch_is_var(pi[L->c], b->iter_vars[it[6]].var))
    return false;
  int64_t a[2], c0;
  for (int i = 0; i < 2; i++) {
    int at = i ? L->w : L->h;
    if (!dispatch_is_affine(pi[at], b->iter_vars[it[1 + i]].var, b->iter_vars[it[4 + i]].var, a, &c0) ||
        a[0] <= 0 || a[1] <= 0 || c0 != 0)
      return false;
    s[i] = a[0];
    d[i] = a[1];
  }
  return true;
}

bool loom_dispatch_match_conv(const loom_func *f, const loom_stmt *pad_loop,
                              const loom_stmt *loop, loom_conv *out, char *why, size_t n) {
  dispatch_nest ns;
  int64_t ext[7];
  if (!dispatch_take_nest(loop, &ns, why, n))
    return false;
  if (ns.n_loops != 7 || !ns.realize)
    return dispatch_refuse(why, n, "is not seven loops around one block");
  const loom_stmt *s = ns.realize;
  const loom_block *b = s->u.realize.block;
  if (s->u.realize.predicate || b->n_iter_vars != 7 || b->n_alloc_buffers ||
      b->n_match_buffers || b->n_writes != 1)
    return dispatch_refuse(why, n, "block '%s' is not one output over an iter per loop",
                           b->name);
  if (!dispatch_bind_iters(ns.loops, ns.n_loops, ns.realize, ext, why, n))
    return false;
  int n_spatial = 0;
  for (int t = 0; t < 7; t++)
    n_spatial += b->iter_vars[t].kind == LOOM_ITER_SPATIAL;
  for (int t = 0; t < 7; t++)
    if (b->iter_vars[t].kind != LOOM_ITER_SPATIAL && b->iter_vars[t].kind != LOOM_ITER_REDUCE)
      n_spatial = -1;
  if (n_spatial != 4)
    return dispatch_refuse(why, n, "block '%s' is not four spatial iters and three reductions",
                           b->name);
  /* The store: Y at the four spatial iters, each once. */
  const loom_stmt *st = b->body;
  if (!st || st->kind != LOOM_STMT_STORE || st->u.store.n_indices != 4)
    return dispatch_refuse(why, n, "block '%s' is not one store to Y[n, h, w, co]", b->name);
  const loom_buffer *y = st->u.store.buffer;
  const loom_expr *yi[4];
  unsigned seen = 0;
  for (int d = 0; d < 4; d++) {
    int t = dispatch_iter_of(b, st->u.store.indices[d]);
    if (t < 0 || b->iter_vars[t].kind != LOOM_ITER_SPATIAL || (seen >> t & 1))
      return dispatch_refuse(why, n, "block '%s' does not store Y at its spatial iters",
                             b->name);
    seen |= 1u << t;
    yi[d] = st->u.store.indices[d];
  }
  /* Y + P * W, either way round. */
  const loom_expr *v = st->u.store.value;
  if (!v || v->kind != LOOM_EXPR_ADD)
    return dispatch_refuse(why, n, "block '%s' does not add a product to Y", b->name);
  const loom_expr *acc = v->u.bin.a, *prod = v->u.bin.b;
  bool is_acc = acc->kind == LOOM_EXPR_LOAD && acc->u.load.buffer == y;
  if (!is_acc) {
    acc = v->u.bin.b;
    prod = v->u.bin.a;
    is_acc = acc->kind == LOOM_EXPR_LOAD && acc->u.load.buffer == y;
  }
  for (int d = 0; is_acc && d < 4; d++)
    is_acc = acc->u.load.n_indices == 4 && dispatch_is_var(acc->u.load.indices[d], yi[d]->u.var);
  if (!is_acc || prod->kind != LOOM_EXPR_MUL || prod->u.bin.a->kind != LOOM_EXPR_LOAD ||
      prod->u.bin.b->kind != LOOM_EXPR_LOAD || prod->u.bin.a->u.load.n_indices != 4 ||
      prod->u.bin.b->u.load.n_indices != 4)
    return dispatch_refuse(why, n, "block '%s' does not add a product of two loads to Y",
                           b->name);
  /* Which factor is P and which W, in which layout. */
  const dispatch_layout *L = NULL;
  const loom_expr *p = NULL, *w = NULL;
  int it[7];
  int64_t stride[2], dil[2];
  for (int l = 0; l < 2 && !L; l++)
    for (int o = 0; o < 2 && !L; o++) {
      p = o ? prod->u.bin.b : prod->u.bin.a;
      w = o ? prod->u.bin.a : prod->u.bin.b;
      if (match_layout(b, &dispatch_layouts[l], yi, p, w, it, stride, dil))
        L = &dispatch_layouts[l];
    }
  if (!L) {
    for (int o = 0; o < 2; o++) { /* a channel index that mentions co: groups */
      const loom_expr *q = o ? prod->u.bin.b : prod->u.bin.a;
      for (int l = 0; l < 2; l++) {
        const loom_expr *ci = q->u.load.indices[dispatch_layouts[l].c];
        int t = dispatch_iter_of(b, yi[dispatch_layouts[l].c]);
        if (t >= 0 && divides(ci, b->iter_vars[t].var))
          return dispatch_refuse(why, n, "block '%s' convolves in groups", b->name);
      }
    }
    return dispatch_refuse(why, n, "block '%s' does not compute Y[n, h, w, co] += "
                                   "P[n, h*sh + rh*dh, w*sw + rw*dw, ci] * W[rh, rw, ci, co] "
                                   "(or NCHW with OIHW)", b->name);
  }
  const loom_buffer *bp = p->u.load.buffer, *bw = w->u.load.buffer;
  if (!dispatch_is_f32(y->dtype) || !dispatch_is_f32(bp->dtype) || !dispatch_is_f32(bw->dtype) || !dispatch_is_f32(v->dtype))
    return dispatch_refuse(why, n, "block '%s' is not float32 throughout", b->name);
  if (bp == y || bw == y)
    return dispatch_refuse(why, n, "block '%s' reads its output as a factor", b->name);
  int beta;
  const loom_stmt *in = b->init;
  bool is_zero_init = in && in->kind == LOOM_STMT_STORE && in->u.store.buffer == y &&
                      in->u.store.n_indices == 4 && dispatch_is_zero(in->u.store.value);
  for (int d = 0; is_zero_init && d < 4; d++)
    is_zero_init = dispatch_is_var(in->u.store.indices[d], yi[d]->u.var);
  if (!in)
    beta = 1;
  else if (is_zero_init)
    beta = 0;
  else
    return dispatch_refuse(why, n, "block '%s' starts Y from something other than zero",
                           b->name);
  loom_conv c = {.y = y, .w = bw, .is_nchw = L == &dispatch_layouts[1], .beta = beta,
                 .routine = "dnnl_convolution_forward"};
  c.n = ext[it[0]];
  c.oh = ext[it[1]];
  c.ow = ext[it[2]];
  c.co = ext[it[3]];
  c.kh = ext[it[4]];
  c.kw = ext[it[5]];
  c.ci = ext[it[6]];
  for (int i = 0; i < 2; i++) {
    c.stride[i] = stride[i];
    c.dilation[i] = dil[i];
  }
  int64_t ys[4], ws[4], ps[4];
  ys[L->n] = c.n;
  ys[L->h] = c.oh;
  ys[L->w] = c.ow;
  ys[L->c] = c.co;
  ws[L->kh] = c.kh;
  ws[L->kw] = c.kw;
  ws[L->ci] = c.ci;
  ws[L->co] = c.co;
  /* P covers what the conv reads: the last row is (oh-1) sh + (kh-1) dh. */
  int64_t reach_h = (c.oh - 1) * c.stride[0] + (c.kh - 1) * c.dilation[0] + 1;
  int64_t reach_w = (c.ow - 1) * c.stride[1] + (c.kw - 1) * c.dilation[1] + 1;
  if (!dispatch_is_compact(y, ys, 4) || !dispatch_is_compact(bw, ws, 4) || !dispatch_shape4(bp, ps) ||
      ps[L->n] != c.n || ps[L->c] != c.ci || ps[L->h] < reach_h || ps[L->w] < reach_w)
    return dispatch_refuse(why, n, "block '%s' does not cover whole compact global buffers of "
                                   "constant shape", b->name);
  /* The padding: the nest before writes P, or P is the input. */
  c.x = bp;
  if (pad_loop && loom_ir_buffer_uses(pad_loop, bp->data).stores) {
    dispatch_pad dp;
    if (!dispatch_match_pad(f, pad_loop, loop, L, bp, ps, 0.0, "zero", &dp, why, n))
      return false;
    c.x = dp.x;
    c.pad = bp;
    c.pad_lo[0] = dp.lo[0];
    c.pad_lo[1] = dp.lo[1];
  }
  loom_ir_is_const_int(c.x->shape[L->h], &c.ih); /* constant: checked above */
  loom_ir_is_const_int(c.x->shape[L->w], &c.iw);
  /* oneDNN's output extent is (ih + lo + hi - ke) / stride + 1, ke the
   * kernel's reach (k - 1) d + 1. The zeros after are those the conv reads;
   * the rows it reads must be all those oneDNN's shapes give. */
  int64_t reach[2] = {reach_h, reach_w}, in_ext[2] = {c.ih, c.iw}, out_ext[2] = {c.oh, c.ow};
  int64_t k_ext[2] = {c.kh, c.kw};
  for (int i = 0; i < 2; i++) {
    int64_t hi = reach[i] - in_ext[i] - c.pad_lo[i];
    int64_t ke = (k_ext[i] - 1) * c.dilation[i] + 1;
    c.pad_hi[i] = hi > 0 ? hi : 0;
    if ((in_ext[i] + c.pad_lo[i] + c.pad_hi[i] - ke) / c.stride[i] + 1 != out_ext[i])
      return dispatch_refuse(why, n, "block '%s' computes a part of the convolution that "
                                     "oneDNN's shapes do not describe", b->name);
  }
  *out = c;
  return true;
}
