/* Block access regions: what a block reads and writes, inferred from its body
 * the way TVM's script parser completes a block written without T.reads and
 * T.writes (block_access_region_detector.cc, script_complete.cc).
 *
 * Indices that depend on loops inside the block are relaxed over the loop
 * ranges by interval arithmetic whose bounds are affine forms (a constant
 * plus integer multiples of opaque terms), so that `vi * 16 + k` with k in
 * [0, 16) gives the range vi * 16 .. vi * 16 + 15, extent 16. */
#include "loom/ir.h"

#include <string.h>

#define MAX_DEPTH (4 * 200)

/* ---- affine forms -------------------------------------------------------- */

typedef struct term {
  loom_expr *e;
  int64_t coef;
} term;

/* c + sum(coef * e); ok is false after an overflow or a failed allocation,
 * and such a form bounds nothing. */
typedef struct affine {
  int64_t c;
  term *t;
  int n;
  loom_dtype dtype;
  bool ok;
} affine;

static affine aff_const(int64_t c, loom_dtype t) {
  affine x = {c, NULL, 0, t, true};
  return x;
}

static affine aff_bad(void) {
  affine x = {0, NULL, 0, LOOM_INT32, false};
  return x;
}

static affine aff_term(loom_arena *a, loom_expr *e) {
  affine x = aff_const(0, e->dtype);
  if (!(x.t = loom_arena_alloc(a, sizeof(term))))
    return aff_bad();
  x.t[0].e = e;
  x.t[0].coef = 1;
  x.n = 1;
  return x;
}

/* x + k * y */
static affine aff_add(loom_arena *a, affine x, affine y, int64_t k) {
  if (!x.ok || !y.ok)
    return aff_bad();
  affine r = aff_const(0, x.dtype);
  int64_t ky;
  if (__builtin_mul_overflow(k, y.c, &ky) ||
      __builtin_add_overflow(x.c, ky, &r.c))
    return aff_bad();
  if (x.n + y.n &&
      !(r.t = loom_arena_alloc(a, sizeof(term) * (size_t)(x.n + y.n))))
    return aff_bad();
  for (int i = 0; i < x.n; i++)
    r.t[r.n++] = x.t[i];
  for (int i = 0; i < y.n; i++) {
    int64_t coef;
    if (__builtin_mul_overflow(k, y.t[i].coef, &coef))
      return aff_bad();
    int j = 0;
    while (j < r.n && !loom_ir_same_expr(r.t[j].e, y.t[i].e))
      j++;
    if (j == r.n) {
      r.t[r.n].e = y.t[i].e;
      r.t[r.n++].coef = coef;
    } else if (__builtin_add_overflow(r.t[j].coef, coef, &r.t[j].coef)) {
      return aff_bad();
    }
  }
  int m = 0; /* drop cancelled terms */
  for (int i = 0; i < r.n; i++)
    if (r.t[i].coef)
      r.t[m++] = r.t[i];
  r.n = m;
  return r;
}

static affine aff_scale(loom_arena *a, affine x, int64_t k) {
  return aff_add(a, aff_const(0, x.dtype), x, k);
}

static bool aff_is_const(affine x, int64_t *v) {
  if (!x.ok || x.n)
    return false;
  *v = x.c;
  return true;
}

/* The constant y - x, when there is one. */
static bool aff_diff(loom_arena *a, affine x, affine y, int64_t *d) {
  return aff_is_const(aff_add(a, y, x, -1), d);
}

/* Splits e into an affine form over its non-affine parts. */
static affine linearize(loom_arena *a, loom_expr *e, int depth) {
  int64_t k;
  if (!e)
    return aff_bad();
  if (depth > MAX_DEPTH || !loom_dtype_is_int(e->dtype) || e->dtype.lanes != 1)
    return aff_term(a, e);
  switch (e->kind) {
  case LOOM_EXPR_INT: return aff_const(e->u.int_value, e->dtype);
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB: {
    affine x = linearize(a, e->u.bin.a, depth + 1);
    affine y = linearize(a, e->u.bin.b, depth + 1);
    affine r = aff_add(a, x, y, e->kind == LOOM_EXPR_ADD ? 1 : -1);
    r.dtype = e->dtype;
    return r.ok ? r : aff_term(a, e);
  }
  case LOOM_EXPR_MUL:
    if (loom_ir_is_const_int(e->u.bin.b, &k) ||
        loom_ir_is_const_int(e->u.bin.a, &k)) {
      loom_expr *other =
          e->u.bin.b->kind == LOOM_EXPR_INT ? e->u.bin.a : e->u.bin.b;
      affine r = aff_scale(a, linearize(a, other, depth + 1), k);
      r.dtype = e->dtype;
      return r.ok ? r : aff_term(a, e);
    }
    return aff_term(a, e);
  default: return aff_term(a, e);
  }
}

