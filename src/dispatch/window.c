/* The pieces the conv and pool patterns share (conv.c, pool.c): the
 * layouts, nests of loops down to one block, affine indices, and the
 * nest before that pads the input. */
#include "dispatch/dispatch_impl.h"

const dispatch_layout dispatch_layouts[2] = {
    {"NHWC", 0, 3, 1, 2, 0, 1, 2, 3}, /* weights HWIO */
    {"NCHW", 0, 1, 2, 3, 2, 3, 1, 0}, /* weights OIHW */
};

bool dispatch_take_nest(const loom_stmt *loop, dispatch_nest *out, char *why, size_t n) {
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


int dispatch_iter_of(const loom_block *b, const loom_expr *e) {
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

bool dispatch_is_affine(const loom_expr *e, const loom_var *v0, const loom_var *v1, int64_t a[2],
                      int64_t *c0) {
  const loom_var *v[2] = {v0, v1};
  a[0] = a[1] = *c0 = 0;
  return add_affine(e, v, 1, a, c0);
}

bool dispatch_is_f32(loom_dtype t) {
  return t.code == LOOM_DT_FLOAT && t.bits == 32 && t.lanes == 1;
}

bool dispatch_shape4(const loom_buffer *b, int64_t *shape) {
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

bool dispatch_match_pad(const loom_func *f, const loom_stmt *pad_loop, const loom_stmt *user,
                        const dispatch_layout *L, const loom_buffer *p, const int64_t *ps,
                        double fill, const char *fill_name, dispatch_pad *out, char *why,
                        size_t n) {
  dispatch_nest ns;
  int64_t ext[7];
  if (!dispatch_take_nest(pad_loop, &ns, why, n))
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
    int t = dispatch_iter_of(b, st->u.store.indices[at[d]]);
    if (t < 0 || b->iter_vars[t].kind != LOOM_ITER_SPATIAL || ext[t] != ps[at[d]])
      return dispatch_refuse(why, n, "block '%s' does not store the whole of '%s' at its "
                                     "iters", b->name, p->name);
    v[d] = b->iter_vars[t].var;
  }
  /* The value: X[...] inside [lo, hi) along h and w, fill outside. */
  const loom_expr *val = st->u.store.value, *x = val;
  int64_t lo[2] = {0, 0}, hi[2] = {ps[L->h], ps[L->w]};
  if (val->kind == LOOM_EXPR_CALL && val->u.call.op == LOOM_OP_IF_THEN_ELSE &&
      val->u.call.n_args == 3) {
    x = val->u.call.args[1];
    const loom_expr *e = val->u.call.args[2];
    if (e->kind != LOOM_EXPR_FLOAT || e->u.float_value != fill)
      return dispatch_refuse(why, n, "block '%s' pads with something other than %s", b->name,
                             fill_name);
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
      !dispatch_is_affine(xi[L->h], v[2], NULL, a, &c0[0]) || a[0] != 1 || c0[0] != -lo[0] ||
      !dispatch_is_affine(xi[L->w], v[3], NULL, a, &c0[1]) || a[0] != 1 || c0[1] != -lo[1])
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
  if (!dispatch_is_f32(bx->dtype) || !dispatch_is_f32(val->dtype) || bx == p)
    return dispatch_refuse(why, n, "block '%s' is not a float32 copy of another buffer",
                           b->name);
  /* The call replaces both nests: P must be the function's own, written
   * here and read by the user alone. */
  loom_ir_uses all = loom_ir_buffer_uses(f->body, p->data),
               in_pad = loom_ir_buffer_uses(pad_loop, p->data),
               in_user = loom_ir_buffer_uses(user, p->data);
  if (dispatch_is_param(f, p))
    return dispatch_refuse(why, n, "the padded '%s' is a parameter", p->name);
  if (all.loads != in_user.loads || all.stores != in_pad.stores)
    return dispatch_refuse(why, n, "the padded '%s' is read or written by another nest too",
                           p->name);
  out->x = bx;
  out->lo[0] = lo[0];
  out->lo[1] = lo[1];
  return true;
}

