/* The dispatch pass on one function, and the mark read back by the C
 * backend. */
#include "loom/dispatch.h"

#include <stdio.h>
#include <string.h>

static const char *const trans_names[4] = {"NN", "NT", "TN", "TT"};

const char *loom_dispatch_gemm_layout(const loom_gemm *g) {
  return trans_names[g->trans_a * 2 + g->trans_b];
}

/* loop with n marks added to its annotations; NULL when out of memory. */
static loom_stmt *with_marks(loom_arena *a, const loom_stmt *loop, const char *const *keys,
                             loom_value *const *vals, int n_marks) {
  int n = loop->u.loop.n_annotations;
  loom_attr *at = loom_arena_alloc(a, (size_t)(n + n_marks) * sizeof *at);
  loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_FOR, loop->loc);
  if (!at || !s)
    return NULL;
  if (n)
    memcpy(at, loop->u.loop.annotations, (size_t)n * sizeof *at);
  for (int i = 0; i < n_marks; i++) {
    if (!vals[i])
      return NULL;
    at[n + i] = (loom_attr){keys[i], vals[i]};
  }
  *s = *loop;
  s->u.loop.annotations = at;
  s->u.loop.n_annotations = n + n_marks;
  return s;
}

static loom_value *int_value(loom_arena *a, int64_t v) {
  return loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT64, v));
}

/* A list of n integers, as TVMScript writes [1, 2]. */
static loom_value *int_list(loom_arena *a, const int64_t *v, int n) {
  loom_value *l = loom_arena_alloc(a, sizeof *l);
  loom_value **items = loom_arena_alloc(a, (size_t)n * sizeof *items);
  if (!l || !items)
    return NULL;
  for (int i = 0; i < n; i++)
    if (!(items[i] = int_value(a, v[i])))
      return NULL;
  *l = (loom_value){.kind = LOOM_VALUE_LIST, .items = items, .n_items = n};
  return l;
}

/* loop with the gemm's mark added to its annotations. */
static loom_stmt *marked(loom_arena *a, const loom_stmt *loop, const loom_gemm *g) {
  static const char *const keys[] = {"loom.library", "loom.gemm", "loom.a",    "loom.b",
                                     "loom.c",       "loom.m",    "loom.n",    "loom.k",
                                     "loom.beta",    "loom.batch", "loom.b_batched"};
  loom_value *vals[] = {
      loom_ir_value_str(a, g->routine),
      loom_ir_value_str(a, loom_dispatch_gemm_layout(g)),
      loom_ir_value_str(a, g->a->name),
      loom_ir_value_str(a, g->b->name),
      loom_ir_value_str(a, g->c->name),
      int_value(a, g->m),
      int_value(a, g->n),
      int_value(a, g->k),
      int_value(a, g->beta),
      int_value(a, g->batch),
      int_value(a, g->is_b_batched),
  };
  return with_marks(a, loop, keys, vals, 11);
}

/* A list of strings, as TVMScript writes ["add:R", "relu"]. */
static loom_value *str_list(loom_arena *a, const char *const *v, int n) {
  loom_value *l = loom_arena_alloc(a, sizeof *l);
  loom_value **items = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *items);
  if (!l || !items)
    return NULL;
  for (int i = 0; i < n; i++)
    if (!v[i] || !(items[i] = loom_ir_value_str(a, v[i])))
      return NULL;
  *l = (loom_value){.kind = LOOM_VALUE_LIST, .items = items, .n_items = n};
  return l;
}

/* The marks a conv and a pool share, added at keys[n], vals[n]: the
 * input, the output, the window's extents, strides, dilations and padding,
 * and the padding nest taken (when pad). The new count. */
static int window_marks(loom_arena *a, const char **keys, loom_value **vals, int n,
                        const loom_buffer *x, const loom_buffer *y, const int64_t ext[6],
                        const int64_t *stride, const int64_t *dilation, const int64_t *lo,
                        const int64_t *hi, const loom_buffer *pad) {
  static const char *const names[] = {"loom.ih", "loom.iw", "loom.oh",
                                      "loom.ow", "loom.kh", "loom.kw"};
  int64_t padding[4] = {lo[0], lo[1], hi[0], hi[1]};
  keys[n] = "loom.x";
  vals[n++] = loom_ir_value_str(a, x->name);
  keys[n] = "loom.y";
  vals[n++] = loom_ir_value_str(a, y->name);
  for (int i = 0; i < 6; i++) {
    keys[n] = names[i];
    vals[n++] = int_value(a, ext[i]);
  }
  keys[n] = "loom.stride";
  vals[n++] = int_list(a, stride, 2);
  keys[n] = "loom.dilation";
  vals[n++] = int_list(a, dilation, 2);
  keys[n] = "loom.padding";
  vals[n++] = int_list(a, padding, 4);
  if (pad) {
    keys[n] = "loom.pad";
    vals[n++] = loom_ir_value_str(a, pad->name);
  }
  return n;
}