static loom_expr *int_of(loom_arena *a, loom_dtype t, int64_t v) {
  return loom_ir_int(a, t, v);
}

/* Rebuilds an expression in the order the terms first appeared: coefficient
 * 1 adds, -1 subtracts, others multiply; the constant goes last. */
static loom_expr *aff_to_expr(loom_arena *a, affine x) {
  if (!x.ok)
    return NULL;
  loom_expr *e = NULL;
  for (int i = 0; i < x.n; i++) {
    loom_expr *t = x.t[i].e;
    int64_t k = x.t[i].coef;
    if (!loom_dtype_eq(t->dtype, x.dtype) || k == INT64_MIN)
      return NULL;
    if (!e) {
      e = k == 1 ? t
                 : loom_ir_binary(a, LOOM_EXPR_MUL, t, int_of(a, x.dtype, k));
    } else if (k == 1 || k == -1) {
      e = loom_ir_binary(a, k == 1 ? LOOM_EXPR_ADD : LOOM_EXPR_SUB, e, t);
    } else {
      loom_expr *m = loom_ir_binary(a, LOOM_EXPR_MUL, t,
                                    int_of(a, x.dtype, k < 0 ? -k : k));
      e = loom_ir_binary(a, k < 0 ? LOOM_EXPR_SUB : LOOM_EXPR_ADD, e, m);
    }
    if (!e)
      return NULL;
  }
  if (!e)
    return int_of(a, x.dtype, x.c);
  if (x.c > 0)
    return loom_ir_binary(a, LOOM_EXPR_ADD, e, int_of(a, x.dtype, x.c));
  if (x.c < 0 && x.c != INT64_MIN)
    return loom_ir_binary(a, LOOM_EXPR_SUB, e, int_of(a, x.dtype, -x.c));
  return x.c == 0 ? e : NULL;
}

loom_expr *loom_ir_range_extent(loom_arena *a, loom_expr *lo, loom_expr *hi) {
  int64_t v;
  if (!lo || !hi)
    return NULL;
  if (loom_ir_is_const_int(lo, &v) && v == 0)
    return hi;
  /* lo + e, the way a range prints, gives e back unchanged. */
  if (hi->kind == LOOM_EXPR_ADD && loom_ir_same_expr(hi->u.bin.a, lo))
    return hi->u.bin.b;
  affine d = aff_add(a, linearize(a, hi, 0), linearize(a, lo, 0), -1);
  if (aff_is_const(d, &v))
    return loom_ir_int(a, hi->dtype, v);
  d.dtype = hi->dtype;
  loom_expr *e = d.ok ? aff_to_expr(a, d) : NULL;
  return e ? e : loom_ir_binary(a, LOOM_EXPR_SUB, hi, lo);
}

/* ---- intervals ----------------------------------------------------------- */

typedef struct ival {
  bool ok; /* false: unbounded */
  affine lo, hi;
} ival;

static ival iv_bad(void) {
  ival r = {false, aff_bad(), aff_bad()};
  return r;
}

static ival iv_point(affine x) {
  ival r = {x.ok, x, x};
  return r;
}

static ival iv_make(affine lo, affine hi) {
  ival r = {lo.ok && hi.ok, lo, hi};
  return r;
}

typedef struct dom_entry {
  loom_var *var;
  ival range;
} dom_entry;

/* One buffer's accessed region: per dimension nothing yet, an exact point
 * expression, an interval, or the whole extent. */
typedef enum { DS_EMPTY, DS_POINT, DS_IVAL, DS_FULL } ds_state;

typedef struct dimset {
  ds_state st;
  loom_expr *point;
  affine lo, hi;
  bool is_hull; /* lo and hi are T.min / T.max of bounds that do not compare */
} dimset;

typedef struct access {
  loom_buffer *buffer;
  dimset *dims;
} access;

typedef struct vec {
  void *items;
  int n, cap;
} vec;

