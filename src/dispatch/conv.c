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

/* Where each axis sits in the data (P, X and Y) and in the weights. */
typedef struct layout {
  const char *name;
  int n, c, h, w;     /* in P, X and Y */
  int kh, kw, ci, co; /* in W */
} layout;

static const layout layouts[2] = {
    {"NHWC", 0, 3, 1, 2, 0, 1, 2, 3}, /* weights HWIO */
    {"NCHW", 0, 1, 2, 3, 2, 3, 1, 0}, /* weights OIHW */
};

/* Perfectly nested loops down to one block: at most 7 of them. */
typedef struct nest {
  const loom_stmt *loops[7];
  int n_loops;
  const loom_stmt *realize; /* the block at the bottom; NULL: none */
} nest;

static bool take_nest(const loom_stmt *loop, nest *out, char *why, size_t n) {
  const loom_stmt *s = loop;
  out->n_loops = 0;
  out->realize = NULL;
  while (s && s->kind == LOOM_STMT_FOR && out->n_loops < 7) {
    if (s->u.loop.kind != LOOM_FOR_SERIAL || s->u.loop.n_annotations)
      return dispatch_refuse(why, n, "loop '%s' is not a plain serial loop",
                             s->u.loop.var->name);
    out->loops[out->n_loops++] = s;
    s = s->u.loop.body;
  }
  if (s && s->kind == LOOM_STMT_BLOCK_REALIZE)
    out->realize = s;
  return true;
}


/* The iter whose variable e is; -1 when e is not one. */
static int iter_of(const loom_block *b, const loom_expr *e) {
  for (int t = 0; t < b->n_iter_vars; t++)
    if (dispatch_is_var(e, b->iter_vars[t].var))
      return t;
  return -1;
}

/* Adds mult * e to the form c0 + a[0] v[0] + a[1] v[1]: false when e is
 * not such a sum (products by constants, sums and differences of the
 * variables and constants). */
static bool add_affine(const loom_expr *e, const loom_var *const *v, int64_t mult, int64_t *a,
                       int64_t *c0) {
  switch (e->kind) {
  case LOOM_EXPR_INT:
    *c0 += mult * e->u.int_value;
    return true;
  case LOOM_EXPR_VAR:
    for (int i = 0; i < 2; i++)
      if (v[i] && e->u.var == v[i]) {
        a[i] += mult;
        return true;
      }
    return false;
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB:
    return add_affine(e->u.bin.a, v, mult, a, c0) &&
           add_affine(e->u.bin.b, v, e->kind == LOOM_EXPR_SUB ? -mult : mult, a, c0);
  case LOOM_EXPR_MUL:
    if (e->u.bin.b->kind == LOOM_EXPR_INT)
      return add_affine(e->u.bin.a, v, mult * e->u.bin.b->u.int_value, a, c0);
    if (e->u.bin.a->kind == LOOM_EXPR_INT)
      return add_affine(e->u.bin.b, v, mult * e->u.bin.a->u.int_value, a, c0);
    return false;
  default:
    return false;
  }
}

/* Whether e is c0 + a[0] v0 + a[1] v1 (v1 may be NULL), in any order. */
static bool is_affine(const loom_expr *e, const loom_var *v0, const loom_var *v1, int64_t a[2],
                      int64_t *c0) {
  const loom_var *v[2] = {v0, v1};
  a[0] = a[1] = *c0 = 0;
  return add_affine(e, v, 1, a, c0);
}

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

/* Whether t is float32, one lane. */
static bool is_f32(loom_dtype t) {
  return t.code == LOOM_DT_FLOAT && t.bits == 32 && t.lanes == 1;
}

/* The constant shape of b, ndim 4; false when it is not compact or not
 * constant. */
static bool shape4(const loom_buffer *b, int64_t *shape) {
  if (b->ndim != 4)
    return false;
  for (int i = 0; i < 4; i++)
    if (!loom_ir_is_const_int(b->shape[i], &shape[i]) || shape[i] <= 0)
      return false;
  return dispatch_is_compact(b, shape, 4);
}

