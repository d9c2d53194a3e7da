/* Removes blocks and flattens buffer accesses (see include/loom/lower.h).
 *
 * Every buffer, view or not, is described by the flat buffer that holds its
 * elements, its strides and its offset in that flat buffer; an access is then
 * offset + sum(index_k * stride_k) whatever the buffer is. A match_buffer
 * view takes its source's flat buffer, the source's strides of the trailing
 * dimensions, and the offset of the region's corner. */
#include "lower/lower_impl.h"

#include <stdlib.h>

typedef struct layout {
  const lower_compaction *compact; /* NULL unless compacted */
  loom_buffer *flat;
  loom_expr **strides; /* one per dimension of the buffer it describes */
  loom_expr *offset;
  loom_dtype index_t;  /* the dtype of flat indices into it */
} layout;

/* LET bindings waiting for the statement they must wrap. */
typedef struct binds {
  loom_var **vars;
  loom_expr **values;
  int n, cap;
} binds;

typedef struct lower {
  loom_arena *a;
  loom_diag *d;
  loom_ptrmap index;   /* buffer -> position in layouts */
  layout *layouts;
  int n_layouts, cap_layouts;
  loom_ptrmap defined; /* variables that have a definition in scope */
  loom_status st;      /* the first failure inside an expression hook */
  loom_loc loc;        /* the statement being lowered */
  binds lets;          /* layout variables to bind; a stack */
  const lower_compactions *compact;
  binds iters;         /* iter vars of the enclosing blocks and their values
                        * in loop variables; a stack */
  loom_arith_ctx *ctx; /* loop ranges, for compact and packed indices */
} lower;

static loom_status fail(lower *L, loom_status st) {
  if (L->st == LOOM_OK)
    L->st = st;
  return st;
}

static loom_status define(lower *L, const loom_var *v) {
  return loom_ptrmap_put(&L->defined, v, 1);
}

static bool is_defined(const lower *L, const loom_var *v) {
  return loom_ptrmap_get(&L->defined, v) >= 0;
}

static const layout *layout_of(const lower *L, const loom_buffer *b) {
  int i = loom_ptrmap_get(&L->index, b);
  return i < 0 ? NULL : &L->layouts[i];
}

static loom_status add_layout(lower *L, const loom_buffer *b, layout lay) {
  if (L->n_layouts == L->cap_layouts) {
    int cap = L->cap_layouts ? 2 * L->cap_layouts : 16;
    layout *p = realloc(L->layouts, (size_t)cap * sizeof *p);
    if (!p)
      return LOOM_NOMEM;
    L->layouts = p;
    L->cap_layouts = cap;
  }
  TRY(loom_ptrmap_put(&L->index, b, L->n_layouts));
  L->layouts[L->n_layouts++] = lay;
  return LOOM_OK;
}

/* int64 when some dimension is int64 or the element count may not fit in
 * int32, else int32: the C code indexes with the narrower type when it can. */
static loom_dtype index_type(const loom_buffer *b) {
  int64_t total = 1;
  for (int k = 0; k < b->ndim; k++) {
    int64_t n;
    if (b->shape[k]->dtype.bits > 32 || !loom_ir_is_const_int(b->shape[k], &n) ||
        n < 0 || (n > 0 && total > INT32_MAX / n))
      return LOOM_INT64;
    total *= n;
  }
  return LOOM_INT32;
}

static loom_status push_bind(binds *b, loom_var *v, loom_expr *value) {
  if (!value)
    return LOOM_NOMEM;
  if (b->n == b->cap) {
    int cap = b->cap ? 2 * b->cap : 8;
    loom_var **vs = realloc(b->vars, (size_t)cap * sizeof *vs);
    if (!vs)
      return LOOM_NOMEM;
    b->vars = vs;
    loom_expr **xs = realloc(b->values, (size_t)cap * sizeof *xs);
    if (!xs)
      return LOOM_NOMEM;
    b->values = xs;
    b->cap = cap;
  }
  b->vars[b->n] = v;
  b->values[b->n++] = value;
  return LOOM_OK;
}

static loom_status push_let(lower *L, loom_var *v, loom_expr *value) {
  TRY(push_bind(&L->lets, v, value));
  return define(L, v);
}

/* Wraps body in the LETs pushed since mark (the first pushed outermost) and
 * pops them. */