typedef struct rctx {
  loom_arena *a;
  loom_diag *d;
  const loom_block *block;
  loom_buffer *const *outer;
  int n_outer;
  vec dom;    /* dom_entry: loops inside the block, innermost last */
  vec reads;  /* access */
  vec writes; /* access */
  loom_status status;
} rctx;

static void *vec_push(rctx *r, vec *v, size_t elem) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    void *items = loom_arena_alloc(r->a, elem * (size_t)cap);
    if (!items) {
      r->status = LOOM_NOMEM;
      return NULL;
    }
    if (v->n)
      memcpy(items, v->items, elem * (size_t)v->n);
    v->items = items;
    v->cap = cap;
  }
  return (char *)v->items + elem * (size_t)v->n++;
}

static const ival *dom_of(const rctx *r, const loom_var *v) {
  const dom_entry *d = r->dom.items;
  for (int i = r->dom.n - 1; i >= 0; i--)
    if (d[i].var == v)
      return &d[i].range;
  return NULL;
}

static loom_visit stop_at_relaxed(void *ctx, loom_expr *e) {
  return e->kind == LOOM_EXPR_VAR && dom_of(ctx, e->u.var) ? LOOM_VISIT_STOP
                                                          : LOOM_VISIT_GO;
}

/* Whether e uses a loop inside the block. */
static bool has_relaxed(const rctx *r, const loom_expr *e) {
  loom_ir_visitor v = {.expr_pre = stop_at_relaxed, .ctx = (void *)r};
  return !loom_ir_visit_expr(&v, e);
}

static int64_t floordiv64(int64_t x, int64_t k) {
  int64_t q = x / k;
  return (x % k != 0 && (x < 0) != (k < 0)) ? q - 1 : q;
}

/* floor(x / k) for k > 0, exact when every coefficient is a multiple of k,
 * else an opaque term. */
static affine aff_floordiv(rctx *r, affine x, int64_t k) {
  if (!x.ok)
    return x;
  bool exact = true;
  for (int i = 0; i < x.n; i++)
    exact &= x.t[i].coef % k == 0;
  if (exact) {
    affine y = aff_const(floordiv64(x.c, k), x.dtype);
    for (int i = 0; i < x.n && y.ok; i++) {
      affine t = aff_term(r->a, x.t[i].e);
      y = aff_add(r->a, y, t, x.t[i].coef / k);
    }
    return y;
  }
  loom_expr *e = aff_to_expr(r->a, x);
  loom_expr *q = e ? loom_ir_binary(r->a, LOOM_EXPR_FLOORDIV, e,
                                    loom_ir_int(r->a, x.dtype, k))
                   : NULL;
  return q ? aff_term(r->a, q) : aff_bad();
}

static ival eval(rctx *r, loom_expr *e, int depth);

static ival eval_floormod(rctx *r, ival x, int64_t k, loom_dtype t) {
  int64_t d;
  bool aligned = x.ok;
  for (int i = 0; aligned && i < x.lo.n; i++)
    aligned = x.lo.t[i].coef % k == 0;
  if (aligned && aff_diff(r->a, x.lo, x.hi, &d) && d >= 0) {
    int64_t rem = x.lo.c - floordiv64(x.lo.c, k) * k;
    if (d < k - rem)
      return iv_make(aff_const(rem, t), aff_const(rem + d, t));
  }
  return iv_make(aff_const(0, t), aff_const(k - 1, t));
}

/* min or max of two intervals, when their bounds compare. */
static ival eval_minmax(rctx *r, ival x, ival y, bool is_min) {
  int64_t dl, dh;
  if (!x.ok || !y.ok || !aff_diff(r->a, x.lo, y.lo, &dl) ||
      !aff_diff(r->a, x.hi, y.hi, &dh))
    return iv_bad();
  /* dl = y.lo - x.lo */
  affine lo = (dl < 0) == is_min ? y.lo : x.lo;
  affine hi = (dh < 0) == is_min ? y.hi : x.hi;
  if (dl == 0)
    lo = x.lo;
  if (dh == 0)
    hi = x.hi;
  return iv_make(lo, hi);
}