/* ---- the pad nest --------------------------------------------------------------- */

/* Narrows [lo[i], hi[i]) by one comparison of the iter var v[i] with a
 * constant, either side: false when cond is not such a comparison. */
static bool narrow(const loom_expr *cond, const loom_var *const *v, int64_t *lo, int64_t *hi) {
  loom_expr_kind k = cond->kind;
  if (k != LOOM_EXPR_LT && k != LOOM_EXPR_LE && k != LOOM_EXPR_GT && k != LOOM_EXPR_GE)
    return false;
  const loom_expr *x = cond->u.bin.a, *c = cond->u.bin.b;
  if (x->kind == LOOM_EXPR_INT) { /* c OP v: the same as v OP' c */
    const loom_expr *t = x;
    x = c;
    c = t;
    k = k == LOOM_EXPR_LT ? LOOM_EXPR_GT : k == LOOM_EXPR_LE ? LOOM_EXPR_GE
        : k == LOOM_EXPR_GT ? LOOM_EXPR_LT : LOOM_EXPR_LE;
  }
  if (c->kind != LOOM_EXPR_INT)
    return false;
  int i = dispatch_is_var(x, v[0]) ? 0 : dispatch_is_var(x, v[1]) ? 1 : -1;
  if (i < 0)
    return false;
  int64_t b = c->u.int_value;
  if (k == LOOM_EXPR_GE || k == LOOM_EXPR_GT) {
    b += k == LOOM_EXPR_GT;
    lo[i] = b > lo[i] ? b : lo[i];
  } else {
    b += k == LOOM_EXPR_LE;
    hi[i] = b < hi[i] ? b : hi[i];
  }
  return true;
}

/* The rows and columns inside cond: a conjunction of comparisons, each or
 * the whole possibly wrapped in T.likely. */
static bool inside(const loom_expr *cond, const loom_var *const *v, int64_t *lo, int64_t *hi) {
  if (cond->kind == LOOM_EXPR_CALL && cond->u.call.op == LOOM_OP_LIKELY &&
      cond->u.call.n_args == 1)
    return inside(cond->u.call.args[0], v, lo, hi);
  if (cond->kind == LOOM_EXPR_AND)
    return inside(cond->u.bin.a, v, lo, hi) && inside(cond->u.bin.b, v, lo, hi);
  return narrow(cond, v, lo, hi);
}

/* Whether the nest under pad_loop writes p as X with zeros around it along
 * h and w, where p's shape is ps; *c gets X and the zeros before. */