static loom_stmt *wrap_lets(lower *L, int mark, loom_stmt *body) {
  for (int i = L->lets.n - 1; i >= mark && body; i--)
    body = lower_let(L->a, L->lets.vars[i], L->lets.values[i], body);
  L->lets.n = mark;
  return body;
}

/* Binds each layout variable of b that nobody defines: strides to the
 * row-major values, the offset to 0 (arrays are passed compact). */
static loom_status bind_layout_vars(lower *L, const loom_buffer *b,
                                    loom_expr *const *strides,
                                    loom_expr *offset) {
  for (int k = 0; k < b->n_strides; k++) {
    loom_expr *s = b->strides[k];
    if (s->kind == LOOM_EXPR_VAR && !is_defined(L, s->u.var))
      TRY(push_let(L, s->u.var, lower_to_index(L->a, strides[k], s->dtype)));
  }
  loom_expr *off = b->elem_offset;
  if (off && off->kind == LOOM_EXPR_VAR && !is_defined(L, off->u.var))
    TRY(push_let(L, off->u.var, lower_to_index(L->a, offset, off->dtype)));
  return LOOM_OK;
}

/* Row-major strides of b's shape, in dtype t. */
static loom_expr **row_major(lower *L, const loom_buffer *b, loom_dtype t) {
  loom_expr **s = loom_arena_alloc(L->a, (size_t)(b->ndim + 1) * sizeof *s);
  if (!s)
    return NULL;
  loom_expr *acc = loom_ir_int(L->a, t, 1);
  for (int k = b->ndim - 1; k >= 0; k--) {
    s[k] = acc;
    acc = lower_mul(L->a, acc, lower_to_index(L->a, b->shape[k], t));
  }
  return s;
}

/* The layout of a buffer that owns its storage: a parameter, an allocation
 * or a declaration. Layout variables it declares but nobody defines are
 * pushed as LETs. */
static loom_status own_layout(lower *L, const loom_buffer *b) {
  loom_arena *a = L->a;
  const loom_buffer *key = b;
  const lower_compaction *c = lower_compaction_of(L->compact, b);
  if (c)
    b = c->compact;
  /* A compact buffer indexes with its full shape's type: the offsets it
   * subtracts are as large as indices into the whole. */
  loom_dtype t = index_type(key);
  loom_expr **rm = row_major(L, b, t), **strides = rm;
  if (!rm)
    return LOOM_NOMEM;
  if (b->n_strides == b->ndim && b->ndim > 0) {
    strides = loom_arena_alloc(a, (size_t)b->ndim * sizeof *strides);
    if (!strides)
      return LOOM_NOMEM;
    for (int k = 0; k < b->ndim; k++)
      strides[k] = lower_to_index(a, b->strides[k], t);
  }
  loom_expr *offset = b->elem_offset ? lower_to_index(a, b->elem_offset, t)
                                     : loom_ir_int(a, t, 0);
  /* Elements the storage must hold: the last one is at
   * offset + sum((shape_k - 1) * stride_k). Only allocations use it. */
  loom_expr *size = loom_ir_int(a, t, 1);
  for (int k = 0; k < b->ndim; k++) {
    loom_expr *n = lower_to_index(a, b->shape[k], t);
    loom_expr *m1 = lower_add(a, n, loom_ir_int(a, t, -1));
    size = lower_add(a, size, lower_mul(a, m1, strides[k]));
  }
  if (b->elem_offset && b->elem_offset->kind != LOOM_EXPR_VAR)
    size = lower_add(a, size, offset);
  loom_buffer *flat = loom_ir_buffer(a, b->name, b->dtype, &size, 1);
  if (!flat || !size || !offset)
    return LOOM_NOMEM;
  flat->data = b->data;
  flat->scope = b->scope;
  flat->align = b->align;
  TRY(bind_layout_vars(L, b, rm, loom_ir_int(a, t, 0)));
  /* A compact buffer holds the region from mins on: index i_k is at
   * i_k - mins[k] in it. */
  for (int k = 0; c && k < b->ndim; k++) {
    loom_expr *lo = lower_mul(a, lower_to_index(a, c->mins[k], t), strides[k]);
    int64_t z;
    if (lo && !(loom_ir_is_const_int(lo, &z) && z == 0))
      offset = loom_ir_binary(a, LOOM_EXPR_SUB, offset, lo);
    if (!lo || !offset)
      return LOOM_NOMEM;
  }
  return add_layout(L, key, (layout){c, flat, strides, offset, t});
}