/* loop with the convolution's mark added to its annotations: the conv, its
 * padding nest, and the nests after it that the call computes too. */
static loom_stmt *marked_conv(loom_arena *a, const loom_stmt *loop, const loom_conv *c) {
  const char *keys[24] = {"loom.library", "loom.conv", "loom.w", "loom.n",
                          "loom.ci",      "loom.co",   "loom.beta"};
  loom_value *vals[24] = {
      loom_ir_value_str(a, c->routine), loom_ir_value_str(a, c->is_nchw ? "NCHW" : "NHWC"),
      loom_ir_value_str(a, c->w->name), int_value(a, c->n),
      int_value(a, c->ci),              int_value(a, c->co),
      int_value(a, c->beta),
  };
  int64_t ext[6] = {c->ih, c->iw, c->oh, c->ow, c->kh, c->kw};
  int n = window_marks(a, keys, vals, 7, c->x, c->y, ext, c->stride, c->dilation, c->pad_lo,
                       c->pad_hi, c->pad);
  if (c->out) {
    const char *post[LOOM_CONV_MAX_POST];
    for (int i = 0; i < c->n_post; i++)
      post[i] = c->post[i].kind == LOOM_CONV_POST_RELU
                    ? "relu"
                    : loom_arena_printf(a, "add:%s", c->post[i].src->name);
    keys[n] = "loom.out";
    vals[n++] = loom_ir_value_str(a, c->out->name);
    keys[n] = "loom.post";
    vals[n++] = str_list(a, post, c->n_post);
    if (c->bias) {
      keys[n] = "loom.bias";
      vals[n++] = loom_ir_value_str(a, c->bias->name);
    }
  }
  return with_marks(a, loop, keys, vals, n);
}

/* loop with the pool's mark added to its annotations. */
static loom_stmt *marked_pool(loom_arena *a, const loom_stmt *loop, const loom_pool *c) {
  const char *keys[20] = {"loom.library", "loom.pool", "loom.n", "loom.c"};
  loom_value *vals[20] = {loom_ir_value_str(a, c->routine),
                          loom_ir_value_str(a, c->is_nchw ? "NCHW" : "NHWC"),
                          int_value(a, c->n), int_value(a, c->c)};
  int64_t ext[6] = {c->ih, c->iw, c->oh, c->ow, c->kh, c->kw};
  int n = window_marks(a, keys, vals, 4, c->x, c->y, ext, c->stride, c->dilation, c->pad_lo,
                       c->pad_hi, c->pad);
  return with_marks(a, loop, keys, vals, n);
}

/* Whether g multiplies by a layer's constant weights (B a parameter the
 * function lists in "layout_free_buffers", as a model's weights are),
 * float32, no batch: oneDNN's matmul takes it, the weights reordered once
 * into the layout it prefers (1.51 against OpenBLAS's 2.21 ms for the
 * products of a 784-1024-1024-10 MLP at batch 128, on a 2-core AVX-512
 * Xeon). */
static bool is_layer(const loom_func *f, const loom_gemm *g) {
  if (strcmp(g->routine, "cblas_sgemm") || g->batch != 1 || g->is_gemv)
    return false;
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer == g->b)
      return loom_ir_func_is_layout_free(f, i);
  return false;
}

/* The number of loops nested perfectly under loop, itself included, and
 * whether the block at their bottom (if any) has a reduction. */
static int nest_depth(const loom_stmt *loop, bool *has_reduction) {
  int d = 0;
  *has_reduction = false;
  while (loop && loop->kind == LOOM_STMT_FOR) {
    d++;
    loop = loop->u.loop.body;
  }
  if (loop && loop->kind == LOOM_STMT_BLOCK_REALIZE)
    for (int t = 0; t < loop->u.realize.block->n_iter_vars; t++)
      *has_reduction |= loop->u.realize.block->iter_vars[t].kind == LOOM_ITER_REDUCE;
  return d;
}

