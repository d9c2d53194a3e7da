/* Buffer regions as integer sets: relaxing a region over loops, the region
 * a block touches as a function of the loops outside it (what compute-at,
 * cache-read/write and bound inference ask), and the union (hull) and
 * intersection of two regions. Dimensions that cannot be bounded cover the
 * whole buffer dimension and are flagged. */
#include "arith/arith_impl.h"

typedef struct builder {
  loom_arena *a;
  loom_arith_ctx *ctx;
  bool has_failed;
} builder;

static loom_expr *bin(builder *b, loom_expr_kind k, loom_expr *x, loom_expr *y) {
  loom_expr *r = x && y ? loom_ir_binary(b->a, k, x, y) : NULL;
  if (!r)
    b->has_failed = true;
  return r;
}

static loom_expr *konst(builder *b, loom_dtype t, int64_t v) {
  loom_expr *r = loom_ir_int(b->a, t, v);
  if (!r)
    b->has_failed = true;
  return r;
}

static loom_expr *simplify(builder *b, loom_expr *e) {
  loom_expr *r = e ? loom_arith_simplify(b->a, b->ctx, e) : NULL;
  if (!r)
    b->has_failed = true;
  return r;
}

/* min + extent - 1 */
static loom_expr *last_of(builder *b, loom_expr *min, loom_expr *extent) {
  if (!min || !extent)
    return NULL;
  if (!loom_dtype_eq(min->dtype, extent->dtype))
    extent = loom_ir_cast(b->a, min->dtype, extent);
  return bin(b, LOOM_EXPR_SUB, bin(b, LOOM_EXPR_ADD, min, extent),
             konst(b, min->dtype, 1));
}

static loom_range *new_ranges(builder *b, int n) {
  loom_range *r = loom_arena_alloc(b->a, (size_t)(n > 0 ? n : 1) * sizeof *r);
  if (!r)
    b->has_failed = true;
  return r;
}

static loom_status status(builder *b) {
  return b->has_failed || loom_arena_status(b->a) != LOOM_OK ? LOOM_NOMEM : LOOM_OK;
}

/* The whole of dimension k of buffer. */
static loom_range whole_dim(builder *b, const loom_buffer *buffer, int k) {
  loom_expr *dim = buffer && k < buffer->ndim ? buffer->shape[k] : NULL;
  return (loom_range){dim ? konst(b, dim->dtype, 0) : NULL, dim};
}

loom_status loom_arith_region_relax(loom_arena *a, loom_arith_ctx *ctx,
                                    const loom_buffer_region *r,
                                    const loom_arith_relax *relax, int n_relax,
                                    loom_buffer_region *out, bool *is_whole) {
  builder b = {a, ctx, false};
  loom_range *ranges = new_ranges(&b, r->n_ranges);
  if (!ranges)
    return LOOM_NOMEM;
  for (int k = 0; k < r->n_ranges; k++) {
    const loom_range *in = &r->ranges[k];
    loom_arith_intset lo = {.is_unbounded = true}, hi = {.is_unbounded = true};
    loom_expr *last = last_of(&b, in->min, in->extent);
    if (last) {
      TRY(loom_arith_intset_eval(a, ctx, in->min, relax, n_relax, &lo));
      TRY(loom_arith_intset_eval(a, ctx, last, relax, n_relax, &hi));
    }
    bool is_bounded = !lo.is_unbounded && !hi.is_unbounded &&
                      loom_dtype_eq(lo.min->dtype, hi.min->dtype);
    if (is_bounded) {
      loom_expr *top = last_of(&b, hi.min, hi.extent);
      loom_expr *ext = bin(&b, LOOM_EXPR_ADD, bin(&b, LOOM_EXPR_SUB, top, lo.min),
                           konst(&b, lo.min->dtype, 1));
      ranges[k] = (loom_range){lo.min, simplify(&b, ext)};
    } else {
      ranges[k] = whole_dim(&b, r->buffer, k);
    }
    if (is_whole)
      is_whole[k] = !is_bounded;
  }
  *out = (loom_buffer_region){r->buffer, ranges, r->n_ranges};
  return status(&b);
}

/* ---- block regions ---------------------------------------------------------- */