static ival eval_kind(rctx *r, loom_expr *e, int depth) {
  int64_t k;
  switch (e->kind) {
  case LOOM_EXPR_VAR: {
    const ival *d = dom_of(r, e->u.var);
    return d ? *d : iv_point(linearize(r->a, e, depth));
  }
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB: {
    ival x = eval(r, e->u.bin.a, depth + 1), y = eval(r, e->u.bin.b, depth + 1);
    if (!x.ok || !y.ok)
      return iv_bad();
    if (e->kind == LOOM_EXPR_ADD)
      return iv_make(aff_add(r->a, x.lo, y.lo, 1),
                     aff_add(r->a, x.hi, y.hi, 1));
    return iv_make(aff_add(r->a, x.lo, y.hi, -1),
                   aff_add(r->a, x.hi, y.lo, -1));
  }
  case LOOM_EXPR_MUL: {
    loom_expr *other;
    if (loom_ir_is_const_int(e->u.bin.b, &k))
      other = e->u.bin.a;
    else if (loom_ir_is_const_int(e->u.bin.a, &k))
      other = e->u.bin.b;
    else
      return iv_bad();
    ival x = eval(r, other, depth + 1);
    if (!x.ok)
      return x;
    affine lo = aff_scale(r->a, x.lo, k), hi = aff_scale(r->a, x.hi, k);
    return k >= 0 ? iv_make(lo, hi) : iv_make(hi, lo);
  }
  case LOOM_EXPR_FLOORDIV:
  case LOOM_EXPR_DIV: {
    if (!loom_ir_is_const_int(e->u.bin.b, &k) || k <= 0)
      return iv_bad();
    ival x = eval(r, e->u.bin.a, depth + 1);
    int64_t lo;
    /* Truncating division agrees with floor division on non-negatives. */
    if (!x.ok ||
        (e->kind == LOOM_EXPR_DIV && !(aff_is_const(x.lo, &lo) && lo >= 0)))
      return iv_bad();
    return iv_make(aff_floordiv(r, x.lo, k), aff_floordiv(r, x.hi, k));
  }
  case LOOM_EXPR_FLOORMOD:
  case LOOM_EXPR_MOD: {
    if (!loom_ir_is_const_int(e->u.bin.b, &k) || k <= 0)
      return iv_bad();
    ival x = eval(r, e->u.bin.a, depth + 1);
    int64_t lo;
    if (!x.ok ||
        (e->kind == LOOM_EXPR_MOD && !(aff_is_const(x.lo, &lo) && lo >= 0)))
      return iv_bad();
    return eval_floormod(r, x, k, e->dtype);
  }
  case LOOM_EXPR_MIN:
  case LOOM_EXPR_MAX:
    return eval_minmax(r, eval(r, e->u.bin.a, depth + 1),
                       eval(r, e->u.bin.b, depth + 1),
                       e->kind == LOOM_EXPR_MIN);
  default: return iv_bad();
  }
}

static ival eval(rctx *r, loom_expr *e, int depth) {
  if (!e || depth > MAX_DEPTH || !loom_dtype_is_int(e->dtype) ||
      e->dtype.lanes != 1)
    return iv_bad();
  if (!has_relaxed(r, e))
    return iv_point(linearize(r->a, e, depth));
  return eval_kind(r, e, depth);
}

/* ---- accumulating regions ------------------------------------------------ */

/* What one access covers in one dimension. */
typedef struct item {
  ds_state st; /* DS_POINT, DS_IVAL or DS_FULL */
  loom_expr *point;
  affine lo, hi;
} item;

static item item_of_index(rctx *r, loom_expr *idx) {
  item it = {DS_FULL, NULL, aff_bad(), aff_bad()};
  if (!has_relaxed(r, idx)) {
    it.st = DS_POINT;
    it.point = idx;
    return it;
  }
  ival v = eval(r, idx, 0);
  if (v.ok) {
    it.st = DS_IVAL;
    it.lo = v.lo;
    it.hi = v.hi;
  }
  return it;
}

/* [min, min + extent - 1] relaxed over the loops in scope. */
static item item_of_range(rctx *r, loom_expr *min, loom_expr *extent) {
  int64_t n;
  item it = {DS_FULL, NULL, aff_bad(), aff_bad()};
  if (loom_ir_is_const_int(extent, &n) && n == 1)
    return item_of_index(r, min);
  ival m = eval(r, min, 0), x = eval(r, extent, 0);
  if (!m.ok || !x.ok)
    return it;
  it.st = DS_IVAL;
  it.lo = m.lo;
  it.hi =
      aff_add(r->a, aff_add(r->a, m.hi, x.hi, 1), aff_const(1, m.hi.dtype), -1);
  if (!it.hi.ok)
    it.st = DS_FULL;
  return it;
}