loom_status loom_dispatch_func(loom_arena *a, const loom_func *f, const loom_target *t,
                               const loom_func **out, int *n_taken, char *why, size_t why_len) {
  *out = f;
  *n_taken = 0;
  if (why && why_len)
    why[0] = 0;
  const loom_stmt *root = f->body;
  if (!root || root->kind != LOOM_STMT_BLOCK_REALIZE) {
    if (why && why_len)
      snprintf(why, why_len, "has no root block");
    return LOOM_OK;
  }
  const loom_block *rb = root->u.realize.block;
  loom_stmt *const *top = &rb->body;
  int n_top = 1;
  if (rb->body && rb->body->kind == LOOM_STMT_SEQ) {
    top = rb->body->u.seq.stmts;
    n_top = rb->body->u.seq.n_stmts;
  }
  loom_stmt **stmts = loom_arena_alloc(a, (size_t)(n_top ? n_top : 1) * sizeof *stmts);
  if (!stmts)
    return LOOM_NOMEM;
  /* Each nest is a gemm, else a conv, with the nest before it (when that
   * one is not taken) as its padding. The reason told is that of the first
   * nest computing a reduction (a padding or an epilogue tells little). */
  bool has_blas = false, has_dnnl = false, has_reason_of_reduction = false;
  bool is_cuda = t && t->kind == LOOM_TARGET_CUDA;
  for (int i = 0; i < n_top; i++) {
    loom_gemm g;
    loom_conv c;
    char reason[256], conv_reason[256];
    stmts[i] = top[i];
    if (!top[i] || top[i]->kind != LOOM_STMT_FOR)
      continue;
    if (loom_dispatch_match_gemm(f, t, top[i], &g, reason, sizeof reason)) {
      if (!is_cuda && is_layer(f, &g))
        g.routine = "dnnl_matmul";
      if (!(stmts[i] = marked(a, top[i], &g)))
        return LOOM_NOMEM;
      *(g.routine[0] == 'd' ? &has_dnnl : &has_blas) = true;
      (*n_taken)++;
      continue;
    }
    const loom_stmt *pad = i > 0 && stmts[i - 1] == top[i - 1] && top[i - 1] &&
                                   top[i - 1]->kind == LOOM_STMT_FOR ? top[i - 1] : NULL;
    /* On cuda no library takes convolutions and pools: the rules do. */
    if (!is_cuda && loom_dispatch_match_conv(f, pad, top[i], &c, conv_reason, sizeof conv_reason)) {
      int k = loom_dispatch_match_conv_post(f, (const loom_stmt *const *)&top[i], n_top - i,
                                            &c);
      if (!(stmts[i] = marked_conv(a, top[i], &c)))
        return LOOM_NOMEM;
      /* The padding before and the nests after are the call's. */
      static const char *const key = "loom.taken_by";
      loom_value *val = loom_ir_value_str(a, c.routine);
      if (c.pad && !(stmts[i - 1] = with_marks(a, top[i - 1], &key, &val, 1)))
        return LOOM_NOMEM;
      for (int j = 1; j <= k; j++)
        if (!(stmts[i + j] = with_marks(a, top[i + j], &key, &val, 1)))
          return LOOM_NOMEM;
      has_dnnl = true;
      (*n_taken)++;
      i += k;
      continue;
    }
    loom_pool pl;
    char pool_reason[256];
    if (!is_cuda && loom_dispatch_match_pool(f, pad, top[i], &pl, pool_reason, sizeof pool_reason)) {
      static const char *const key = "loom.taken_by";
      loom_value *val = loom_ir_value_str(a, pl.routine);
      if (!(stmts[i] = marked_pool(a, top[i], &pl)) ||
          (pl.pad && !(stmts[i - 1] = with_marks(a, top[i - 1], &key, &val, 1))))
        return LOOM_NOMEM;
      has_dnnl = true;
      (*n_taken)++;
      continue;
    }
    bool has_reduction;
    int depth = nest_depth(top[i], &has_reduction);
    if (depth == 7 && !is_cuda)
      snprintf(reason, sizeof reason, "%s", conv_reason);
    if (depth == 6 && !is_cuda)
      snprintf(reason, sizeof reason, "%s", pool_reason);
    if (why && why_len && (!why[0] || (has_reduction && !has_reason_of_reduction))) {
      snprintf(why, why_len, "%s", reason);
      has_reason_of_reduction = has_reduction;
    }
  }
  if (*n_taken == 0) {
    if (why && why_len && !why[0])
      snprintf(why, why_len, "has no loop nest at its top");
    return LOOM_OK;
  }
  if (why && why_len)
    snprintf(why, why_len, "%s", is_cuda ? "cuBLAS" : has_blas && has_dnnl ? "BLAS and oneDNN"
                                 : has_blas ? "BLAS" : "oneDNN");
  loom_stmt *body = stmts[0];
  if (rb->body && rb->body->kind == LOOM_STMT_SEQ) {
    if (!(body = loom_ir_stmt(a, LOOM_STMT_SEQ, rb->body->loc)))
      return LOOM_NOMEM;
    body->u.seq.stmts = stmts;
    body->u.seq.n_stmts = n_top;
  }
  loom_block *nb = loom_arena_alloc(a, sizeof *nb);
  loom_stmt *nr = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, root->loc);
  loom_func *nf = loom_arena_alloc(a, sizeof *nf);
  if (!nb || !nr || !nf)
    return LOOM_NOMEM;
  *nb = *rb;
  nb->body = body;
  *nr = *root;
  nr->u.realize.block = nb;
  *nf = *f;
  nf->body = nr;
  *out = nf;
  return LOOM_OK;
}