static bool match_pad(const loom_func *f, const loom_stmt *pad_loop, const loom_stmt *conv_loop,
                      const layout *L, const loom_buffer *p, const int64_t *ps, loom_conv *c,
                      char *why, size_t n) {
  nest ns;
  int64_t ext[7];
  if (!take_nest(pad_loop, &ns, why, n))
    return false;
  const loom_block *b = ns.realize ? ns.realize->u.realize.block : NULL;
  if (ns.n_loops != 4 || !b || b->n_iter_vars != 4 || ns.realize->u.realize.predicate ||
      b->n_writes != 1 || b->init || b->n_alloc_buffers || b->n_match_buffers)
    return dispatch_refuse(why, n, "the nest that writes '%s' is not four loops around one "
                                   "block", p->name);
  if (!dispatch_bind_iters(ns.loops, ns.n_loops, ns.realize, ext, why, n))
    return false;
  const loom_stmt *st = b->body;
  if (!st || st->kind != LOOM_STMT_STORE || st->u.store.buffer != p ||
      st->u.store.n_indices != 4)
    return dispatch_refuse(why, n, "block '%s' is not one store to '%s'", b->name, p->name);
  const loom_var *v[4]; /* the iters at P's n, c, h, w */
  int at[4] = {L->n, L->c, L->h, L->w};
  for (int d = 0; d < 4; d++) {
    int t = iter_of(b, st->u.store.indices[at[d]]);
    if (t < 0 || b->iter_vars[t].kind != LOOM_ITER_SPATIAL || ext[t] != ps[at[d]])
      return dispatch_refuse(why, n, "block '%s' does not store the whole of '%s' at its "
                                     "iters", b->name, p->name);
    v[d] = b->iter_vars[t].var;
  }
  /* The value: X[...] inside [lo, hi) along h and w, zero outside. */
  const loom_expr *val = st->u.store.value, *x = val;
  int64_t lo[2] = {0, 0}, hi[2] = {ps[L->h], ps[L->w]};
  if (val->kind == LOOM_EXPR_CALL && val->u.call.op == LOOM_OP_IF_THEN_ELSE &&
      val->u.call.n_args == 3) {
    x = val->u.call.args[1];
    if (!dispatch_is_zero(val->u.call.args[2]))
      return dispatch_refuse(why, n, "block '%s' pads with something other than zero",
                             b->name);
    if (!inside(val->u.call.args[0], v + 2, lo, hi))
      return dispatch_refuse(why, n, "block '%s' does not pad along h and w alone, with "
                                     "bounds lo <= h < hi", b->name);
  }
  if (x->kind != LOOM_EXPR_LOAD || x->u.load.n_indices != 4)
    return dispatch_refuse(why, n, "block '%s' does not pad a buffer", b->name);
  const loom_buffer *bx = x->u.load.buffer;
  const loom_expr *const *xi = (const loom_expr *const *)x->u.load.indices;
  int64_t a[2], c0[2];
  if (!dispatch_is_var(xi[L->n], v[0]) || !dispatch_is_var(xi[L->c], v[1]) ||
      !is_affine(xi[L->h], v[2], NULL, a, &c0[0]) || a[0] != 1 || c0[0] != -lo[0] ||
      !is_affine(xi[L->w], v[3], NULL, a, &c0[1]) || a[0] != 1 || c0[1] != -lo[1])
    return dispatch_refuse(why, n, "block '%s' does not read X[n, h - lo_h, w - lo_w, c] "
                                   "inside its bounds", b->name);
  int64_t xs[4];
  xs[L->n] = ps[L->n];
  xs[L->c] = ps[L->c];
  xs[L->h] = hi[0] - lo[0];
  xs[L->w] = hi[1] - lo[1];
  if (lo[0] < 0 || lo[1] < 0 || xs[L->h] <= 0 || xs[L->w] <= 0 ||
      !dispatch_is_compact(bx, xs, 4))
    return dispatch_refuse(why, n, "block '%s' does not pad the whole of a compact global "
                                   "buffer of constant shape", b->name);
  if (!is_f32(bx->dtype) || !is_f32(val->dtype) || bx == p)
    return dispatch_refuse(why, n, "block '%s' is not a float32 copy of another buffer",
                           b->name);
  /* The call replaces both nests: P must be the function's own, written
   * here and read by the conv alone. */
  loom_ir_uses all = loom_ir_buffer_uses(f->body, p->data),
               in_pad = loom_ir_buffer_uses(pad_loop, p->data),
               in_conv = loom_ir_buffer_uses(conv_loop, p->data);
  if (dispatch_is_param(f, p))
    return dispatch_refuse(why, n, "the padded '%s' is a parameter", p->name);
  if (all.loads != in_conv.loads || all.stores != in_pad.stores)
    return dispatch_refuse(why, n, "the padded '%s' is read or written by another nest too",
                           p->name);
  c->x = bx;
  c->pad = p;
  c->pad_lo[0] = lo[0];
  c->pad_lo[1] = lo[1];
  return true;
}

/* ---- the conv nest -------------------------------------------------------------- */

/* The conv's factors and iters, named by layout L; false when the block
 * does not convolve in that layout. it[] holds the iters of n, h, w, co,
 * kh, kw, ci; s and d the strides and dilations. */