static void to_interval(rctx *r, dimset *d) {
  if (d->st == DS_POINT) {
    d->lo = d->hi = linearize(r->a, d->point, 0);
    d->st = d->lo.ok ? DS_IVAL : DS_FULL;
  }
}

/* T.min(x, y) or T.max(x, y) of bounds that do not compare, as TVM's
 * interval union writes them. */
static affine hull_bound(rctx *r, loom_expr_kind k, affine x, affine y) {
  loom_expr *a = aff_to_expr(r->a, x), *b = aff_to_expr(r->a, y);
  loom_expr *e = a && b ? loom_ir_binary(r->a, k, a, b) : NULL;
  return e ? aff_term(r->a, e) : aff_bad();
}

/* Merges an access into a dimension: the hull of two intervals whose
 * bounds compare, else the whole extent. */
static void merge(rctx *r, dimset *d, item it) {
  if (d->st == DS_FULL)
    return;
  if (it.st == DS_FULL) {
    d->st = DS_FULL;
    return;
  }
  if (d->st == DS_EMPTY) {
    d->st = it.st;
    d->point = it.point;
    d->lo = it.lo;
    d->hi = it.hi;
    return;
  }
  if (d->st == DS_POINT && it.st == DS_POINT &&
      loom_ir_same_expr(d->point, it.point))
    return;
  to_interval(r, d);
  if (it.st == DS_POINT) {
    it.lo = it.hi = linearize(r->a, it.point, 0);
    it.st = DS_IVAL;
  }
  int64_t dl, dh;
  if (d->st != DS_IVAL || !it.lo.ok || !it.hi.ok) {
    d->st = DS_FULL;
    return;
  }
  bool lo_cmp = aff_diff(r->a, d->lo, it.lo, &dl);
  bool hi_cmp = aff_diff(r->a, d->hi, it.hi, &dh);
  if (lo_cmp && dl < 0) /* it.lo - d.lo < 0 */
    d->lo = it.lo;
  if (hi_cmp && dh > 0)
    d->hi = it.hi;
  if (!lo_cmp)
    d->lo = hull_bound(r, LOOM_EXPR_MIN, d->lo, it.lo);
  if (!hi_cmp)
    d->hi = hull_bound(r, LOOM_EXPR_MAX, d->hi, it.hi);
  if (!d->lo.ok || !d->hi.ok)
    d->st = DS_FULL;
  d->is_hull |= !lo_cmp || !hi_cmp;
}

static bool is_outer_data(const rctx *r, const loom_var *v) {
  for (int i = 0; i < r->n_outer; i++)
    if (r->outer[i]->data == v)
      return true;
  return false;
}

/* The data of an outer buffer, or of a view of one that the block matches. */
static bool is_visible_data(const rctx *r, const loom_var *v) {
  if (is_outer_data(r, v))
    return true;
  for (int i = 0; i < r->block->n_match_buffers; i++)
    if (r->block->match_buffers[i].buffer->data == v &&
        is_outer_data(r, r->block->match_buffers[i].source.buffer->data))
      return true;
  return false;
}

static void record(rctx *r, vec *acc, loom_buffer *b, item *items);

/* An access to a match_buffer view counts on the region it views, with
 * the view's dimensions laid over the trailing dimensions of the source. */
static void record_view(rctx *r, vec *acc, const loom_match_buffer *m,
                        item *items) {
  const loom_buffer_region *src = &m->source;
  loom_buffer *view = m->buffer;
  int n = src->n_ranges, off = n - view->ndim;
  item *out = loom_arena_alloc(r->a, sizeof(item) * (size_t)(n ? n : 1));
  if (!out) {
    r->status = LOOM_NOMEM;
    return;
  }
  int64_t one;
  bool ok = off >= 0;
  for (int i = 0; ok && i < off; i++)
    ok = loom_ir_is_const_int(src->ranges[i].extent, &one) && one == 1;
  for (int i = 0; i < n; i++) {
    out[i].st = DS_FULL;
    if (!ok)
      continue;
    if (i < off) {
      out[i] = item_of_index(r, src->ranges[i].min);
      continue;
    }
    const item *it = &items[i - off];
    loom_expr *smin = src->ranges[i].min;
    int64_t z;
    if (it->st == DS_POINT) {
      loom_expr *p = loom_ir_is_const_int(it->point, &z) && z == 0 ? smin
                     : loom_ir_is_const_int(smin, &z) && z == 0
                         ? it->point
                         : loom_ir_binary(r->a, LOOM_EXPR_ADD, smin, it->point);
      if (p)
        out[i] = item_of_index(r, p);
    } else if (it->st == DS_IVAL) {
      affine base = linearize(r->a, smin, 0);
      out[i].st = DS_IVAL;
      out[i].lo = aff_add(r->a, base, it->lo, 1);
      out[i].hi = aff_add(r->a, base, it->hi, 1);
      if (!out[i].lo.ok || !out[i].hi.ok)
        out[i].st = DS_FULL;
    } else {
      out[i] = item_of_range(r, smin, src->ranges[i].extent);
    }
  }
  record(r, acc, src->buffer, out);
}