/* ---- reading the mark back ---------------------------------------------------- */

static const char *mark_str(const loom_stmt *loop, const char *key) {
  const loom_value *v = loom_ir_attr_get(loop->u.loop.annotations,
                                         loop->u.loop.n_annotations, key);
  return v && v->kind == LOOM_VALUE_STR ? v->str : NULL;
}

static bool mark_int(const loom_stmt *loop, const char *key, int64_t *out) {
  const loom_value *v = loom_ir_attr_get(loop->u.loop.annotations,
                                         loop->u.loop.n_annotations, key);
  return v && v->kind == LOOM_VALUE_EXPR && loom_ir_is_const_int(v->expr, out);
}

typedef struct find_ctx {
  const char *name;
  const loom_buffer *found;
} find_ctx;

static loom_visit find_alloc(void *ctx, loom_stmt *s) {
  find_ctx *c = ctx;
  if ((s->kind == LOOM_STMT_ALLOCATE || s->kind == LOOM_STMT_DECL_BUFFER) &&
      !strcmp(s->u.alloc.buffer->name, c->name)) {
    c->found = s->u.alloc.buffer;
    return LOOM_VISIT_STOP;
  }
  if (s->kind == LOOM_STMT_BLOCK_REALIZE)
    for (int i = 0; i < s->u.realize.block->n_alloc_buffers; i++)
      if (!strcmp(s->u.realize.block->alloc_buffers[i]->name, c->name)) {
        c->found = s->u.realize.block->alloc_buffers[i];
        return LOOM_VISIT_STOP;
      }
  return LOOM_VISIT_GO;
}

/* The buffer named name: a parameter, else an allocation in f's body. */
static const loom_buffer *buffer_named(const loom_func *f, const char *name) {
  if (!name)
    return NULL;
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer && !strcmp(f->params[i].buffer->name, name))
      return f->params[i].buffer;
  find_ctx c = {name, NULL};
  loom_ir_visitor v = {.stmt_pre = find_alloc, .ctx = &c};
  loom_ir_visit_stmt(&v, f->body);
  return c.found;
}

/* The number of elements of b, -1 when its shape is not constant (the C
 * backend sees buffers flattened: the count is what survives). */
static int64_t n_elems(const loom_buffer *b) {
  int64_t n = 1, e;
  for (int i = 0; i < b->ndim; i++) {
    if (!loom_ir_is_const_int(b->shape[i], &e) || e < 0)
      return -1;
    n *= e;
  }
  return n;
}