typedef struct subst {
  const loom_block *block;
  loom_expr *const *values;
  int n;
} subst;

static loom_expr *lookup(const subst *s, const loom_var *v) {
  for (int i = 0; i < s->block->n_iter_vars && i < s->n; i++)
    if (s->block->iter_vars[i].var == v)
      return s->values[i];
  return NULL;
}

/* e with the block's iterators replaced by their bindings; e itself when
 * none occurs. NULL when out of memory or nested too deeply. */
static loom_expr *substitute(builder *b, const subst *s, loom_expr *e, int depth) {
  if (!e || depth > ARITH_MAX_DEPTH) {
    b->has_failed = true;
    return NULL;
  }
  loom_expr *x, *y, *z, *r = e;
  switch (e->kind) {
  case LOOM_EXPR_VAR:
    x = lookup(s, e->u.var);
    return x ? x : e;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    x = substitute(b, s, e->u.unary.a, depth + 1);
    if (x && x != e->u.unary.a)
      r = e->kind == LOOM_EXPR_NOT ? loom_ir_not(b->a, x) : loom_ir_cast(b->a, e->dtype, x);
    break;
  case LOOM_EXPR_SELECT:
    x = substitute(b, s, e->u.select.cond, depth + 1);
    y = substitute(b, s, e->u.select.t, depth + 1);
    z = substitute(b, s, e->u.select.f, depth + 1);
    if (!x || !y || !z)
      return NULL;
    if (x != e->u.select.cond || y != e->u.select.t || z != e->u.select.f)
      r = loom_ir_select(b->a, x, y, z);
    break;
  case LOOM_EXPR_LOAD:
  case LOOM_EXPR_CALL: {
    bool is_load = e->kind == LOOM_EXPR_LOAD;
    int n = is_load ? e->u.load.n_indices : e->u.call.n_args;
    loom_expr **xs = is_load ? e->u.load.indices : e->u.call.args;
    loom_expr **ys = loom_arena_alloc(b->a, (size_t)(n > 0 ? n : 1) * sizeof *ys);
    bool is_changed = false;
    for (int i = 0; i < n && ys; i++) {
      if (!(ys[i] = substitute(b, s, xs[i], depth + 1)))
        return NULL;
      is_changed |= ys[i] != xs[i];
    }
    if (!ys)
      return NULL;
    if (is_changed)
      r = is_load ? loom_ir_load(b->a, e->u.load.buffer, ys, n)
                  : loom_ir_call(b->a, e->dtype, e->u.call.op, ys, n);
    break;
  }
  default:
    if (e->kind < LOOM_EXPR_ADD || e->kind > LOOM_EXPR_OR)
      return e; /* constants; lets and vectors keep their iterators */
    x = substitute(b, s, e->u.bin.a, depth + 1);
    y = substitute(b, s, e->u.bin.b, depth + 1);
    if (!x || !y)
      return NULL;
    if (x != e->u.bin.a || y != e->u.bin.b)
      r = loom_ir_binary(b->a, e->kind, x, y);
  }
  if (!r) {
    b->has_failed = true;
    return NULL;
  }
  if (r != e)
    r->dtype = e->dtype; /* not shared yet */
  return r;
}