static void record(rctx *r, vec *acc, loom_buffer *b, item *items) {
  for (int i = 0; i < r->block->n_match_buffers; i++) {
    const loom_match_buffer *m = &r->block->match_buffers[i];
    if (m->buffer == b) {
      if (is_outer_data(r, m->source.buffer->data))
        record_view(r, acc, m, items);
      return;
    }
  }
  if (!is_outer_data(r, b->data))
    return;
  access *x = NULL;
  for (int i = 0; i < acc->n && !x; i++)
    if (((access *)acc->items)[i].buffer == b)
      x = &((access *)acc->items)[i];
  if (!x) {
    if (!(x = vec_push(r, acc, sizeof(access))))
      return;
    x->buffer = b;
    x->dims = loom_arena_alloc(r->a, sizeof(dimset) *
                                         (size_t)(b->ndim ? b->ndim : 1));
    if (!x->dims) {
      r->status = LOOM_NOMEM;
      return;
    }
  }
  for (int i = 0; i < b->ndim; i++)
    merge(r, &x->dims[i], items[i]);
}

static item *items_alloc(rctx *r, int n) {
  item *it = loom_arena_alloc(r->a, sizeof(item) * (size_t)(n ? n : 1));
  if (!it)
    r->status = LOOM_NOMEM;
  return it;
}

static void record_indices(rctx *r, vec *acc, loom_buffer *b, loom_expr **idx,
                           int n) {
  item *it = items_alloc(r, n);
  if (!it || n != b->ndim)
    return;
  for (int i = 0; i < n; i++)
    it[i] = item_of_index(r, idx[i]);
  record(r, acc, b, it);
}

static void record_full(rctx *r, vec *acc, loom_buffer *b) {
  item *it = items_alloc(r, b->ndim);
  if (!it)
    return;
  for (int i = 0; i < b->ndim; i++)
    it[i].st = DS_FULL;
  record(r, acc, b, it);
}

/* ---- visiting the block -------------------------------------------------- */

static void opaque(rctx *r, const loom_var *v) {
  if (r->status != LOOM_OK)
    return;
  const char *name = v->name ? v->name : "?";
  r->status = loom_diag_error(
      r->d, r->block->loc,
      "cannot infer the regions block '%s' accesses: it uses the data pointer "
      "of buffer '%s' directly; write T.reads and T.writes for this block",
      r->block->name, name);
}

static bool access_ptr(rctx *r, loom_expr *e) {
  loom_expr **args = e->u.call.args;
  int64_t mask;
  if (e->u.call.n_args != 5 || args[1]->kind != LOOM_EXPR_VAR ||
      !loom_ir_is_const_int(args[4], &mask))
    return false;
  loom_buffer *b = NULL;
  for (int i = 0; i < r->n_outer && !b; i++)
    if (r->outer[i]->data == args[1]->u.var)
      b = r->outer[i];
  if (!b)
    return true; /* not a buffer of ours: nothing to record */
  if ((mask & 1) && (mask & 2))
    opaque(r, args[1]->u.var);
  else if (mask & 1)
    record_full(r, &r->reads, b);
  else if (mask & 2)
    record_full(r, &r->writes, b);
  return true;
}

/* Records the regions rs of the block realized by `realize`, with its iter
 * vars replaced by their bindings. */
