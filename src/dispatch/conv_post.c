/* The nests after a convolution that oneDNN computes in the same call: a
 * bias per output channel, then additions of a tensor and ReLUs (its
 * post-ops), as a network's fused function has them after the conv
 * (FuseOps puts a conv's elementwise consumers in its function). Each is
 *     Z[n, h, w, c] = Y[n, h, w, c] + B[c]      (first only)
 *     Z[n, h, w, c] = Y[n, h, w, c] + R[n, h, w, c]
 *     Z[n, h, w, c] = T.max(Y[n, h, w, c], T.float32(0))
 * either way round, over the whole of Y, which the nest before writes and
 * only this one reads. */
#include "dispatch/dispatch_impl.h"

#include <string.h>

/* The four loops of a nest, plain and serial (the outermost may carry the
 * mark the pass leaves on a nest it took), and the block at their bottom. */
static const loom_stmt *four_loops(const loom_stmt *loop, const loom_stmt *loops[4]) {
  const loom_stmt *s = loop;
  for (int d = 0; d < 4; d++) {
    if (!s || s->kind != LOOM_STMT_FOR || s->u.loop.kind != LOOM_FOR_SERIAL)
      return NULL;
    int n = s->u.loop.n_annotations;
    if (n > 1 || (n == 1 && (d > 0 || strcmp(s->u.loop.annotations[0].key, "loom.taken_by"))))
      return NULL;
    loops[d] = s;
    s = s->u.loop.body;
  }
  return s && s->kind == LOOM_STMT_BLOCK_REALIZE ? s : NULL;
}

/* Whether e loads b at the block's four iters, in order. */
static bool loads_at_iters(const loom_expr *e, const loom_buffer *b, const loom_block *k) {
  if (!e || e->kind != LOOM_EXPR_LOAD || e->u.load.buffer != b || e->u.load.n_indices != 4)
    return false;
  for (int d = 0; d < 4; d++)
    if (!dispatch_is_var(e->u.load.indices[d], k->iter_vars[d].var))
      return false;
  return true;
}

/* One step after the conv: the nest under loop reads y (of shape ys) and
 * stores *z; *kind is what it does, *src the bias or the tensor added. */
typedef enum { STEP_BIAS, STEP_ADD, STEP_RELU } step_kind;

static bool match_step(const loom_stmt *loop, const loom_buffer *y, const int64_t ys[4],
                       int64_t co, step_kind *kind, const loom_buffer **src,
                       const loom_buffer **z) {
  const loom_stmt *loops[4];
  const loom_stmt *r = four_loops(loop, loops);
  int64_t ext[4];
  if (!r || r->u.realize.predicate)
    return false;
  const loom_block *k = r->u.realize.block;
  if (k->n_iter_vars != 4 || k->init || k->n_alloc_buffers || k->n_match_buffers ||
      k->n_writes != 1 || !dispatch_bind_iters(loops, 4, r, ext, NULL, 0))
    return false;
  for (int d = 0; d < 4; d++)
    if (k->iter_vars[d].kind != LOOM_ITER_SPATIAL || ext[d] != ys[d])
      return false;
  const loom_stmt *st = k->body;
  if (!st || st->kind != LOOM_STMT_STORE || st->u.store.n_indices != 4)
    return false;
  *z = st->u.store.buffer;
  for (int d = 0; d < 4; d++)
    if (!dispatch_is_var(st->u.store.indices[d], k->iter_vars[d].var))
      return false;
  if (*z == y || !dispatch_is_f32((*z)->dtype) || !dispatch_is_compact(*z, ys, 4))
    return false;
  const loom_expr *v = st->u.store.value;
  if (!v || (v->kind != LOOM_EXPR_ADD && v->kind != LOOM_EXPR_MAX))
    return false;
  const loom_expr *other = loads_at_iters(v->u.bin.a, y, k)   ? v->u.bin.b
                           : loads_at_iters(v->u.bin.b, y, k) ? v->u.bin.a
                                                              : NULL;
  if (!other)
    return false;
  if (v->kind == LOOM_EXPR_MAX) {
    *kind = STEP_RELU;
    *src = NULL;
    return dispatch_is_zero(other);
  }
  if (other->kind != LOOM_EXPR_LOAD)
    return false;
  *src = other->u.load.buffer;
  if (*src == y || *src == *z || !dispatch_is_f32((*src)->dtype))
    return false;
  if (other->u.load.n_indices == 1) { /* B[c]: the channels are last (NHWC) */
    *kind = STEP_BIAS;
    return dispatch_is_var(other->u.load.indices[0], k->iter_vars[3].var) &&
           dispatch_is_compact(*src, &co, 1);
  }
  *kind = STEP_ADD;
  return loads_at_iters(other, *src, k) && dispatch_is_compact(*src, ys, 4);
}

int loom_dispatch_match_conv_post(const loom_func *f, const loom_stmt *const *nests, int n,
                                  loom_conv *c) {
  const loom_stmt *const *next = nests + 1;
  n--;
  if (c->is_nchw || c->beta != 0)
    return 0;
  int64_t ys[4] = {c->n, c->oh, c->ow, c->co};
  loom_conv got = *c;
  const loom_buffer *y = c->y;
  int k = 0;
  got.n_post = 0;
  got.bias = NULL;
  for (; k < n && got.n_post < LOOM_CONV_MAX_POST; k++) {
    step_kind kind;
    const loom_buffer *src, *z;
    if (!next[k] || !match_step(next[k], y, ys, c->co, &kind, &src, &z))
      break;
    if (kind == STEP_BIAS && k > 0)
      break; /* oneDNN adds its bias before the post-ops */
    /* y is the function's own, written by the nest before alone (the
     * conv reads it too, accumulating) and read by this one besides: the
     * call never writes it. */
    loom_ir_uses all = loom_ir_buffer_uses(f->body, y->data),
                 here = loom_ir_buffer_uses(next[k], y->data),
                 before = loom_ir_buffer_uses(nests[k], y->data);
    if (dispatch_is_param(f, y) || all.loads != here.loads + before.loads ||
        all.stores != before.stores)
      break;
    if (kind == STEP_BIAS)
      got.bias = src;
    else
      got.post[got.n_post++] = (loom_conv_post){
          kind == STEP_ADD ? LOOM_CONV_POST_ADD : LOOM_CONV_POST_RELU, src};
    got.out = z;
    y = z;
  }
  if (k > 0)
    *c = got;
  return k;
}
