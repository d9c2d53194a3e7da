/* Integer sets: symbolic interval arithmetic over loop ranges (TVM's
 * EvalSet in spirit). A subexpression that mentions no relaxed variable is a
 * single point; relaxed variables become the interval of their range; each
 * operation widens soundly or gives up (unbounded). The expression is first
 * put in canonical linear form so that each relaxed variable appears once
 * in a sum, which keeps affine bounds exact. */
#include "arith/arith_impl.h"

/* Relaxed variables whose ranges refer to each other this deep give up. */
#define INTSET_MAX_NEST 32

typedef struct sym {
  loom_expr *lo, *hi; /* inclusive; both NULL when unbounded */
} sym;

typedef struct evaluator {
  loom_arena *a;
  loom_arith_ctx *ctx;
  const loom_arith_relax *relax;
  int n_relax;
  int nest;
  bool has_failed; /* out of memory */
} evaluator;

static const sym unbounded = {NULL, NULL};

static bool is_bounded(sym s) { return s.lo && s.hi; }

static int find_relaxed(const evaluator *ev, const loom_var *v) {
  for (int i = 0; i < ev->n_relax; i++)
    if (ev->relax[i].var == v)
      return i;
  return -1;
}

/* Whether e mentions a relaxed variable. Unknown node shapes count as
 * mentioning one, which only makes the answer coarser. */
static bool uses_relaxed(const evaluator *ev, const loom_expr *e, int depth) {
  if (!e)
    return false;
  if (depth > ARITH_MAX_DEPTH)
    return true;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR: return false;
  case LOOM_EXPR_VAR: return find_relaxed(ev, e->u.var) >= 0;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST: return uses_relaxed(ev, e->u.unary.a, depth + 1);
  case LOOM_EXPR_SELECT:
    return uses_relaxed(ev, e->u.select.cond, depth + 1) ||
           uses_relaxed(ev, e->u.select.t, depth + 1) ||
           uses_relaxed(ev, e->u.select.f, depth + 1);
  case LOOM_EXPR_LOAD:
    for (int i = 0; i < e->u.load.n_indices; i++)
      if (uses_relaxed(ev, e->u.load.indices[i], depth + 1))
        return true;
    return false;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      if (uses_relaxed(ev, e->u.call.args[i], depth + 1))
        return true;
    return false;
  case LOOM_EXPR_LET:
    return uses_relaxed(ev, e->u.let.value, depth + 1) ||
           uses_relaxed(ev, e->u.let.body, depth + 1);
  case LOOM_EXPR_RAMP:
    return uses_relaxed(ev, e->u.ramp.base, depth + 1) ||
           uses_relaxed(ev, e->u.ramp.stride, depth + 1);
  case LOOM_EXPR_BROADCAST:
    return uses_relaxed(ev, e->u.broadcast.value, depth + 1);
  default:
    return uses_relaxed(ev, e->u.bin.a, depth + 1) ||
           uses_relaxed(ev, e->u.bin.b, depth + 1);
  }
}

static loom_expr *konst(evaluator *ev, loom_dtype t, int64_t v) {
  loom_expr *r = loom_ir_int(ev->a, t, v);
  if (!r)
    ev->has_failed = true;
  return r;
}

static loom_expr *bin(evaluator *ev, loom_expr_kind k, loom_expr *x,
                      loom_expr *y) {
  loom_expr *r = x && y ? loom_ir_binary(ev->a, k, x, y) : NULL;
  if (!r)
    ev->has_failed = true;
  return r;
}

/* e as dtype t, for range bounds written in another integer width. */
static loom_expr *as_dtype(evaluator *ev, loom_expr *e, loom_dtype t) {
  if (!e || loom_dtype_eq(e->dtype, t))
    return e;
  loom_expr *r = loom_ir_cast(ev->a, t, e);
  if (!r)
    ev->has_failed = true;
  return r;
}

static loom_arith_truth prove(evaluator *ev, loom_expr_kind k, loom_expr *x,
                              loom_expr *y) {
  loom_expr *c = bin(ev, k, x, y);
  return c ? loom_arith_can_prove(ev->ctx, c) : LOOM_ARITH_UNKNOWN;
}