static bool match_layout(const loom_block *b, const layout *L, const loom_expr *store_idx[4],
                         const loom_expr *p, const loom_expr *w, int it[7], int64_t s[2],
                         int64_t d[2]) {
  const loom_expr *const *pi = (const loom_expr *const *)p->u.load.indices;
  const loom_expr *const *wi = (const loom_expr *const *)w->u.load.indices;
  int at_y[4] = {L->n, L->h, L->w, L->c}, at_w[3] = {L->kh, L->kw, L->ci};
  for (int i = 0; i < 4; i++)
    it[i] = iter_of(b, store_idx[at_y[i]]);
  if (iter_of(b, wi[L->co]) != it[3])
    return false;
  for (int i = 0; i < 3; i++) {
    it[4 + i] = iter_of(b, wi[at_w[i]]);
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
    if (!is_affine(pi[at], b->iter_vars[it[1 + i]].var, b->iter_vars[it[4 + i]].var, a, &c0) ||
        a[0] <= 0 || a[1] <= 0 || c0 != 0)
      return false;
    s[i] = a[0];
    d[i] = a[1];
  }
  return true;
}

bool loom_dispatch_match_conv(const loom_func *f, const loom_stmt *pad_loop,
                              const loom_stmt *loop, loom_conv *out, char *why, size_t n) {
  nest ns;
  int64_t ext[7];
  if (!take_nest(loop, &ns, why, n))
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
    int t = iter_of(b, st->u.store.indices[d]);
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
  const layout *L = NULL;
  const loom_expr *p = NULL, *w = NULL;
  int it[7];
  int64_t stride[2], dil[2];
  for (int l = 0; l < 2 && !L; l++)
    for (int o = 0; o < 2 && !L; o++) {
      p = o ? prod->u.bin.b : prod->u.bin.a;
      w = o ? prod->u.bin.a : prod->u.bin.b;
      if (match_layout(b, &layouts[l], yi, p, w, it, stride, dil))
        L = &layouts[l];
    }
  if (!L) {
    for (int o = 0; o < 2; o++) { /* a channel index that mentions co: groups */
      const loom_expr *q = o ? prod->u.bin.b : prod->u.bin.a;
      for (int l = 0; l < 2; l++) {
        const loom_expr *ci = q->u.load.indices[layouts[l].c];
        int t = iter_of(b, yi[layouts[l].c]);
        if (t >= 0 && divides(ci, b->iter_vars[t].var))
          return dispatch_refuse(why, n, "block '%s' convolves in groups", b->name);
      }
    }
    return dispatch_refuse(why, n, "block '%s' does not compute Y[n, h, w, co] += "
                                   "P[n, h*sh + rh*dh, w*sw + rw*dw, ci] * W[rh, rw, ci, co] "
                                   "(or NCHW with OIHW)", b->name);
  }
  const loom_buffer *bp = p->u.load.buffer, *bw = w->u.load.buffer;
  if (!is_f32(y->dtype) || !is_f32(bp->dtype) || !is_f32(bw->dtype) || !is_f32(v->dtype))
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
  loom_conv c = {.y = y, .w = bw, .is_nchw = L == &layouts[1], .beta = beta,
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
  if (!dispatch_is_compact(y, ys, 4) || !dispatch_is_compact(bw, ws, 4) || !shape4(bp, ps) ||
      ps[L->n] != c.n || ps[L->c] != c.ci || ps[L->h] < reach_h || ps[L->w] < reach_w)
    return dispatch_refuse(why, n, "block '%s' does not cover whole compact global buffers of "
                                   "constant shape", b->name);
  /* The padding: the nest before writes P, or P is the input. */
  c.x = bp;
  if (pad_loop && loom_ir_buffer_uses(pad_loop, bp->data).stores) {
    if (!match_pad(f, pad_loop, loop, L, bp, ps, &c, why, n))
      return false;
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