static void child_regions(rctx *r, vec *acc, const loom_stmt *realize,
                          const loom_buffer_region *rs, int n) {
  const loom_block *b = realize->u.realize.block;
  loom_var **vars = loom_arena_alloc(
      r->a, sizeof *vars * (size_t)(b->n_iter_vars ? b->n_iter_vars : 1));
  if (!vars) {
    r->status = LOOM_NOMEM;
    return;
  }
  for (int i = 0; i < b->n_iter_vars; i++)
    vars[i] = b->iter_vars[i].var;
  loom_expr **values = realize->u.realize.iter_values;
  for (int k = 0; k < n && r->status == LOOM_OK; k++) {
    const loom_buffer_region *reg = &rs[k];
    item *it = items_alloc(r, reg->n_ranges);
    if (!it || reg->n_ranges != reg->buffer->ndim)
      return;
    for (int i = 0; i < reg->n_ranges; i++) {
      loom_expr *min = loom_ir_substitute_expr(r->a, reg->ranges[i].min, vars,
                                               values, b->n_iter_vars);
      loom_expr *ext = loom_ir_substitute_expr(r->a, reg->ranges[i].extent,
                                               vars, values, b->n_iter_vars);
      if (!min || !ext) {
        r->status = LOOM_NOMEM;
        return;
      }
      it[i] = item_of_range(r, min, ext);
    }
    record(r, acc, reg->buffer, it);
  }
}

/* Loads read, a visible buffer's data pointer makes the block opaque, and
 * tvm_access_ptr reads or writes a whole buffer. */
static loom_visit on_expr(void *ctx, loom_expr *e) {
  rctx *r = ctx;
  if (e->kind == LOOM_EXPR_VAR && is_visible_data(r, e->u.var))
    opaque(r, e->u.var);
  else if (e->kind == LOOM_EXPR_LOAD)
    record_indices(r, &r->reads, e->u.load.buffer, e->u.load.indices,
                   e->u.load.n_indices);
  else if (e->kind == LOOM_EXPR_CALL &&
           e->u.call.op == LOOM_OP_TVM_ACCESS_PTR && access_ptr(r, e))
    return r->status == LOOM_OK ? LOOM_VISIT_SKIP : LOOM_VISIT_STOP;
  return r->status == LOOM_OK ? LOOM_VISIT_GO : LOOM_VISIT_STOP;
}

/* A loop's range is bound for its body; a store writes; a nested block
 * counts through its regions, with its iter vars replaced by their
 * bindings, and is not entered. */
static loom_visit on_stmt(void *ctx, loom_stmt *s) {
  rctx *r = ctx;
  if (s->kind == LOOM_STMT_FOR) {
    ival m = eval(r, s->u.loop.min, 0), x = eval(r, s->u.loop.extent, 0);
    dom_entry *d = vec_push(r, &r->dom, sizeof(dom_entry));
    if (!d)
      return LOOM_VISIT_STOP;
    d->var = s->u.loop.var;
    d->range = iv_bad();
    if (m.ok && x.ok)
      d->range = iv_make(m.lo, aff_add(r->a, aff_add(r->a, m.hi, x.hi, 1),
                                       aff_const(1, m.hi.dtype), -1));
  } else if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
    const loom_block *b = s->u.realize.block;
    child_regions(r, &r->reads, s, b->reads, b->n_reads);
    child_regions(r, &r->writes, s, b->writes, b->n_writes);
    return r->status == LOOM_OK ? LOOM_VISIT_SKIP : LOOM_VISIT_STOP;
  } else if (s->kind == LOOM_STMT_STORE) {
    record_indices(r, &r->writes, s->u.store.buffer, s->u.store.indices,
                   s->u.store.n_indices);
  }
  return r->status == LOOM_OK ? LOOM_VISIT_GO : LOOM_VISIT_STOP;
}

static loom_visit after_stmt(void *ctx, loom_stmt *s) {
  if (s->kind == LOOM_STMT_FOR)
    ((rctx *)ctx)->dom.n--;
  return LOOM_VISIT_GO;
}

/* ---- results ------------------------------------------------------------- */

/* max + 1 - min: as TVM leaves it for a hull of T.min and T.max, folded as
 * an affine form otherwise. */
static loom_expr *symbolic_extent(rctx *r, const dimset *d, loom_expr *min) {
  loom_arena *a = r->a;
  if (d->is_hull) {
    loom_expr *hi = aff_to_expr(a, d->hi);
    loom_expr *one = loom_ir_int(a, min->dtype, 1);
    loom_expr *sum =
        hi && one ? loom_ir_binary(a, LOOM_EXPR_ADD, hi, one) : NULL;
    return sum ? loom_ir_binary(a, LOOM_EXPR_SUB, sum, min) : NULL;
  }
  return aff_to_expr(a, aff_add(a, aff_add(a, d->hi, d->lo, -1),
                                aff_const(1, d->lo.dtype), 1));
}