static sym point(loom_expr *e) { return (sym){e, e}; }

static sym eval(evaluator *ev, loom_expr *e, int depth);

static sym relaxed_var(evaluator *ev, loom_expr *e, int at) {
  const loom_range *r = &ev->relax[at].range;
  if (!r->min || !r->extent || ev->nest >= INTSET_MAX_NEST)
    return unbounded;
  ev->nest++;
  loom_expr *last = bin(ev, LOOM_EXPR_SUB,
                        bin(ev, LOOM_EXPR_ADD, r->min, as_dtype(ev, r->extent, r->min->dtype)),
                        konst(ev, r->min->dtype, 1));
  sym lo = eval(ev, r->min, 0);
  sym hi = last ? eval(ev, last, 0) : unbounded;
  ev->nest--;
  if (!is_bounded(lo) || !is_bounded(hi))
    return unbounded;
  return (sym){as_dtype(ev, lo.lo, e->dtype), as_dtype(ev, hi.hi, e->dtype)};
}

/* [x.lo * c, x.hi * c] for a point factor c of known sign. */
static sym scale(evaluator *ev, sym x, loom_expr *c) {
  loom_expr *zero = konst(ev, c->dtype, 0);
  if (prove(ev, LOOM_EXPR_GE, c, zero) == LOOM_ARITH_TRUE)
    return (sym){bin(ev, LOOM_EXPR_MUL, x.lo, c), bin(ev, LOOM_EXPR_MUL, x.hi, c)};
  if (prove(ev, LOOM_EXPR_LE, c, zero) == LOOM_ARITH_TRUE)
    return (sym){bin(ev, LOOM_EXPR_MUL, x.hi, c), bin(ev, LOOM_EXPR_MUL, x.lo, c)};
  return unbounded;
}

static bool const_of(const sym *s, int64_t *lo, int64_t *hi) {
  return loom_ir_is_const_int(s->lo, lo) && loom_ir_is_const_int(s->hi, hi);
}

static sym mul(evaluator *ev, loom_expr *e, sym x, sym y) {
  if (x.lo == x.hi)
    return scale(ev, y, x.lo);
  if (y.lo == y.hi)
    return scale(ev, x, y.lo);
  int64_t a0, a1, b0, b1;
  if (!const_of(&x, &a0, &a1) || !const_of(&y, &b0, &b1))
    return unbounded;
  int64_t c[4], lo = INT64_MAX, hi = INT64_MIN;
  if (__builtin_mul_overflow(a0, b0, &c[0]) || __builtin_mul_overflow(a0, b1, &c[1]) ||
      __builtin_mul_overflow(a1, b0, &c[2]) || __builtin_mul_overflow(a1, b1, &c[3]))
    return unbounded;
  for (int i = 0; i < 4; i++) {
    lo = c[i] < lo ? c[i] : lo;
    hi = c[i] > hi ? c[i] : hi;
  }
  return (sym){konst(ev, e->dtype, lo), konst(ev, e->dtype, hi)};
}

/* Floor division by a point divisor of known sign is monotone. */
static sym floordiv(evaluator *ev, sym x, loom_expr *c) {
  loom_expr *zero = konst(ev, c->dtype, 0);
  if (prove(ev, LOOM_EXPR_GT, c, zero) == LOOM_ARITH_TRUE)
    return (sym){bin(ev, LOOM_EXPR_FLOORDIV, x.lo, c),
                 bin(ev, LOOM_EXPR_FLOORDIV, x.hi, c)};
  if (prove(ev, LOOM_EXPR_LT, c, zero) == LOOM_ARITH_TRUE)
    return (sym){bin(ev, LOOM_EXPR_FLOORDIV, x.hi, c),
                 bin(ev, LOOM_EXPR_FLOORDIV, x.lo, c)};
  return unbounded;
}

/* x mod c for c > 0: x's own interval, shifted, when it does not wrap;
 * otherwise [0, c - 1]. */