static loom_expr *lower_expr(lower *L, loom_expr *e);

/* The layout of a match_buffer view: its dimensions are the trailing
 * dimensions of the region it views (leading ones have extent 1 there). Its
 * layout variables (strides, elem_offset, symbolic shape) are pushed as
 * LETs of what the region gives them. */
static loom_status view_layout(lower *L, const loom_match_buffer *m) {
  loom_arena *a = L->a;
  const loom_buffer *v = m->buffer;
  const loom_buffer_region *r = &m->source;
  const layout *src = layout_of(L, r->buffer);
  if (!src)
    return loom_diag_error(L->d, L->loc, "match_buffer '%s' views '%s', which "
                           "has no storage here", v->name, r->buffer->name);
  int skip = r->n_ranges - v->ndim;
  if (skip < 0)
    return loom_diag_error(L->d, L->loc, "match_buffer '%s' has %d dimensions "
                           "but views a %d-dimensional region of '%s'; a view "
                           "may drop leading dimensions, not add them",
                           v->name, v->ndim, r->n_ranges, r->buffer->name);
  loom_dtype t = src->index_t;
  loom_expr **strides = loom_arena_alloc(a, (size_t)(v->ndim + 1) * sizeof *strides);
  loom_expr *offset = src->offset;
  if (!strides)
    return LOOM_NOMEM;
  for (int k = 0; k < r->n_ranges; k++) {
    loom_expr *lo = lower_to_index(a, lower_expr(L, r->ranges[k].min), t);
    offset = lower_add(a, offset, lower_mul(a, lo, src->strides[k]));
  }
  for (int k = 0; k < v->ndim; k++)
    strides[k] = src->strides[skip + k];
  if (!offset)
    return LOOM_NOMEM;
  for (int k = 0; k < v->ndim; k++) {
    loom_expr *n = v->shape[k];
    if (n->kind == LOOM_EXPR_VAR && !is_defined(L, n->u.var))
      TRY(push_let(L, n->u.var, lower_to_index(a, lower_expr(L, r->ranges[skip + k].extent),
                                               n->dtype)));
  }
  TRY(bind_layout_vars(L, v, strides, offset));
  TRY(add_layout(L, v, (layout){NULL, src->flat, strides, offset, t}));
  /* A view's data is the storage it views (its offset is elem_offset), as
   * the tensor intrinsics' calls use it. */
  return loom_ptrmap_put(&L->index, v->data, L->n_layouts - 1);
}

/* offset + sum(idx_k * stride_k): the flat index of an access to b with
 * lowered indices idx. */
static loom_expr *flat_index(lower *L, const layout *lay, loom_expr **idx,
                             int n) {
  /* An int64 index keeps the whole computation in int64: narrowing it to the
   * buffer's index type would wrap an out-of-range index into range. */
  loom_dtype t = lay->index_t;
  for (int k = 0; k < n; k++)
    if (idx[k]->dtype.bits > t.bits)
      t = LOOM_INT64;
  loom_arena *a = L->a;
  loom_expr *x = lower_to_index(a, lay->offset, t);
  for (int k = 0; k < n && x; k++)
    x = lower_add(a, x, lower_mul(a, lower_to_index(a, idx[k], t),
                                  lower_to_index(a, lay->strides[k], t)));
  return x;
}

/* The flat index of an access to a compacted buffer: each index, its iter
 * vars replaced by their values, less the region's minimum, simplified, so
 * that what remains speaks of the loops inside the allocation alone
 * (C_global[i_2 * 64 + j_3] rather than an offset of the whole output): the
 * C compiler then sees the same element at the same address. */
static loom_expr *compact_index(lower *L, const layout *lay, loom_expr **idx,
                                int n) {
  loom_arena *a = L->a;
  loom_dtype t = lay->index_t;
  for (int k = 0; k < n; k++)
    if (idx[k]->dtype.bits > t.bits)
      t = LOOM_INT64;
  loom_expr *x = loom_ir_int(a, t, 0);
  for (int k = 0; k < n && x; k++) {
    loom_expr *i = lower_to_index(a, idx[k], t);
    if (L->iters.n > 0 && i)
      i = loom_ir_substitute_expr(a, i, L->iters.vars, L->iters.values,
                                  L->iters.n);
    loom_expr *lo = lower_to_index(a, lay->compact->mins[k], t);
    loom_expr *d = i && lo ? loom_ir_binary(a, LOOM_EXPR_SUB, i, lo) : NULL;
    if (d && L->ctx)
      d = loom_arith_simplify(a, L->ctx, d);
    x = d ? lower_add(a, x, lower_mul(a, d, lower_to_index(a, lay->strides[k], t)))
          : NULL;
  }
  return x;
}