bool loom_dispatch_marked_gemm(const loom_func *f, const loom_stmt *loop, loom_gemm *out) {
  if (!loop || loop->kind != LOOM_STMT_FOR)
    return false;
  const char *routine = mark_str(loop, "loom.library"), *trans = mark_str(loop, "loom.gemm");
  if (!routine || !trans)
    return false;
  loom_gemm g = {0};
  int64_t beta, b_batched;
  static const char *const routines[] = {"cblas_sgemm", "cblas_dgemm", "cblas_sgemv",
                                         "cblas_dgemv", "dnnl_matmul", "cublas_gemm"};
  for (int i = 0; i < 6; i++)
    if (!strcmp(routine, routines[i]))
      g.routine = routines[i];
  g.is_gemv = g.routine && !strncmp(g.routine, "cblas", 5) && g.routine[10] == 'v';
  int t = -1;
  for (int i = 0; i < 4; i++)
    if (!strcmp(trans, trans_names[i]))
      t = i;
  g.a = buffer_named(f, mark_str(loop, "loom.a"));
  g.b = buffer_named(f, mark_str(loop, "loom.b"));
  g.c = buffer_named(f, mark_str(loop, "loom.c"));
  if (!g.routine || t < 0 || !g.a || !g.b || !g.c || !mark_int(loop, "loom.m", &g.m) ||
      !mark_int(loop, "loom.n", &g.n) || !mark_int(loop, "loom.k", &g.k) ||
      !mark_int(loop, "loom.beta", &beta) || (beta != 0 && beta != 1) ||
      !mark_int(loop, "loom.batch", &g.batch) || !mark_int(loop, "loom.b_batched", &b_batched) ||
      (b_batched != 0 && b_batched != 1) || g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0 ||
      g.m > INT32_MAX / g.batch || g.n > INT32_MAX || g.k > INT32_MAX)
    return false;
  g.is_b_batched = b_batched;
  if (g.is_gemv && (g.n != 1 || g.batch != 1 || g.trans_b))
    return false;
  g.trans_a = t >= 2;
  g.trans_b = t & 1;
  g.beta = (int)beta;
  bool is_dnnl = g.routine[0] == 'd', is_cublas = g.routine[1] == 'u';
  if (is_dnnl && g.batch != 1)
    return false; /* oneDNN's products here are single ones */
  loom_dtype want = LOOM_DTYPE(LOOM_DT_FLOAT, is_dnnl || g.routine[6] == 's' ? 32 : 64, 1);
  g.ab = is_cublas ? g.a->dtype : want;
  if (is_cublas && (!loom_dtype_eq(g.b->dtype, g.ab) || !loom_dispatch_cublas_has(g.ab, g.c->dtype)))
    return false;
  const loom_buffer *bs[3] = {g.a, g.b, g.c};
  int64_t sizes[3] = {g.batch * g.m * g.k, (g.is_b_batched ? g.batch : 1) * g.k * g.n,
                      g.batch * g.m * g.n};
  for (int i = 0; i < 3; i++)
    if ((!is_cublas && !loom_dtype_eq(bs[i]->dtype, want)) || n_elems(bs[i]) != sizes[i])
      return false;
  *out = g;
  return true;
}

/* The n integers of the list at key. */
static bool mark_ints(const loom_stmt *loop, const char *key, int64_t *out, int n) {
  const loom_value *v = loom_ir_attr_get(loop->u.loop.annotations,
                                         loop->u.loop.n_annotations, key);
  if (!v || v->kind != LOOM_VALUE_LIST || v->n_items != n)
    return false;
  for (int i = 0; i < n; i++)
    if (v->items[i]->kind != LOOM_VALUE_EXPR || !loom_ir_is_const_int(v->items[i]->expr, &out[i]))
      return false;
  return true;
}

/* The bias and post-ops of a marked conv, read into c: true when it has
 * none, or ones that describe f's buffers (NHWC, starting from zero, each
 * float32 of the size it must have). */