static sym floormod(evaluator *ev, loom_expr *e, sym x, loom_expr *c) {
  loom_expr *zero = konst(ev, c->dtype, 0);
  if (prove(ev, LOOM_EXPR_GT, c, zero) != LOOM_ARITH_TRUE)
    return unbounded;
  loom_expr *qlo = bin(ev, LOOM_EXPR_FLOORDIV, x.lo, c);
  loom_expr *qhi = bin(ev, LOOM_EXPR_FLOORDIV, x.hi, c);
  if (qlo && qhi) {
    loom_expr *slo = loom_arith_simplify(ev->a, ev->ctx, qlo);
    loom_expr *shi = loom_arith_simplify(ev->a, ev->ctx, qhi);
    if (slo && shi && prove(ev, LOOM_EXPR_EQ, slo, shi) == LOOM_ARITH_TRUE)
      return (sym){bin(ev, LOOM_EXPR_FLOORMOD, x.lo, c),
                   bin(ev, LOOM_EXPR_FLOORMOD, x.hi, c)};
  }
  return (sym){konst(ev, e->dtype, 0),
               bin(ev, LOOM_EXPR_SUB, c, konst(ev, c->dtype, 1))};
}

static bool is_nonneg(evaluator *ev, loom_expr *x) {
  loom_expr *zero = x ? konst(ev, x->dtype, 0) : NULL;
  return zero && prove(ev, LOOM_EXPR_GE, x, zero) == LOOM_ARITH_TRUE;
}

static sym binary(evaluator *ev, loom_expr *e, int depth) {
  sym x = eval(ev, e->u.bin.a, depth + 1);
  if (!is_bounded(x))
    return unbounded;
  sym y = eval(ev, e->u.bin.b, depth + 1);
  if (!is_bounded(y))
    return unbounded;
  switch (e->kind) {
  case LOOM_EXPR_ADD:
    return (sym){bin(ev, LOOM_EXPR_ADD, x.lo, y.lo), bin(ev, LOOM_EXPR_ADD, x.hi, y.hi)};
  case LOOM_EXPR_SUB:
    return (sym){bin(ev, LOOM_EXPR_SUB, x.lo, y.hi), bin(ev, LOOM_EXPR_SUB, x.hi, y.lo)};
  case LOOM_EXPR_MUL: return mul(ev, e, x, y);
  case LOOM_EXPR_MIN:
    return (sym){bin(ev, LOOM_EXPR_MIN, x.lo, y.lo), bin(ev, LOOM_EXPR_MIN, x.hi, y.hi)};
  case LOOM_EXPR_MAX:
    return (sym){bin(ev, LOOM_EXPR_MAX, x.lo, y.lo), bin(ev, LOOM_EXPR_MAX, x.hi, y.hi)};
  case LOOM_EXPR_FLOORDIV:
    return y.lo == y.hi ? floordiv(ev, x, y.lo) : unbounded;
  case LOOM_EXPR_FLOORMOD:
    return y.lo == y.hi ? floormod(ev, e, x, y.lo) : unbounded;
  case LOOM_EXPR_DIV:
  case LOOM_EXPR_MOD:
    /* Truncation is floor on a non-negative dividend and positive divisor. */
    if (y.lo != y.hi || !is_nonneg(ev, x.lo) ||
        prove(ev, LOOM_EXPR_GT, y.lo, konst(ev, y.lo->dtype, 0)) != LOOM_ARITH_TRUE)
      return unbounded;
    return e->kind == LOOM_EXPR_DIV ? floordiv(ev, x, y.lo)
                                    : floormod(ev, e, x, y.lo);
  default:
    return unbounded;
  }
}