static loom_expr *count_div_mod(void *ctx, loom_expr *e) {
  int *n = ctx;
  *n += e->kind == LOOM_EXPR_FLOORDIV || e->kind == LOOM_EXPR_FLOORMOD ||
        e->kind == LOOM_EXPR_DIV || e->kind == LOOM_EXPR_MOD;
  return NULL;
}

static int div_mods(loom_arena *a, loom_expr *e) {
  int n = 0;
  loom_ir_rewrite_expr(a, e, count_div_mod, &n);
  return n;
}

/* An index that divides iter vars (B_pack[vj // 16, vk, vj % 16] after a
 * layout rewrite) in the loops' terms, simplified, when that removes a
 * division: with vj = j_0 * 32 + j_1 * 16 + j_2 and j_2 < 16 it becomes
 * j_0 * 2 + j_1 and j_2, which a vectorized j_2 reads contiguously. Else
 * the index as written. */
static loom_expr *undivide(lower *L, loom_expr *i) {
  loom_arena *a = L->a;
  if (!L->ctx || L->iters.n == 0 || div_mods(a, i) == 0)
    return i;
  loom_expr *s = loom_ir_substitute_expr(a, i, L->iters.vars, L->iters.values, L->iters.n);
  loom_expr *f = s ? loom_arith_simplify(a, L->ctx, s) : NULL;
  return f && div_mods(a, f) < div_mods(a, s) ? f : i;
}

/* Lowers the indices of an access to b and returns its flat index, with
 * *flat set to the buffer that holds b's elements. */
static loom_expr *lower_access(lower *L, const loom_buffer *b,
                               loom_expr **indices, int n, loom_buffer **flat) {
  const layout *lay = layout_of(L, b);
  if (!lay) {
    fail(L, loom_diag_error(L->d, L->loc, "buffer '%s' is used where it has "
                            "no storage", b->name));
    return NULL;
  }
  loom_expr *small[8], **idx = small;
  if (n > 8 && !(idx = loom_arena_alloc(L->a, (size_t)n * sizeof *idx)))
    return NULL;
  for (int k = 0; k < n; k++)
    if (!(idx[k] = lower_expr(L, indices[k])))
      return NULL;
  *flat = lay->flat;
  if (lay->compact && n == lay->compact->compact->ndim)
    return compact_index(L, lay, idx, n);
  for (int k = 0; k < n; k++)
    if (!(idx[k] = undivide(L, idx[k])))
      return NULL;
  return flat_index(L, lay, idx, n);
}

static loom_expr *lower_expr(lower *L, loom_expr *e);

/* A wmma call's fragment index in the loops' terms, simplified: from a
 * tile's elem_offset and strides it comes to a constant once its loops
 * are unrolled, and CUDA keeps a fragment array in registers only when
 * every index into it is one. */
static loom_expr *fold_index(lower *L, loom_expr *i) {
  loom_arena *a = L->a;
  for (int k = L->lets.n - 1; k >= 0 && i; k--)
    i = loom_ir_substitute_expr(a, i, &L->lets.vars[k], &L->lets.values[k], 1);
  if (i && L->iters.n > 0)
    i = loom_ir_substitute_expr(a, i, L->iters.vars, L->iters.values, L->iters.n);
  return i && L->ctx ? loom_arith_simplify(a, L->ctx, i) : i;
}

static loom_expr *lower_wmma(lower *L, loom_expr *e) {
  int n = e->u.call.n_args;
  loom_expr **args = loom_arena_alloc(L->a, (size_t)(n + 1) * sizeof *args);
  if (!args) {
    fail(L, LOOM_NOMEM);
    return e;
  }
  bool is_mma = e->u.call.op == LOOM_OP_TVM_MMA_SYNC;
  for (int k = 0; k < n; k++) {
    args[k] = lower_expr(L, e->u.call.args[k]);
    if (args[k] && (is_mma ? k % 2 == 1 : k == 4))
      args[k] = fold_index(L, args[k]);
    if (!args[k]) {
      fail(L, LOOM_NOMEM);
      return e;
    }
  }
  loom_expr *r = loom_ir_call(L->a, e->dtype, e->u.call.op, args, n);
  if (!r)
    fail(L, LOOM_NOMEM);
  return r ? r : e;
}