static loom_status cover(rctx *r, const access *x, loom_buffer_region *out) {
  loom_buffer *b = x->buffer;
  out->buffer = b;
  out->n_ranges = b->ndim;
  out->ranges = loom_arena_alloc(r->a, sizeof(loom_range) *
                                           (size_t)(b->ndim ? b->ndim : 1));
  if (!out->ranges)
    return LOOM_NOMEM;
  for (int i = 0; i < b->ndim; i++) {
    dimset *d = &x->dims[i];
    loom_range *rg = &out->ranges[i];
    int64_t diff;
    bool is_const = d->st == DS_IVAL && aff_diff(r->a, d->lo, d->hi, &diff);
    rg->min = rg->extent = NULL;
    if (d->st == DS_POINT) {
      rg->min = d->point;
      rg->extent = loom_ir_int(r->a, d->point->dtype, 1);
    } else if (is_const && diff >= 0 && diff < INT64_MAX) {
      rg->min = aff_to_expr(r->a, d->lo);
      rg->extent = rg->min ? loom_ir_int(r->a, rg->min->dtype, diff + 1) : NULL;
    } else if (d->st == DS_IVAL && !is_const) {
      rg->min = aff_to_expr(r->a, d->lo);
      rg->extent = rg->min ? symbolic_extent(r, d, rg->min) : NULL;
    }
    if (!rg->min || !rg->extent) { /* unbounded, or not expressible */
      rg->min = loom_ir_int(r->a, b->shape[i]->dtype, 0);
      rg->extent = b->shape[i];
    }
    if (!rg->min)
      return LOOM_NOMEM;
  }
  return LOOM_OK;
}

static loom_status collect(rctx *r, const vec *acc, const vec *exclude,
                           loom_buffer_region **out, int *n) {
  loom_buffer_region *rs = loom_arena_alloc(
      r->a, sizeof(loom_buffer_region) * (size_t)(acc->n ? acc->n : 1));
  if (!rs)
    return LOOM_NOMEM;
  int k = 0;
  for (int i = 0; i < acc->n; i++) {
    const access *x = &((const access *)acc->items)[i];
    bool skip = false;
    for (int j = 0; exclude && j < exclude->n && !skip; j++)
      skip = ((const access *)exclude->items)[j].buffer == x->buffer;
    if (skip)
      continue;
    TRY(cover(r, x, &rs[k++]));
  }
  *out = k ? rs : NULL;
  *n = k;
  return LOOM_OK;
}

loom_status loom_ir_infer_block_regions(loom_arena *a, loom_block *b,
                                        bool want_reads, bool want_writes,
                                        loom_buffer *const *outer, int n_outer,
                                        loom_diag *d) {
  rctx r = {0};
  r.a = a;
  r.d = d;
  r.block = b;
  r.outer = outer;
  r.n_outer = n_outer;
  r.status = LOOM_OK;
  /* The block's own iter var domains and match sources, init and body:
   * the walk of a realize of b without its bindings and regions. */
  loom_ir_visitor v = {.stmt_pre = on_stmt, .stmt_post = after_stmt,
                       .expr_pre = on_expr, .ctx = &r};
  for (int i = 0; i < b->n_iter_vars; i++) {
    loom_ir_visit_expr(&v, b->iter_vars[i].dom.min);
    loom_ir_visit_expr(&v, b->iter_vars[i].dom.extent);
  }
  for (int i = 0; i < b->n_match_buffers; i++)
    for (int j = 0; j < b->match_buffers[i].source.n_ranges; j++) {
      loom_ir_visit_expr(&v, b->match_buffers[i].source.ranges[j].min);
      loom_ir_visit_expr(&v, b->match_buffers[i].source.ranges[j].extent);
    }
  loom_ir_visit_stmt(&v, b->init);
  loom_ir_visit_stmt(&v, b->body);
  TRY(r.status);
  if (want_writes)
    TRY(collect(&r, &r.writes, NULL, &b->writes, &b->n_writes));
  if (want_reads)
    TRY(collect(&r, &r.reads, b->init ? &r.writes : NULL, &b->reads,
                &b->n_reads));
  return LOOM_OK;
}