static sym eval(evaluator *ev, loom_expr *e, int depth) {
  if (!e || ev->has_failed || depth > ARITH_MAX_DEPTH)
    return unbounded;
  if (!uses_relaxed(ev, e, 0))
    return point(e);
  if (e->dtype.lanes != 1)
    return unbounded;
  if (e->dtype.code == LOOM_DT_BOOL)
    return (sym){konst(ev, e->dtype, 0), konst(ev, e->dtype, 1)};
  if (!arith_is_signed_int(e->dtype))
    return unbounded;
  switch (e->kind) {
  case LOOM_EXPR_VAR: return relaxed_var(ev, e, find_relaxed(ev, e->u.var));
  case LOOM_EXPR_SELECT: {
    sym t = eval(ev, e->u.select.t, depth + 1), f = eval(ev, e->u.select.f, depth + 1);
    if (!is_bounded(t) || !is_bounded(f))
      return unbounded;
    return (sym){bin(ev, LOOM_EXPR_MIN, t.lo, f.lo), bin(ev, LOOM_EXPR_MAX, t.hi, f.hi)};
  }
  case LOOM_EXPR_CAST: {
    /* Widening a signed integer keeps its value. */
    loom_expr *x = e->u.unary.a;
    if (!arith_is_signed_int(x->dtype) || x->dtype.bits > e->dtype.bits)
      return unbounded;
    sym s = eval(ev, x, depth + 1);
    if (!is_bounded(s))
      return unbounded;
    return (sym){as_dtype(ev, s.lo, e->dtype), as_dtype(ev, s.hi, e->dtype)};
  }
  default:
    if (e->kind >= LOOM_EXPR_ADD && e->kind <= LOOM_EXPR_MAX)
      return binary(ev, e, depth);
    return unbounded;
  }
}

/* The gcd of the coefficients of the relaxed variables when e is linear in
 * them (plain variable atoms): every value is then congruent to the lower
 * bound modulo it, since the bound is the same sum at integer points. 1 when
 * a relaxed variable hides inside another atom. */
static int64_t linear_stride(evaluator *ev, loom_expr *e) {
  if (!arith_is_signed_int(e->dtype))
    return 1;
  arith_simp s = {ev->a, ev->ctx, 0};
  arith_linear l;
  arith_linear_init(&l, e->dtype);
  l.is_simplified = true;
  arith_linear_add(&s, &l, e, 1);
  int64_t g = 0;
  for (int i = 0; i < l.n_terms && !l.has_failed; i++) {
    loom_expr *atom = l.terms[i].atom;
    if (l.terms[i].coef == 0 || !uses_relaxed(ev, atom, 0))
      continue;
    if (atom->kind != LOOM_EXPR_VAR) {
      g = 1;
      break;
    }
    g = arith_gcd64(g, l.terms[i].coef);
  }
  if (l.has_failed || g <= 0)
    g = 1;
  arith_linear_free(&l);
  return g;
}

static loom_status finish(evaluator *ev, sym s, int64_t stride,
                          loom_arith_intset *out) {
  *out = (loom_arith_intset){.stride = 1, .is_unbounded = true};
  /* A failed allocation may have been absorbed as "unknown" on the way. */
  if (ev->has_failed || loom_arena_status(ev->a) != LOOM_OK)
    return LOOM_NOMEM;
  if (!is_bounded(s))
    return LOOM_OK;
  loom_expr *lo = loom_arith_simplify(ev->a, ev->ctx, s.lo);
  loom_expr *hi = loom_arith_simplify(ev->a, ev->ctx, s.hi);
  loom_expr *one = lo ? konst(ev, lo->dtype, 1) : NULL;
  loom_expr *ext = bin(ev, LOOM_EXPR_ADD, bin(ev, LOOM_EXPR_SUB, hi, lo), one);
  ext = ext ? loom_arith_simplify(ev->a, ev->ctx, ext) : NULL;
  if (!lo || !hi || !ext)
    return LOOM_NOMEM;
  loom_expr *zero = konst(ev, ext->dtype, 0);
  bool is_empty = zero && prove(ev, LOOM_EXPR_LE, ext, zero) == LOOM_ARITH_TRUE;
  *out = (loom_arith_intset){lo, ext, stride > 0 ? stride : 1, false, is_empty};
  return ev->has_failed || loom_arena_status(ev->a) != LOOM_OK ? LOOM_NOMEM : LOOM_OK;
}

loom_status loom_arith_intset_eval(loom_arena *a, loom_arith_ctx *ctx,
                                   loom_expr *e, const loom_arith_relax *relax,
                                   int n_relax, loom_arith_intset *out) {
  evaluator ev = {a, ctx, relax, n_relax, 0, false};
  *out = (loom_arith_intset){.stride = 1, .is_unbounded = true};
  loom_expr *s = loom_arith_simplify(a, ctx, e);
  if (!s)
    return LOOM_NOMEM;
  sym r = eval(&ev, s, 0);
  int64_t stride = is_bounded(r) && r.lo != r.hi ? linear_stride(&ev, s) : 1;
  return finish(&ev, r, stride, out);
}