static loom_expr *expr_hook(void *ctx, loom_expr *e) {
  lower *L = ctx;
  if (e->kind == LOOM_EXPR_CALL && loom_op_is_wmma(e->u.call.op))
    return lower_wmma(L, e);
  if (e->kind == LOOM_EXPR_VAR) {
    int i = loom_ptrmap_get(&L->index, e->u.var);
    if (i < 0 || L->layouts[i].flat->data == e->u.var)
      return NULL;
    loom_expr *r = loom_ir_ref(L->a, L->layouts[i].flat->data);
    if (!r)
      fail(L, LOOM_NOMEM);
    return r ? r : e;
  }
  if (e->kind != LOOM_EXPR_LOAD)
    return NULL;
  loom_buffer *flat;
  loom_expr *i = lower_access(L, e->u.load.buffer, e->u.load.indices,
                              e->u.load.n_indices, &flat);
  loom_expr *r = i ? loom_ir_load(L->a, flat, &i, 1) : NULL;
  if (!r) {
    fail(L, LOOM_NOMEM); /* keeps an earlier, better reason */
    return e;            /* stops the walk; the caller sees L->st */
  }
  r->dtype = e->dtype;
  return r;
}

static loom_expr *lower_expr(lower *L, loom_expr *e) {
  if (!e || L->st != LOOM_OK)
    return NULL;
  loom_expr *r = loom_ir_rewrite_expr(L->a, e, expr_hook, L);
  if (!r)
    fail(L, LOOM_NOMEM);
  return L->st == LOOM_OK ? r : NULL;
}

static loom_stmt *lower_stmt(lower *L, const loom_stmt *s);

/* The condition under which a block's init runs: every reduce iter var at
 * the start of its domain. */
static loom_expr *first_step(lower *L, const loom_block *b) {
  loom_expr *cond = NULL;
  for (int k = 0; k < b->n_iter_vars; k++) {
    const loom_iter_var *iv = &b->iter_vars[k];
    if (iv->kind != LOOM_ITER_REDUCE)
      continue;
    loom_expr *eq = loom_ir_binary(L->a, LOOM_EXPR_EQ, loom_ir_ref(L->a, iv->var),
                                   lower_expr(L, iv->dom.min));
    cond = cond ? loom_ir_binary(L->a, LOOM_EXPR_AND, cond, eq) : eq;
  }
  return cond ? cond : loom_ir_int(L->a, LOOM_BOOL, 1);
}

static loom_stmt *alloc_stmt(lower *L, loom_stmt_kind k, const loom_buffer *b,
                             loom_stmt *body) {
  const layout *lay = layout_of(L, b);
  loom_stmt *s = body && lay ? loom_ir_stmt(L->a, k, body->loc) : NULL;
  if (s) {
    s->u.alloc.buffer = lay->flat;
    s->u.alloc.body = body;
  }
  return s;
}

/* A block becomes: its buffers' allocations around the LETs of layout
 * variables around its init (when on the first reduction step) and body. */
static loom_stmt *lower_block(lower *L, const loom_block *b) {
  int mark = L->lets.n;
  for (int k = 0; k < b->n_alloc_buffers; k++)
    if (fail(L, own_layout(L, b->alloc_buffers[k])) != LOOM_OK)
      return NULL;
  for (int k = 0; k < b->n_match_buffers; k++)
    if (fail(L, view_layout(L, &b->match_buffers[k])) != LOOM_OK)
      return NULL;
  loom_stmt *body = lower_stmt(L, b->body);
  if (b->init) {
    loom_stmt *init = lower_stmt(L, b->init);
    body = lower_seq2(L->a, lower_if(L->a, first_step(L, b), init, b->loc), body);
  }
  body = wrap_lets(L, mark, body);
  for (int k = b->n_alloc_buffers - 1; k >= 0; k--)
    body = alloc_stmt(L, LOOM_STMT_ALLOCATE, b->alloc_buffers[k], body);
  return body;
}