loom_status loom_arith_block_region(loom_arena *a, loom_arith_ctx *ctx,
                                    const loom_stmt *realize,
                                    const loom_buffer *buffer, bool is_write,
                                    const loom_arith_relax *relax, int n_relax,
                                    loom_buffer_region *out, bool *is_whole,
                                    bool *is_found, loom_diag *d) {
  *is_found = false;
  if (!realize || realize->kind != LOOM_STMT_BLOCK_REALIZE)
    return loom_diag_error(d, realize ? realize->loc : (loom_loc){0},
                           "expected a block, not a %s",
                           realize ? loom_stmt_kind_name(realize->kind) : "nothing");
  const loom_block *blk = realize->u.realize.block;
  const loom_buffer_region *regions = is_write ? blk->writes : blk->reads;
  int n_regions = is_write ? blk->n_writes : blk->n_reads;
  builder b = {a, ctx, false};
  subst s = {blk, realize->u.realize.iter_values, realize->u.realize.n_iter_values};
  for (int i = 0; i < n_regions; i++) {
    const loom_buffer_region *r = &regions[i];
    if (r->buffer != buffer)
      continue;
    loom_range *ranges = new_ranges(&b, r->n_ranges);
    if (!ranges)
      return LOOM_NOMEM;
    for (int k = 0; k < r->n_ranges; k++) {
      ranges[k].min = substitute(&b, &s, r->ranges[k].min, 0);
      ranges[k].extent = substitute(&b, &s, r->ranges[k].extent, 0);
      if (!ranges[k].min || !ranges[k].extent)
        return LOOM_NOMEM;
    }
    loom_buffer_region bound = {r->buffer, ranges, r->n_ranges}, relaxed;
    bool *dims = loom_arena_alloc(a, (size_t)(r->n_ranges + 1) * sizeof *dims);
    if (!dims)
      return LOOM_NOMEM;
    TRY(loom_arith_region_relax(a, ctx, &bound, relax, n_relax, &relaxed, dims));
    /* A buffer named twice: the hull; a dimension is whole if either is. */
    if (*is_found)
      TRY(loom_arith_region_union(a, ctx, out, &relaxed, out, d));
    else
      *out = relaxed;
    for (int k = 0; is_whole && k < r->n_ranges; k++)
      is_whole[k] = (*is_found && is_whole[k]) || dims[k];
    *is_found = true;
  }
  return status(&b);
}

/* ---- union and intersection --------------------------------------------- */

static loom_status check_same_buffer(const loom_buffer_region *x,
                                     const loom_buffer_region *y,
                                     loom_diag *d) {
  if (x->buffer == y->buffer && x->n_ranges == y->n_ranges)
    return LOOM_OK;
  loom_loc nowhere = {0};
  return loom_diag_error(d, nowhere,
                         "cannot combine a region of '%s' with a region of "
                         "'%s': both must be of the same buffer",
                         x->buffer ? x->buffer->name : "?",
                         y->buffer ? y->buffer->name : "?");
}

static loom_arith_intset range_set(const loom_range *r) {
  return (loom_arith_intset){r->min, r->extent, 1, !r->min || !r->extent, false};
}

static loom_status combine(loom_arena *a, loom_arith_ctx *ctx,
                           const loom_buffer_region *x,
                           const loom_buffer_region *y, bool is_union,
                           loom_buffer_region *out, bool *is_empty,
                           loom_diag *d) {
  TRY(check_same_buffer(x, y, d));
  builder b = {a, ctx, false};
  loom_range *ranges = new_ranges(&b, x->n_ranges);
  if (!ranges)
    return LOOM_NOMEM;
  if (is_empty)
    *is_empty = false;
  for (int k = 0; k < x->n_ranges; k++) {
    loom_arith_intset sx = range_set(&x->ranges[k]), sy = range_set(&y->ranges[k]);
    loom_arith_intset s;
    TRY(is_union ? loom_arith_intset_union(a, ctx, &sx, &sy, &s)
                 : loom_arith_intset_intersect(a, ctx, &sx, &sy, &s));
    if (s.is_unbounded)
      ranges[k] = whole_dim(&b, x->buffer, k);
    else if (s.is_empty)
      ranges[k] = (loom_range){s.min, konst(&b, s.extent->dtype, 0)};
    else
      ranges[k] = (loom_range){s.min, s.extent};
    if (is_empty && s.is_empty && !s.is_unbounded)
      *is_empty = true;
  }
  *out = (loom_buffer_region){x->buffer, ranges, x->n_ranges};
  return status(&b);
}

loom_status loom_arith_region_union(loom_arena *a, loom_arith_ctx *ctx,
                                    const loom_buffer_region *x,
                                    const loom_buffer_region *y,
                                    loom_buffer_region *out, loom_diag *d) {
  return combine(a, ctx, x, y, true, out, NULL, d);
}

loom_status loom_arith_region_intersect(loom_arena *a, loom_arith_ctx *ctx,
                                        const loom_buffer_region *x,
                                        const loom_buffer_region *y,
                                        loom_buffer_region *out,
                                        bool *is_empty, loom_diag *d) {
  return combine(a, ctx, x, y, false, out, is_empty, d);
}