static bool marked_post(const loom_func *f, const loom_stmt *loop, loom_conv *c) {
  const char *out = mark_str(loop, "loom.out"), *bias = mark_str(loop, "loom.bias");
  const loom_value *post = loom_ir_attr_get(loop->u.loop.annotations,
                                            loop->u.loop.n_annotations, "loom.post");
  if (!out)
    return !bias && !post;
  loom_dtype f32 = LOOM_DTYPE(LOOM_DT_FLOAT, 32, 1);
  int64_t size = c->n * c->oh * c->ow * c->co;
  c->out = buffer_named(f, out);
  c->bias = bias ? buffer_named(f, bias) : NULL;
  if (c->is_nchw || c->beta || !c->out || (bias && !c->bias) || !post ||
      post->kind != LOOM_VALUE_LIST || post->n_items > LOOM_CONV_MAX_POST ||
      !loom_dtype_eq(c->out->dtype, f32) || n_elems(c->out) != size ||
      (c->bias && (!loom_dtype_eq(c->bias->dtype, f32) || n_elems(c->bias) != c->co)))
    return false;
  c->n_post = post->n_items;
  for (int i = 0; i < c->n_post; i++) {
    const loom_value *v = post->items[i];
    if (v->kind != LOOM_VALUE_STR)
      return false;
    if (!strcmp(v->str, "relu")) {
      c->post[i] = (loom_conv_post){LOOM_CONV_POST_RELU, NULL};
      continue;
    }
    const loom_buffer *src = !strncmp(v->str, "add:", 4) ? buffer_named(f, v->str + 4) : NULL;
    if (!src || !loom_dtype_eq(src->dtype, f32) || n_elems(src) != size)
      return false;
    c->post[i] = (loom_conv_post){LOOM_CONV_POST_ADD, src};
  }
  return true;
}

bool loom_dispatch_marked_pool(const loom_func *f, const loom_stmt *loop, loom_pool *out) {
  if (!loop || loop->kind != LOOM_STMT_FOR)
    return false;
  const char *routine = mark_str(loop, "loom.library"), *layout = mark_str(loop, "loom.pool");
  if (!routine || strcmp(routine, "dnnl_pooling_forward") || !layout ||
      (strcmp(layout, "NHWC") && strcmp(layout, "NCHW")))
    return false;
  loom_pool c = {.routine = "dnnl_pooling_forward", .is_nchw = !strcmp(layout, "NCHW")};
  int64_t padding[4];
  c.x = buffer_named(f, mark_str(loop, "loom.x"));
  c.y = buffer_named(f, mark_str(loop, "loom.y"));
  const char *pad = mark_str(loop, "loom.pad");
  c.pad = pad ? buffer_named(f, pad) : NULL;
  if (!c.x || !c.y || (pad && !c.pad) || !mark_int(loop, "loom.n", &c.n) ||
      !mark_int(loop, "loom.c", &c.c) || !mark_int(loop, "loom.ih", &c.ih) ||
      !mark_int(loop, "loom.iw", &c.iw) || !mark_int(loop, "loom.oh", &c.oh) ||
      !mark_int(loop, "loom.ow", &c.ow) || !mark_int(loop, "loom.kh", &c.kh) ||
      !mark_int(loop, "loom.kw", &c.kw) || !mark_ints(loop, "loom.stride", c.stride, 2) ||
      !mark_ints(loop, "loom.dilation", c.dilation, 2) ||
      !mark_ints(loop, "loom.padding", padding, 4))
    return false;
  int64_t dims[8] = {c.n, c.c, c.ih, c.iw, c.oh, c.ow, c.kh, c.kw};
  for (int i = 0; i < 8; i++)
    if (dims[i] <= 0 || dims[i] > INT32_MAX)
      return false;
  int64_t in[2] = {c.ih, c.iw}, k[2] = {c.kh, c.kw}, o[2] = {c.oh, c.ow};
  for (int i = 0; i < 2; i++) {
    c.pad_lo[i] = padding[i];
    c.pad_hi[i] = padding[2 + i];
    if (c.stride[i] <= 0 || c.dilation[i] <= 0 || c.pad_lo[i] < 0 || c.pad_hi[i] < 0 ||
        c.stride[i] > INT32_MAX || c.dilation[i] > INT32_MAX || c.pad_lo[i] >= k[i] ||
        c.pad_hi[i] >= k[i] ||
        (in[i] + c.pad_lo[i] + c.pad_hi[i] - (k[i] - 1) * c.dilation[i] - 1) / c.stride[i] + 1 !=
            o[i] ||
        in[i] + c.pad_lo[i] + c.pad_hi[i] < (k[i] - 1) * c.dilation[i] + 1)
      return false;
  }
  loom_dtype f32 = LOOM_DTYPE(LOOM_DT_FLOAT, 32, 1);
  int64_t nx, ny;
  if (__builtin_mul_overflow(c.n * c.c, c.ih * c.iw, &nx) ||
      __builtin_mul_overflow(c.n * c.c, c.oh * c.ow, &ny) || !loom_dtype_eq(c.x->dtype, f32) ||
      !loom_dtype_eq(c.y->dtype, f32) || n_elems(c.x) != nx || n_elems(c.y) != ny ||
      (c.pad && !loom_dtype_eq(c.pad->dtype, f32)))
    return false;
  *out = c;
  return true;
}