/* The iter vars become LETs of their bindings, under the predicate. */
static loom_stmt *lower_realize(lower *L, const loom_stmt *s) {
  const loom_block *b = s->u.realize.block;
  if (s->u.realize.n_iter_values != b->n_iter_vars) {
    fail(L, loom_diag_error(L->d, s->loc, "block '%s' has %d iter vars but "
                            "%d bindings", b->name, b->n_iter_vars,
                            s->u.realize.n_iter_values));
    return NULL;
  }
  loom_expr **values = loom_arena_alloc(L->a, (size_t)(b->n_iter_vars + 1) * sizeof *values);
  if (!values)
    return NULL;
  /* Simplified under the loops' ranges, as TVM's lowering simplifies:
   * schedules give bindings in the iterator maps' normal form,
   * `(f_0 * 32 + f_1 * 8 + f_2) // 8`, which is f_0 * 4 + f_1 here. */
  for (int k = 0; k < b->n_iter_vars; k++)
    if (!(values[k] = lower_expr(L, s->u.realize.iter_values[k])) ||
        (L->ctx && !(values[k] = loom_arith_simplify(L->a, L->ctx, values[k]))))
      return NULL;
  loom_expr *pred = s->u.realize.predicate;
  int64_t c;
  bool always = !pred || (loom_ir_is_const_int(pred, &c) && c != 0);
  loom_expr *cond = always ? NULL : lower_expr(L, pred);
  if (!always && !cond)
    return NULL;
  /* The values in loop variables, for compact indices. */
  int mark = L->iters.n;
  for (int k = 0; k < b->n_iter_vars; k++) {
    loom_expr *v = values[k];
    if (mark > 0)
      v = loom_ir_substitute_expr(L->a, v, L->iters.vars, L->iters.values,
                                  mark);
    if (fail(L, push_bind(&L->iters, b->iter_vars[k].var, v)) != LOOM_OK)
      return NULL;
  }
  loom_stmt *body = lower_block(L, b);
  L->iters.n = mark;
  for (int k = b->n_iter_vars - 1; k >= 0; k--)
    body = lower_let(L->a, b->iter_vars[k].var, values[k], body);
  return always ? body : lower_if(L->a, cond, body, s->loc);
}

static loom_stmt *copy_stmt(lower *L, const loom_stmt *s) {
  return loom_arena_dup(L->a, s, sizeof *s);
}

static loom_stmt *lower_store(lower *L, const loom_stmt *s) {
  loom_stmt *c = copy_stmt(L, s);
  if (!c)
    return NULL;
  loom_buffer *flat;
  loom_expr *i = lower_access(L, s->u.store.buffer, s->u.store.indices,
                              s->u.store.n_indices, &flat);
  loom_expr **idx = loom_arena_alloc(L->a, sizeof *idx);
  c->u.store.value = lower_expr(L, s->u.store.value);
  if (!i || !idx || !c->u.store.value)
    return NULL;
  idx[0] = i;
  c->u.store.buffer = flat;
  c->u.store.indices = idx;
  c->u.store.n_indices = 1;
  return c;
}

static loom_stmt *lower_seq(lower *L, const loom_stmt *s) {
  loom_stmt *c = copy_stmt(L, s);
  int n = s->u.seq.n_stmts;
  loom_stmt **items = loom_arena_alloc(L->a, (size_t)(n + 1) * sizeof *items);
  if (!c || !items)
    return NULL;
  for (int k = 0; k < n; k++)
    if (!(items[k] = lower_stmt(L, s->u.seq.stmts[k])))
      return NULL;
  c->u.seq.stmts = items;
  return c;
}

/* An allocation or declaration outside blocks: its buffer gets a layout
 * and, like a block's, LETs for its layout variables. */
static loom_stmt *lower_alloc(lower *L, const loom_stmt *s) {
  int mark = L->lets.n;
  if (fail(L, own_layout(L, s->u.alloc.buffer)) != LOOM_OK)
    return NULL;
  loom_stmt *body = wrap_lets(L, mark, lower_stmt(L, s->u.alloc.body));
  return alloc_stmt(L, s->kind, s->u.alloc.buffer, body);
}