/* max(x, y) of two set bounds, as one of them when they compare. */
static loom_expr *pick(evaluator *ev, loom_expr_kind k, loom_expr *x,
                       loom_expr *y) {
  loom_expr *r = bin(ev, k, x, y);
  return r ? loom_arith_simplify(ev->a, ev->ctx, r) : NULL;
}

static loom_expr *last_of(evaluator *ev, const loom_arith_intset *s) {
  return bin(ev, LOOM_EXPR_SUB, bin(ev, LOOM_EXPR_ADD, s->min, s->extent),
             s->min ? konst(ev, s->min->dtype, 1) : NULL);
}

/* Whether x - y is a known constant; stores it. */
static bool const_diff(evaluator *ev, loom_expr *x, loom_expr *y, int64_t *d) {
  loom_expr *diff = bin(ev, LOOM_EXPR_SUB, x, y);
  diff = diff ? loom_arith_simplify(ev->a, ev->ctx, diff) : NULL;
  return diff && loom_ir_is_const_int(diff, d);
}

static bool same_dtype(const loom_arith_intset *x, const loom_arith_intset *y) {
  return loom_dtype_eq(x->min->dtype, y->min->dtype) &&
         loom_dtype_eq(x->extent->dtype, y->extent->dtype) &&
         loom_dtype_eq(x->min->dtype, x->extent->dtype);
}

loom_status loom_arith_intset_union(loom_arena *a, loom_arith_ctx *ctx,
                                    const loom_arith_intset *x,
                                    const loom_arith_intset *y,
                                    loom_arith_intset *out) {
  evaluator ev = {a, ctx, NULL, 0, 0, false};
  if (x->is_empty && !x->is_unbounded) {
    *out = *y;
    return LOOM_OK;
  }
  if (y->is_empty && !y->is_unbounded) {
    *out = *x;
    return LOOM_OK;
  }
  if (x->is_unbounded || y->is_unbounded || !same_dtype(x, y)) {
    *out = (loom_arith_intset){.stride = 1, .is_unbounded = true};
    return LOOM_OK;
  }
  sym s = {pick(&ev, LOOM_EXPR_MIN, x->min, y->min),
           pick(&ev, LOOM_EXPR_MAX, last_of(&ev, x), last_of(&ev, y))};
  /* Strides survive when the two grids line up. */
  int64_t stride = arith_gcd64(x->stride, y->stride), d;
  if (stride > 1)
    stride = const_diff(&ev, x->min, y->min, &d) ? arith_gcd64(stride, d) : 1;
  if (stride == 0)
    stride = 1;
  return finish(&ev, s, stride, out);
}

loom_status loom_arith_intset_intersect(loom_arena *a, loom_arith_ctx *ctx,
                                        const loom_arith_intset *x,
                                        const loom_arith_intset *y,
                                        loom_arith_intset *out) {
  evaluator ev = {a, ctx, NULL, 0, 0, false};
  if (x->is_unbounded || (y->is_empty && !y->is_unbounded)) {
    *out = *y;
    return LOOM_OK;
  }
  if (y->is_unbounded || x->is_empty) {
    *out = *x;
    return LOOM_OK;
  }
  if (!same_dtype(x, y)) {
    *out = *x; /* a superset of the intersection */
    return LOOM_OK;
  }
  sym s = {pick(&ev, LOOM_EXPR_MAX, x->min, y->min),
           pick(&ev, LOOM_EXPR_MIN, last_of(&ev, x), last_of(&ev, y))};
  /* Keeping a stride would need its grid to start at the new minimum. */
  int64_t stride = 1, d;
  if (x->stride == y->stride && x->stride > 1 &&
      const_diff(&ev, x->min, y->min, &d) && d % x->stride == 0 &&
      (s.lo == x->min || s.lo == y->min))
    stride = x->stride;
  return finish(&ev, s, stride, out);
}