bool loom_dispatch_marked_conv(const loom_func *f, const loom_stmt *loop, loom_conv *out) {
  if (!loop || loop->kind != LOOM_STMT_FOR)
    return false;
  const char *routine = mark_str(loop, "loom.library"), *layout = mark_str(loop, "loom.conv");
  if (!routine || strcmp(routine, "dnnl_convolution_forward") || !layout ||
      (strcmp(layout, "NHWC") && strcmp(layout, "NCHW")))
    return false;
  loom_conv c = {.routine = "dnnl_convolution_forward", .is_nchw = !strcmp(layout, "NCHW")};
  int64_t beta, padding[4];
  c.x = buffer_named(f, mark_str(loop, "loom.x"));
  c.w = buffer_named(f, mark_str(loop, "loom.w"));
  c.y = buffer_named(f, mark_str(loop, "loom.y"));
  const char *pad = mark_str(loop, "loom.pad");
  c.pad = pad ? buffer_named(f, pad) : NULL;
  if (!c.x || !c.w || !c.y || (pad && !c.pad) || !mark_int(loop, "loom.n", &c.n) ||
      !mark_int(loop, "loom.ci", &c.ci) || !mark_int(loop, "loom.co", &c.co) ||
      !mark_int(loop, "loom.ih", &c.ih) || !mark_int(loop, "loom.iw", &c.iw) ||
      !mark_int(loop, "loom.oh", &c.oh) || !mark_int(loop, "loom.ow", &c.ow) ||
      !mark_int(loop, "loom.kh", &c.kh) || !mark_int(loop, "loom.kw", &c.kw) ||
      !mark_int(loop, "loom.beta", &beta) || (beta != 0 && beta != 1) ||
      !mark_ints(loop, "loom.stride", c.stride, 2) ||
      !mark_ints(loop, "loom.dilation", c.dilation, 2) ||
      !mark_ints(loop, "loom.padding", padding, 4))
    return false;
  c.beta = (int)beta;
  int64_t dims[9] = {c.n, c.ci, c.co, c.ih, c.iw, c.oh, c.ow, c.kh, c.kw};
  for (int i = 0; i < 9; i++)
    if (dims[i] <= 0 || dims[i] > INT32_MAX)
      return false;
  for (int i = 0; i < 2; i++) {
    c.pad_lo[i] = padding[i];
    c.pad_hi[i] = padding[2 + i];
    if (c.stride[i] <= 0 || c.dilation[i] <= 0 || c.pad_lo[i] < 0 || c.pad_hi[i] < 0 ||
        c.stride[i] > INT32_MAX || c.dilation[i] > INT32_MAX || c.pad_lo[i] > INT32_MAX ||
        c.pad_hi[i] > INT32_MAX)
      return false;
  }
  /* The extents agree with oneDNN's rule for the output's, and the
   * buffers hold what the extents say. */
  int64_t in[2] = {c.ih, c.iw}, k[2] = {c.kh, c.kw}, o[2] = {c.oh, c.ow};
  for (int i = 0; i < 2; i++)
    if ((in[i] + c.pad_lo[i] + c.pad_hi[i] - (k[i] - 1) * c.dilation[i] - 1) / c.stride[i] + 1 !=
            o[i] ||
        in[i] + c.pad_lo[i] + c.pad_hi[i] < (k[i] - 1) * c.dilation[i] + 1)
      return false;
  loom_dtype f32 = LOOM_DTYPE(LOOM_DT_FLOAT, 32, 1);
  const loom_buffer *bs[3] = {c.x, c.w, c.y};
  int64_t dims3[3][4] = {{c.n, c.ci, c.ih, c.iw}, {c.kh, c.kw, c.ci, c.co},
                         {c.n, c.co, c.oh, c.ow}};
  for (int i = 0; i < 3; i++) {
    int64_t size = 1;
    for (int d = 0; d < 4; d++)
      if (__builtin_mul_overflow(size, dims3[i][d], &size))
        return false;
    if (!loom_dtype_eq(bs[i]->dtype, f32) || n_elems(bs[i]) != size)
      return false;
  }
  if (c.pad && !loom_dtype_eq(c.pad->dtype, f32))
    return false;
  if (!marked_post(f, loop, &c))
    return false;
  *out = c;
  return true;
}