static loom_stmt *lower_stmt(lower *L, const loom_stmt *s) {
  if (!s || L->st != LOOM_OK)
    return NULL;
  L->loc = s->loc;
  loom_stmt *c;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE: return lower_realize(L, s);
  case LOOM_STMT_STORE: return lower_store(L, s);
  case LOOM_STMT_SEQ: return lower_seq(L, s);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return lower_alloc(L, s);
  case LOOM_STMT_FOR:
    if (!(c = copy_stmt(L, s)) || define(L, s->u.loop.var) != LOOM_OK)
      return NULL;
    c->u.loop.min = lower_expr(L, s->u.loop.min);
    c->u.loop.extent = lower_expr(L, s->u.loop.extent);
    c->u.loop.body = lower_stmt(L, s->u.loop.body);
    return c->u.loop.min && c->u.loop.extent && c->u.loop.body ? c : NULL;
  case LOOM_STMT_IF:
    if (!(c = copy_stmt(L, s)))
      return NULL;
    c->u.if_.cond = lower_expr(L, s->u.if_.cond);
    c->u.if_.then_case = lower_stmt(L, s->u.if_.then_case);
    if (s->u.if_.else_case && !(c->u.if_.else_case = lower_stmt(L, s->u.if_.else_case)))
      return NULL;
    return c->u.if_.cond && c->u.if_.then_case ? c : NULL;
  case LOOM_STMT_EVALUATE:
    if (!(c = copy_stmt(L, s)))
      return NULL;
    c->u.evaluate.value = lower_expr(L, s->u.evaluate.value);
    return c->u.evaluate.value ? c : NULL;
  case LOOM_STMT_LET:
    if (!(c = copy_stmt(L, s)) || define(L, s->u.let.var) != LOOM_OK)
      return NULL;
    c->u.let.value = lower_expr(L, s->u.let.value);
    c->u.let.body = lower_stmt(L, s->u.let.body);
    return c->u.let.value && c->u.let.body ? c : NULL;
  case LOOM_STMT_ATTR:
    if (!(c = copy_stmt(L, s)))
      return NULL;
    if (s->u.attr.value && !(c->u.attr.value = lower_expr(L, s->u.attr.value)))
      return NULL;
    c->u.attr.body = lower_stmt(L, s->u.attr.body);
    return c->u.attr.body ? c : NULL;
  case LOOM_STMT_ASSERT:
    if (!(c = copy_stmt(L, s)))
      return NULL;
    c->u.assert_.cond = lower_expr(L, s->u.assert_.cond);
    c->u.assert_.body = lower_stmt(L, s->u.assert_.body);
    return c->u.assert_.cond && c->u.assert_.body ? c : NULL;
  case LOOM_STMT_COUNT_: break;
  }
  return NULL;
}

loom_status lower_blocks(loom_arena *a, const loom_func *f,
                         const loom_stmt *body, const lower_compactions *C,
                         loom_stmt **out, loom_diag *d) {
  lower L = {.a = a, .d = d, .compact = C};
  /* The loops' ranges simplify compact and packed indices; without them
   * both are still right, only less simple. */
  L.ctx = loom_arith_ctx_new();
  if (L.ctx && lower_bind_ranges(L.ctx, body, 0) != LOOM_OK) {
    loom_arith_ctx_free(L.ctx);
    L.ctx = NULL;
  }
  loom_status st = LOOM_OK;
  for (int i = 0; i < f->n_params && st == LOOM_OK; i++) {
    const loom_param *p = &f->params[i];
    st = define(&L, p->var);
    if (!p->buffer || st != LOOM_OK)
      continue;
    st = define(&L, p->buffer->data);
    for (int k = 0; k < p->buffer->ndim && st == LOOM_OK; k++)
      if (p->buffer->shape[k]->kind == LOOM_EXPR_VAR)
        st = define(&L, p->buffer->shape[k]->u.var);
  }
  for (int i = 0; i < f->n_params && st == LOOM_OK; i++)
    if (f->params[i].buffer)
      st = own_layout(&L, f->params[i].buffer);
  if (st == LOOM_OK) {
    *out = wrap_lets(&L, 0, lower_stmt(&L, body));
    st = L.st != LOOM_OK ? L.st : *out ? loom_arena_status(a) : LOOM_NOMEM;
  }
  loom_ptrmap_free(&L.index);
  loom_ptrmap_free(&L.defined);
  free(L.layouts);
  free(L.lets.vars);
  free(L.lets.values);
  free(L.iters.vars);
  free(L.iters.values);
  loom_arith_ctx_free(L.ctx);
  return st;
}
