/* Affine iterator maps: block bindings parsed into sums of split iterators
 * (TVM's iter_affine_map ideas: IterMark, IterSplitExpr, IterSumExpr, fusing
 * by mixed-radix scales), the coverage check that decides whether the
 * bindings are a bijection or a surjection of the loop domain, and subspace
 * division for blockize and tensorize.
 *
 * Invariant: every split made here divides its mark exactly
 * (lower_factor * extent divides the mark's extent), so a split is a run of
 * "digits" of its mark. Coverage is checked mark by mark on those digit
 * runs; subspace division expands fused marks down to loop digits. */
#include "arith/arith_impl.h"
#include "loom/script.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct isum {
  loom_iter_split *splits;
  int n;
  int64_t base;
  loom_expr *sym; /* terms in variables that are not loops; NULL: none */
} isum;

/* A run of digits of one loop variable, scaled: a fused binding expanded. */
typedef struct leaf {
  int iter;
  int64_t lower_factor, extent, scale;
} leaf;

typedef struct leaves {
  leaf *items;
  int n, cap;
  bool has_failed;
} leaves;

typedef struct detector {
  loom_arena *a;
  const loom_arith_relax *iters;
  int n_iters;
  loom_iter_mark *var_marks; /* one per iter */
  loom_iter_mark **fused;    /* heap: fused marks made so far, for reuse */
  int n_fused, cap_fused;
  loom_diag *d;
  int binding;
  const loom_expr *binding_expr;
  bool is_nomem;
  const loom_iter_mark **limited; /* fused marks a predicate cut short */
  int n_limited;
  bool *is_symbolic; /* per iter: range not constant, so it may not be used */
  bool keep_units;   /* a loop of extent 1 is a term, not its constant */
  bool allow_overlap; /* terms may overlap when fused (below a bijection) */
} detector;

static bool fail(detector *dt, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records why binding dt->binding is not an iterator map. */
static bool fail(detector *dt, const char *fmt, ...) {
  loom_buf why, b;
  loom_buf_init(&why);
  loom_buf_init(&b);
  va_list ap;
  va_start(ap, fmt);
  loom_buf_vprintf(&why, fmt, ap);
  va_end(ap);
  if (dt->binding_expr)
    loom_script_print_expr(dt->binding_expr, &b);
  loom_loc nowhere = {0};
  if (why.has_failed || b.has_failed)
    dt->is_nomem = true;
  else if (dt->binding >= 0)
    loom_diag_error(dt->d, nowhere, "binding %d (%s) is not an affine iterator "
                    "map: %s", dt->binding, b.data ? b.data : "", why.data);
  else
    loom_diag_error(dt->d, nowhere, "the bindings are not an affine iterator "
                    "map: %s", why.data);
  loom_buf_free(&why);
  loom_buf_free(&b);
  return false;
}

static bool nomem(detector *dt) {
  dt->is_nomem = true;
  return false;
}

static bool mul_ok(detector *dt, int64_t x, int64_t y, int64_t *out) {
  if (!__builtin_mul_overflow(x, y, out))
    return true;
  return fail(dt, "a constant overflows int64");
}

static int64_t floordiv64(int64_t x, int64_t y) {
  int64_t q = x / y;
  return (x % y != 0 && (x < 0) != (y < 0)) ? q - 1 : q;
}

static int64_t floormod64(int64_t x, int64_t y) { return x - floordiv64(x, y) * y; }

static bool same_split(const loom_iter_split *x, const loom_iter_split *y) {
  return x->source == y->source && x->lower_factor == y->lower_factor &&
         x->extent == y->extent;
}

/* Invariant terms: expressions in variables that are not loops (outer
 * block iterators, parameters), carried along as TVM carries them in the
 * base of a sum. */
static loom_expr *sym_build(detector *dt, loom_expr_kind k, loom_expr *x,
                            loom_expr *y) {
  if (!loom_dtype_eq(x->dtype, y->dtype))
    y = loom_ir_cast(dt->a, x->dtype, y);
  loom_expr *r = y ? loom_ir_binary(dt->a, k, x, y) : NULL;
  if (!r)
    dt->is_nomem = true;
  return r;
}

static loom_expr *sym_const(detector *dt, loom_dtype t, int64_t c) {
  loom_expr *r = loom_ir_int(dt->a, t, c);
  if (!r)
    dt->is_nomem = true;
  return r;
}

/* x->sym + sign * y->sym (NULL when both are absent). */
static bool sym_add(detector *dt, const isum *x, const isum *y, int64_t sign,
                    loom_expr **out) {
  *out = x->sym;
  if (!y->sym)
    return true;
  if (!x->sym) {
    *out = sign == 1 ? y->sym
                     : sym_build(dt, LOOM_EXPR_MUL, y->sym, sym_const(dt, y->sym->dtype, sign));
    return *out != NULL;
  }
  loom_expr *t = y->sym;
  if (sign != 1 && sign != -1)
    t = sym_build(dt, LOOM_EXPR_MUL, t, sym_const(dt, t->dtype, sign));
  *out = t ? sym_build(dt, sign == -1 ? LOOM_EXPR_SUB : LOOM_EXPR_ADD, x->sym, t) : NULL;
  return *out != NULL;
}

/* The whole of an invariant sum (no splits) as an expression. */
static loom_expr *sym_value(detector *dt, const isum *x) {
  if (!x->sym)
    return NULL;
  if (x->base == 0)
    return x->sym;
  return sym_build(dt, LOOM_EXPR_ADD, x->sym, sym_const(dt, x->sym->dtype, x->base));
}

/* x + sign * y, merging splits of the same digits. */
static bool add_sums(detector *dt, const isum *x, const isum *y, int64_t sign,
                     isum *out) {
  loom_iter_split *s = loom_arena_alloc(dt->a, (size_t)(x->n + y->n + 1) * sizeof *s);
  if (!s)
    return nomem(dt);
  int n = 0;
  for (int i = 0; i < x->n; i++)
    s[n++] = x->splits[i];
  for (int i = 0; i < y->n; i++) {
    loom_iter_split t = y->splits[i];
    if (!mul_ok(dt, t.scale, sign, &t.scale))
      return false;
    int k = 0;
    while (k < n && !same_split(&s[k], &t))
      k++;
    if (k == n)
      s[n++] = t;
    else if (__builtin_add_overflow(s[k].scale, t.scale, &s[k].scale))
      return fail(dt, "a constant overflows int64");
  }
  int m = 0;
  for (int i = 0; i < n; i++)
    if (s[i].scale != 0)
      s[m++] = s[i];
  int64_t yb;
  if (!mul_ok(dt, y->base, sign, &yb))
    return false;
  if (__builtin_add_overflow(x->base, yb, &out->base))
    return fail(dt, "a constant overflows int64");
  if (!sym_add(dt, x, y, sign, &out->sym))
    return false;
  out->splits = s;
  out->n = m;
  return true;
}

static bool scale_sum(detector *dt, const isum *x, int64_t c, isum *out) {
  isum zero = {NULL, 0, 0, NULL};
  if (c == 0) {
    *out = zero;
    return true;
  }
  if (!add_sums(dt, &zero, x, c, out))
    return false;
  return true;
}

/* TVM's order of fusion: scales ascending, and at one scale a term of
 * extent 1 (a unit loop kept) before the others, the last written first. */
static bool goes_before(const loom_iter_split *x, int xi, const loom_iter_split *y, int yi) {
  if (x->scale != y->scale)
    return x->scale < y->scale;
  bool is_unit_x = x->extent == 1, is_unit_y = y->extent == 1;
  if (is_unit_x != is_unit_y)
    return is_unit_x;
  return xi > yi;
}

#define MAX_FUSED 64

/* Sorts s (n small) into fusion order; an insertion sort keeps the
 * written order where it decides. */
static void fusion_order(loom_iter_split *s, int n) {
  int at[MAX_FUSED];
  for (int i = 0; i < n; i++)
    at[i] = i;
  for (int i = 1; i < n; i++) {
    loom_iter_split x = s[i];
    int xi = at[i], j = i;
    for (; j > 0 && goes_before(&x, xi, &s[j - 1], at[j - 1]); j--) {
      s[j] = s[j - 1];
      at[j] = at[j - 1];
    }
    s[j] = x;
    at[j] = xi;
  }
}

static bool same_sum(const loom_iter_sum *x, const loom_iter_split *s, int n) {
  if (x->n_splits != n)
    return false;
  for (int i = 0; i < n; i++)
    if (!same_split(&x->splits[i], &s[i]) || x->splits[i].scale != s[i].scale)
      return false;
  return true;
}

/* The fused mark of splits s (sorted, smallest scale 1), reused when the
 * same fusion was made before, so that coverage sees one mark. */
static const loom_iter_mark *fused_mark(detector *dt, loom_iter_split *s, int n,
                                        int64_t extent) {
  for (int i = 0; i < dt->n_fused; i++)
    if (same_sum(dt->fused[i]->fused, s, n))
      return dt->fused[i];
  if (dt->n_fused == dt->cap_fused) {
    int cap = dt->cap_fused ? dt->cap_fused * 2 : 8;
    loom_iter_mark **p = realloc(dt->fused, (size_t)cap * sizeof *p);
    if (!p)
      return NULL;
    dt->fused = p;
    dt->cap_fused = cap;
  }
  loom_iter_sum *sum = loom_arena_alloc(dt->a, sizeof *sum);
  loom_iter_mark *m = loom_arena_alloc(dt->a, sizeof *m);
  if (!sum || !m)
    return NULL;
  *sum = (loom_iter_sum){s, n, 0, NULL};
  *m = (loom_iter_mark){NULL, 0, sum, extent};
  dt->fused[dt->n_fused++] = m;
  return m;
}

/* Whether hi is the run of digits right above lo's, of the same source
 * and scaled to match; lo then takes it in. */
static bool combine(loom_iter_split *lo, const loom_iter_split *hi) {
  int64_t lower_factor, scale, extent;
  if (hi->source != lo->source ||
      __builtin_mul_overflow(lo->lower_factor, lo->extent, &lower_factor) ||
      __builtin_mul_overflow(lo->scale, lo->extent, &scale) ||
      __builtin_mul_overflow(lo->extent, hi->extent, &extent) ||
      hi->lower_factor != lower_factor || hi->scale != scale)
    return false;
  lo->extent = extent;
  return true;
}

/* Replaces the terms of s[0..n) that make a fusion the predicate cut short,
 * all times one factor, by one term of that fusion: TVM finds such a
 * bounded sum inside a larger one (`(i_0 * 8 + i_1 * 2 + i_2) * 32 + k`
 * under `(i_0 * 4 + i_1) * 2 + i_2 < 4`). Gives the new count. */
static int take_limited(const detector *dt, loom_iter_split *s, int n) {
  for (int i = 0; i < dt->n_limited; i++) {
    const loom_iter_sum *f = dt->limited[i]->fused;
    if (f->n_splits < 2 || f->n_splits > n)
      continue;
    bool used[MAX_FUSED] = {false};
    int64_t c = 0;
    int found = 0;
    for (int t = 0; t < f->n_splits && found == t; t++) {
      const loom_iter_split *u = &f->splits[t];
      for (int k = 0; k < n && found == t; k++)
        if (!used[k] && s[k].source == u->source && s[k].lower_factor == u->lower_factor &&
            s[k].extent == u->extent && u->scale > 0 && s[k].scale % u->scale == 0 &&
            (c == 0 || s[k].scale == u->scale * c)) {
          c = s[k].scale / u->scale;
          used[k] = true;
          found++;
        }
    }
    if (found < f->n_splits)
      continue;
    /* The rest keep their order; the new term goes in by its scale. */
    int m = 0;
    for (int k = 0; k < n; k++)
      if (!used[k])
        s[m++] = s[k];
    int at = m;
    while (at > 0 && s[at - 1].scale > c)
      at--;
    memmove(&s[at + 1], &s[at], (size_t)(m - at) * sizeof *s);
    s[at] = (loom_iter_split){dt->limited[i], 1, dt->limited[i]->extent, c};
    n = m + 1;
  }
  return n;
}

/* x as a single split (plus x->base): the split itself, or a fused mark
 * when the scales form a mixed radix (i*8 + j with j over [0, 8)). */
static bool single(detector *dt, const isum *x, loom_iter_split *out) {
  if (x->n == 1) {
    *out = x->splits[0];
    return true;
  }
  if (x->n > MAX_FUSED)
    return fail(dt, "more than %d terms to fuse", MAX_FUSED);
  loom_iter_split *s = loom_arena_dup(dt->a, x->splits, (size_t)x->n * sizeof *s);
  if (!s)
    return nomem(dt);
  fusion_order(s, x->n);
  /* Two digit runs of one source, one right above the other, are one run
   * ((f // 9) * 9 + f % 9 is f), as TVM combines them before fusing. */
  int n = 1;
  for (int i = 1; i < x->n; i++)
    if (!combine(&s[n - 1], &s[i]))
      s[n++] = s[i];
  n = take_limited(dt, s, n);
  if (n == 1) {
    *out = s[0];
    return true;
  }
  int64_t base_scale = s[0].scale, expect = s[0].scale, tail = 0;
  if (base_scale <= 0)
    return fail(dt, "an iterator runs backwards (scale %lld)", (long long)base_scale);
  /* Each next term is the one of the scale the extents below call for.
   * Below a bijection, with the smallest scale 1, TVM takes the term of
   * the largest scale under it instead (i * 2 + j with j over [0, 7)):
   * the terms overlap, and the fused range grows by what they skip. */
  bool used[MAX_FUSED] = {false};
  loom_iter_split order[MAX_FUSED];
  for (int i = 0; i < n; i++) {
    int k = -1;
    for (int j = 0; j < n && k < 0; j++)
      if (!used[j] && s[j].scale == expect)
        k = j;
    for (int j = 0; k < 0 && dt->allow_overlap && base_scale == 1 && j < n; j++)
      if (!used[j] && s[j].scale > 0 && s[j].scale < expect &&
          (k < 0 || s[j].scale > s[k].scale))
        k = j;
    if (k < 0)
      return fail(dt, "the terms cannot be fused: no term has scale %lld, which "
                  "the extents below it call for", (long long)expect);
    used[k] = true;
    tail += expect - s[k].scale;
    if (!mul_ok(dt, s[k].scale, s[k].extent, &expect))
      return false;
    order[i] = s[k];
    order[i].scale /= base_scale;
  }
  memcpy(s, order, (size_t)n * sizeof *s);
  const loom_iter_mark *m = fused_mark(dt, s, n, expect / base_scale + tail);
  if (!m)
    return nomem(dt);
  *out = (loom_iter_split){m, 1, m->extent, base_scale};
  return true;
}

/* floordiv(x, c) and floormod(x, c) for a constant c > 0. */
static bool divmod(detector *dt, const isum *x, int64_t c, bool is_div,
                   isum *out) {
  if (x->n == 0 && x->sym) {
    loom_expr *v = sym_value(dt, x);
    loom_expr *r = v ? sym_build(dt, is_div ? LOOM_EXPR_FLOORDIV : LOOM_EXPR_FLOORMOD, v,
                                 sym_const(dt, v->dtype, c))
                     : NULL;
    *out = (isum){NULL, 0, 0, r};
    return r ? true : nomem(dt);
  }
  if (x->sym)
    return fail(dt, "%s by %lld of iterators plus a term that is not a loop",
                is_div ? "division" : "remainder", (long long)c);
  if (x->n == 0) {
    *out = (isum){NULL, 0, is_div ? floordiv64(x->base, c) : floormod64(x->base, c), NULL};
    return true;
  }
  loom_iter_split s;
  if (!single(dt, x, &s))
    return false;
  int64_t b = x->base;
  if (s.scale <= 0)
    return fail(dt, "divides an iterator that runs backwards");
  loom_iter_split *r = loom_arena_alloc(dt->a, sizeof *r);
  if (!r)
    return nomem(dt);
  if (s.scale % c == 0) {
    /* (k*c*v + b) // c == k*v + b // c; (k*c*v + b) % c == b % c. */
    *r = s;
    r->scale = s.scale / c;
    *out = is_div ? (isum){r, 1, floordiv64(b, c), NULL}
                  : (isum){NULL, 0, floormod64(b, c), NULL};
    return true;
  }
  if (c % s.scale != 0 || b % s.scale != 0)
    return fail(dt, "%s by %lld does not line up with a term of scale %lld",
                is_div ? "division" : "remainder", (long long)c,
                (long long)s.scale);
  int64_t c2 = c / s.scale, b2 = b / s.scale;
  if (b2 % c2 != 0)
    return fail(dt, "the offset %lld is not a multiple of %lld, so the %s "
                "would straddle two iterations", (long long)b, (long long)c,
                is_div ? "quotient" : "remainder");
  bool is_within = s.extent <= c2; /* v < c2: v // c2 == 0, v % c2 == v */
  if (!is_within && s.extent % c2 != 0)
    return fail(dt, "an iterator of extent %lld is split by %lld, which does "
                "not divide it", (long long)s.extent, (long long)c2);
  if (is_div) {
    int64_t lf;
    if (!is_within && !mul_ok(dt, s.lower_factor, c2, &lf))
      return false;
    *r = (loom_iter_split){s.source, is_within ? 1 : lf, s.extent / c2, 1};
    *out = (isum){r, is_within ? 0 : 1, b2 / c2, NULL};
  } else {
    *r = (loom_iter_split){s.source, s.lower_factor, is_within ? s.extent : c2,
                           s.scale};
    *out = (isum){r, 1, 0, NULL};
  }
  return true;
}

static int find_iter(const detector *dt, const loom_var *v) {
  for (int i = 0; i < dt->n_iters; i++)
    if (dt->iters[i].var == v)
      return i;
  return -1;
}

static int64_t sum_min(const isum *x) {
  int64_t m = x->base;
  for (int i = 0; i < x->n; i++)
    if (x->splits[i].scale < 0)
      m += x->splits[i].scale * (x->splits[i].extent - 1);
  return m;
}

static bool parse(detector *dt, const loom_expr *e, isum *out, int depth);

static bool parse_divmod(detector *dt, const loom_expr *e, isum *out,
                         int depth) {
  isum x, y;
  if (!parse(dt, e->u.bin.b, &y, depth + 1))
    return false;
  if (y.n != 0 || y.sym || y.base <= 0)
    return fail(dt, "the divisor must be a positive constant");
  if (!parse(dt, e->u.bin.a, &x, depth + 1))
    return false;
  bool is_trunc = e->kind == LOOM_EXPR_DIV || e->kind == LOOM_EXPR_MOD;
  if (is_trunc && (x.sym || sum_min(&x) < 0))
    return fail(dt, "truncating division of a value that may be negative");
  bool is_div = e->kind == LOOM_EXPR_DIV || e->kind == LOOM_EXPR_FLOORDIV;
  return divmod(dt, &x, y.base, is_div, out);
}

static bool parse(detector *dt, const loom_expr *e, isum *out, int depth) {
  if (depth > ARITH_MAX_DEPTH)
    return fail(dt, "the expression nests too deeply");
  if (!arith_is_signed_int(e->dtype))
    return fail(dt, "not a signed integer expression");
  isum x, y;
  switch (e->kind) {
  case LOOM_EXPR_INT:
    *out = (isum){NULL, 0, e->u.int_value, NULL};
    return true;
  case LOOM_EXPR_VAR: {
    int i = find_iter(dt, e->u.var);
    if (i < 0) {
      /* Not a loop: an invariant, like an outer block's iterator. */
      *out = (isum){NULL, 0, 0, (loom_expr *)e};
      return true;
    }
    if (dt->is_symbolic[i])
      return fail(dt, "loop '%s' has a range that is not constant; iterator "
                  "maps need constant extents", e->u.var->name);
    loom_iter_mark *m = &dt->var_marks[i];
    int64_t loop_extent = 0; /* a predicate may have cut m short since */
    if (!dt->keep_units && loom_ir_is_const_int(dt->iters[i].range.extent, &loop_extent) &&
        loop_extent == 1) {
      *out = (isum){NULL, 0, m->var_min, NULL};
      return true;
    }
    loom_iter_split *s = loom_arena_alloc(dt->a, sizeof *s);
    if (!s)
      return nomem(dt);
    *s = (loom_iter_split){m, 1, m->extent, 1};
    *out = (isum){s, 1, m->var_min, NULL};
    return true;
  }
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB:
    return parse(dt, e->u.bin.a, &x, depth + 1) &&
           parse(dt, e->u.bin.b, &y, depth + 1) &&
           add_sums(dt, &x, &y, e->kind == LOOM_EXPR_ADD ? 1 : -1, out);
  case LOOM_EXPR_MUL:
    if (!parse(dt, e->u.bin.a, &x, depth + 1) || !parse(dt, e->u.bin.b, &y, depth + 1))
      return false;
    if (x.n != 0 && y.n != 0)
      return fail(dt, "a product of two iterators is not affine");
    if ((x.n != 0 && y.sym) || (y.n != 0 && x.sym))
      return fail(dt, "an iterator scaled by a term that is not a constant");
    if (x.sym || y.sym) { /* invariant times invariant (or a constant) */
      loom_expr *vx = x.sym ? sym_value(dt, &x) : NULL, *vy = y.sym ? sym_value(dt, &y) : NULL;
      if (!vx)
        vx = sym_const(dt, vy->dtype, x.base);
      if (!vy)
        vy = sym_const(dt, vx->dtype, y.base);
      loom_expr *r = vx && vy ? sym_build(dt, LOOM_EXPR_MUL, vx, vy) : NULL;
      *out = (isum){NULL, 0, 0, r};
      return r ? true : nomem(dt);
    }
    return x.n == 0 ? scale_sum(dt, &y, x.base, out) : scale_sum(dt, &x, y.base, out);
  case LOOM_EXPR_FLOORDIV:
  case LOOM_EXPR_FLOORMOD:
  case LOOM_EXPR_DIV:
  case LOOM_EXPR_MOD:
    return parse_divmod(dt, e, out, depth);
  case LOOM_EXPR_CAST:
    if (arith_is_signed_int(e->u.unary.a->dtype) &&
        e->u.unary.a->dtype.bits <= e->dtype.bits)
      return parse(dt, e->u.unary.a, out, depth + 1);
    return fail(dt, "a narrowing cast is not affine");
  default:
    return fail(dt, "%s is not an affine operation", loom_expr_kind_name(e->kind));
  }
}

/* ---- expansion to loop digits --------------------------------------------- */

static void push_leaf(leaves *l, leaf x) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    leaf *p = realloc(l->items, (size_t)cap * sizeof *p);
    if (!p) {
      l->has_failed = true;
      return;
    }
    l->items = p;
    l->cap = cap;
  }
  l->items[l->n++] = x;
}

/* The digit runs of loop variables that split s reads, with their scales
 * in the result. Fails when s cuts through a fused term unevenly. */
static bool expand(detector *dt, const loom_iter_split *s, leaves *out,
                   int depth) {
  if (s->extent == 1)
    return true;
  if (depth > ARITH_MAX_DEPTH)
    return fail(dt, "iterators are fused too deeply");
  const loom_iter_mark *m = s->source;
  if (m->var) {
    push_leaf(out, (leaf){(int)(m - dt->var_marks), s->lower_factor, s->extent,
                          s->scale});
    return out->has_failed ? nomem(dt) : true;
  }
  int64_t want_lo = s->lower_factor, want_hi;
  if (!mul_ok(dt, s->lower_factor, s->extent, &want_hi))
    return false;
  /* The whole of a mark a predicate cut short is still the sum of all its
   * terms. */
  if (s->lower_factor == 1 && s->extent == m->extent && m->fused->n_splits > 0) {
    const loom_iter_split *top = &m->fused->splits[m->fused->n_splits - 1];
    if (!mul_ok(dt, top->scale, top->extent, &want_hi))
      return false;
  }
  for (int k = 0; k < m->fused->n_splits; k++) {
    const loom_iter_split *t = &m->fused->splits[k];
    int64_t lo = t->scale, hi;
    if (!mul_ok(dt, t->scale, t->extent, &hi))
      return false;
    int64_t comp_hi = hi;
    lo = lo > want_lo ? lo : want_lo;
    hi = hi < want_hi ? hi : want_hi;
    if (lo >= hi)
      continue;
    if (lo % t->scale || hi % lo || lo % want_lo || comp_hi % hi)
      return fail(dt, "a split of a fused iterator cuts through one of its "
                  "terms unevenly");
    loom_iter_split sub = {t->source, 0, hi / lo, 0};
    if (!mul_ok(dt, t->lower_factor, lo / t->scale, &sub.lower_factor) ||
        !mul_ok(dt, s->scale, lo / want_lo, &sub.scale) ||
        !expand(dt, &sub, out, depth + 1))
      return false;
  }
  return true;
}

/* The digit runs of one mark that the bindings (or fused marks above it)
 * read. */
typedef struct use_list {
  loom_iter_split *items; /* source, lower_factor and extent are used */
  int n, cap;
} use_list;

static bool push_use(detector *dt, use_list *u, const loom_iter_split *s) {
  if (u->n == u->cap) {
    int cap = u->cap ? u->cap * 2 : 4;
    loom_iter_split *p = realloc(u->items, (size_t)cap * sizeof *p);
    if (!p)
      return nomem(dt);
    u->items = p;
    u->cap = cap;
  }
  u->items[u->n++] = *s;
  return true;
}

static int cmp_lower_factor(const void *p, const void *q) {
  const loom_iter_split *x = p, *y = q;
  return x->lower_factor < y->lower_factor ? -1 : x->lower_factor > y->lower_factor;
}

static int mark_id(const detector *dt, const loom_iter_mark *m) {
  if (m->var)
    return (int)(m - dt->var_marks);
  for (int i = 0; i < dt->n_fused; i++)
    if (dt->fused[i] == m)
      return dt->n_iters + i;
  return -1;
}

static char *mark_name(detector *dt, const loom_iter_mark *m) {
  if (m->var)
    return loom_arena_printf(dt->a, "loop '%s'", m->var->name);
  loom_buf b;
  loom_buf_init(&b);
  const loom_iter_mark *first = m;
  while (!first->var && first->fused->n_splits > 0)
    first = first->fused->splits[0].source;
  loom_dtype t = first->var ? first->var->dtype : LOOM_INT64;
  loom_expr *e = loom_arith_iter_sum_expr(dt->a, m->fused, t);
  if (e)
    loom_script_print_expr(e, &b);
  char *r = loom_arena_printf(dt->a, "the fused iterator %s", b.data ? b.data : "");
  loom_buf_free(&b);
  return r;
}

/* Digit runs of m used at most once, each lining up with those below it
 * (and, for a bijection, all of m used). */
static bool check_mark(detector *dt, const loom_iter_mark *m, use_list *u,
                       loom_iter_map_level level) {
  if (u->n > 1)
    qsort(u->items, (size_t)u->n, sizeof *u->items, cmp_lower_factor);
  int64_t next = 1;
  for (int k = 0; k < u->n; k++) {
    const loom_iter_split *x = &u->items[k];
    if (x->lower_factor < next)
      return fail(dt, "%s is used twice: its digits from %lld are read twice",
                  mark_name(dt, m), (long long)x->lower_factor);
    if (x->lower_factor % next != 0)
      return fail(dt, "%s is split unevenly: digits from %lld do not line up "
                  "with those below", mark_name(dt, m), (long long)x->lower_factor);
    if (level == LOOM_ITER_MAP_BIJECTIVE && x->lower_factor != next)
      return fail(dt, "%s is not fully used: no binding reads its values "
                  "modulo %lld", mark_name(dt, m), (long long)x->lower_factor);
    next = x->lower_factor * x->extent;
  }
  if (level == LOOM_ITER_MAP_BIJECTIVE && next != m->extent && m->extent > 1)
    return fail(dt, next == 1 ? "%s is not used by any binding"
                              : "%s is not fully used by the bindings",
                mark_name(dt, m));
  return true;
}

/* Coverage, from the newest fused mark down to the loops: a fused mark that
 * is read hands a use of each of its terms to the marks below (more uses
 * than a partial read strictly makes, which can only refuse more). */
static bool check_coverage(detector *dt, const loom_iter_map *map,
                           loom_iter_map_level level) {
  dt->binding = -1;
  dt->binding_expr = NULL;
  int n_marks = dt->n_iters + dt->n_fused;
  use_list *uses = calloc((size_t)n_marks + 1, sizeof *uses);
  if (!uses)
    return nomem(dt);
  bool is_ok = true;
  for (int k = 0; k < map->n_sums && is_ok; k++)
    for (int i = 0; i < map->sums[k].n_splits && is_ok; i++) {
      const loom_iter_split *s = &map->sums[k].splits[i];
      is_ok = push_use(dt, &uses[mark_id(dt, s->source)], s);
    }
  for (int id = n_marks - 1; id >= 0 && is_ok; id--) {
    const loom_iter_mark *m = id < dt->n_iters ? &dt->var_marks[id]
                                               : dt->fused[id - dt->n_iters];
    if (!m->var && uses[id].n == 0)
      continue; /* made on the way, then divided away */
    is_ok = check_mark(dt, m, &uses[id], level);
    if (m->var)
      continue;
    for (int i = 0; i < m->fused->n_splits && is_ok; i++) {
      const loom_iter_split *t = &m->fused->splits[i];
      is_ok = push_use(dt, &uses[mark_id(dt, t->source)], t);
    }
  }
  for (int id = 0; id < n_marks; id++)
    free(uses[id].items);
  free(uses);
  return is_ok;
}

/* ---- entry points ---------------------------------------------------------- */

static loom_status setup(detector *dt, loom_arena *a,
                         const loom_arith_relax *iters, int n_iters,
                         loom_diag *d) {
  *dt = (detector){.a = a, .iters = iters, .n_iters = n_iters, .d = d,
                   .binding = -1};
  dt->var_marks = loom_arena_alloc(a, (size_t)(n_iters + 1) * sizeof *dt->var_marks);
  dt->is_symbolic = loom_arena_alloc(a, (size_t)(n_iters + 1) * sizeof *dt->is_symbolic);
  if (!dt->var_marks || !dt->is_symbolic)
    return LOOM_NOMEM;
  loom_loc nowhere = {0};
  for (int i = 0; i < n_iters; i++) {
    int64_t min, extent;
    const char *name = iters[i].var && iters[i].var->name ? iters[i].var->name : "?";
    if (!loom_ir_is_const_int(iters[i].range.min, &min) ||
        !loom_ir_is_const_int(iters[i].range.extent, &extent)) {
      /* An error only if a binding uses it. */
      dt->is_symbolic[i] = true;
      dt->var_marks[i] = (loom_iter_mark){iters[i].var, 0, NULL, 1};
      continue;
    }
    if (extent < 1)
      return loom_diag_error(d, nowhere, "loop '%s' has extent %lld; iterator "
                             "maps need at least one iteration", name,
                             (long long)extent);
    dt->var_marks[i] = (loom_iter_mark){iters[i].var, min, NULL, extent};
  }
  return LOOM_OK;
}

static loom_status finish(detector *dt, bool is_ok) {
  free(dt->fused);
  free(dt->limited);
  if (dt->is_nomem || loom_arena_status(dt->a) != LOOM_OK)
    return LOOM_NOMEM;
  return is_ok ? LOOM_OK : LOOM_ERROR;
}

/* One conjunct x < bound of a predicate: x must be a loop or a fusion of
 * loops (i*8 + j < 100, from a split that does not divide), whose mark
 * then ranges over [0, bound - base) only. */
static bool limit_mark(detector *dt, const loom_expr *x, int64_t bound) {
  isum sum;
  loom_iter_split s;
  if (!parse(dt, x, &sum, 0))
    return false;
  if (sum.sym && sum.n == 0)
    return true; /* about the loops outside only: the same at every point */
  if (sum.sym)
    return fail(dt, "the predicate must bound loops by a constant");
  if (sum.n == 0)
    return sum.base < bound ? true : fail(dt, "the predicate is never true");
  if (!single(dt, &sum, &s))
    return false;
  if (s.scale != 1 || s.lower_factor != 1 || s.extent != s.source->extent)
    return fail(dt, "the predicate must bound a loop or a fusion of loops");
  int64_t limit;
  if (__builtin_sub_overflow(bound, sum.base, &limit))
    return fail(dt, "a constant overflows int64");
  if (limit <= 0)
    return fail(dt, "the predicate is never true");
  if (limit >= s.extent)
    return true;
  /* Marks are still private to this detection: narrowing one is safe. */
  loom_iter_mark *m = (loom_iter_mark *)s.source;
  m->extent = limit;
  if (!m->var) {
    const loom_iter_mark **p = realloc(dt->limited, (size_t)(dt->n_limited + 1) * sizeof *p);
    if (!p)
      return nomem(dt);
    dt->limited = p;
    dt->limited[dt->n_limited++] = m;
  }
  return true;
}

static bool parse_predicate(detector *dt, const loom_expr *e, int depth) {
  if (!e)
    return true;
  if (depth > ARITH_MAX_DEPTH)
    return fail(dt, "the predicate nests too deeply");
  int64_t c;
  switch (e->kind) {
  case LOOM_EXPR_AND:
    return parse_predicate(dt, e->u.bin.a, depth + 1) &&
           parse_predicate(dt, e->u.bin.b, depth + 1);
  case LOOM_EXPR_INT:
    return e->u.int_value ? true : fail(dt, "the predicate is never true");
  case LOOM_EXPR_LT:
  case LOOM_EXPR_LE:
    if (loom_ir_is_const_int(e->u.bin.b, &c) &&
        !(e->kind == LOOM_EXPR_LE && c == INT64_MAX))
      return limit_mark(dt, e->u.bin.a, e->kind == LOOM_EXPR_LE ? c + 1 : c);
    break;
  case LOOM_EXPR_GT:
  case LOOM_EXPR_GE:
    if (loom_ir_is_const_int(e->u.bin.a, &c) &&
        !(e->kind == LOOM_EXPR_GE && c == INT64_MAX))
      return limit_mark(dt, e->u.bin.b, e->kind == LOOM_EXPR_GE ? c + 1 : c);
    break;
  default: break;
  }
  loom_buf b;
  loom_buf_init(&b);
  loom_script_print_expr(e, &b);
  bool r = fail(dt, "the predicate must be a conjunction of bounds like "
                "i * 8 + j < 100, not %s", b.data ? b.data : "?");
  loom_buf_free(&b);
  return r;
}

/* Parses every binding into out and checks level. */
static bool detect(detector *dt, loom_expr *const *bindings, int n,
                   const loom_expr *predicate, loom_iter_map_level level,
                   loom_iter_map *out) {
  dt->binding = -1;
  dt->binding_expr = NULL;
  if (!parse_predicate(dt, predicate, 0))
    return false;
  out->sums = loom_arena_alloc(dt->a, (size_t)(n + 1) * sizeof *out->sums);
  out->n_sums = n;
  if (!out->sums)
    return nomem(dt);
  for (int k = 0; k < n; k++) {
    dt->binding = k;
    dt->binding_expr = bindings[k];
    isum x;
    if (!bindings[k])
      return fail(dt, "missing binding");
    if (!parse(dt, bindings[k], &x, 0))
      return false;
    if (level != LOOM_ITER_MAP_NO_CHECK && x.n > 0) {
      loom_iter_split *s = loom_arena_alloc(dt->a, sizeof *s);
      if (!s)
        return nomem(dt);
      if (!single(dt, &x, s))
        return false;
      if (s->scale != 1)
        return fail(dt, "the value steps by %lld, so it skips values of the "
                    "block iterator", (long long)s->scale);
      x.splits = s;
      x.n = 1;
    }
    out->sums[k] = (loom_iter_sum){x.splits, x.n, x.base, x.sym};
  }
  if (level == LOOM_ITER_MAP_NO_CHECK)
    return true;
  if (!check_coverage(dt, out, level))
    return false;
  /* A bound on a fusion the bindings never make leaves holes in their
   * image: refuse rather than claim a full box. */
  for (int i = 0; i < dt->n_limited; i++) {
    bool is_used = false;
    for (int k = 0; k < n && !is_used; k++)
      is_used = out->sums[k].n_splits > 0 && out->sums[k].splits[0].source == dt->limited[i];
    for (int f = 0; f < dt->n_fused && !is_used; f++)
      for (int t = 0; t < dt->fused[f]->fused->n_splits && !is_used; t++)
        is_used = dt->fused[f]->fused->splits[t].source == dt->limited[i];
    if (!is_used)
      return fail(dt, "the predicate bounds %s, which no binding reads as a whole",
                  mark_name(dt, dt->limited[i]));
  }
  return true;
}

static loom_status detect_map(loom_arena *a, loom_expr *const *bindings, int n,
                              const loom_arith_relax *iters, int n_iters,
                              const loom_expr *predicate, loom_iter_map_level level,
                              bool keep_units, loom_iter_map *out, loom_diag *d) {
  detector dt;
  TRY(setup(&dt, a, iters, n_iters, d));
  dt.keep_units = keep_units;
  dt.allow_overlap = level != LOOM_ITER_MAP_BIJECTIVE;
  return finish(&dt, detect(&dt, bindings, n, predicate, level, out));
}

loom_status loom_arith_iter_map_detect(loom_arena *a, loom_expr *const *bindings,
                                       int n, const loom_arith_relax *iters,
                                       int n_iters, const loom_expr *predicate,
                                       loom_iter_map_level level,
                                       loom_iter_map *out, loom_diag *d) {
  return detect_map(a, bindings, n, iters, n_iters, predicate, level, false, out, d);
}

loom_status loom_arith_iter_map_detect_units(loom_arena *a, loom_expr *const *bindings,
                                             int n, const loom_arith_relax *iters,
                                             int n_iters, const loom_expr *predicate,
                                             loom_iter_map_level level,
                                             loom_iter_map *out, loom_diag *d) {
  return detect_map(a, bindings, n, iters, n_iters, predicate, level, true, out, d);
}

/* ---- expressions ------------------------------------------------------------ */

static loom_expr *mark_expr(loom_arena *a, const loom_iter_mark *m, loom_dtype t);

static loom_expr *binop(loom_arena *a, loom_expr_kind k, loom_expr *x,
                        loom_dtype t, int64_t c) {
  return x ? loom_ir_binary(a, k, x, loom_ir_int(a, t, c)) : NULL;
}

/* floormod(floordiv(mark, lower_factor), extent), leaving out what is the
 * identity. */
static loom_expr *digits_expr(loom_arena *a, loom_expr *m, int64_t mark_extent,
                              int64_t lower_factor, int64_t extent,
                              loom_dtype t) {
  if (lower_factor != 1)
    m = binop(a, LOOM_EXPR_FLOORDIV, m, t, lower_factor);
  if (lower_factor * extent < mark_extent)
    m = binop(a, LOOM_EXPR_FLOORMOD, m, t, extent);
  return m;
}

static loom_expr *add_term(loom_arena *a, loom_expr *acc, loom_expr *v,
                           int64_t scale, loom_dtype t) {
  if (!v)
    return NULL;
  if (scale != 1)
    v = binop(a, LOOM_EXPR_MUL, v, t, scale);
  return acc ? loom_ir_binary(a, LOOM_EXPR_ADD, acc, v) : v;
}

static loom_expr *with_base(loom_arena *a, loom_expr *acc, int64_t base,
                            loom_dtype t) {
  if (!acc)
    return loom_ir_int(a, t, base);
  return base == 0 ? acc : binop(a, LOOM_EXPR_ADD, acc, t, base);
}

loom_expr *loom_arith_iter_sum_expr(loom_arena *a, const loom_iter_sum *s,
                                    loom_dtype t) {
  loom_expr *acc = NULL;
  if (s->symbolic_base) {
    acc = s->symbolic_base;
    if (!loom_dtype_eq(acc->dtype, t))
      acc = loom_ir_cast(a, t, acc);
    if (!acc)
      return NULL;
  }
  for (int i = 0; i < s->n_splits; i++) {
    const loom_iter_split *x = &s->splits[i];
    loom_expr *v = digits_expr(a, mark_expr(a, x->source, t), x->source->extent,
                               x->lower_factor, x->extent, t);
    if (!(acc = add_term(a, acc, v, x->scale, t)))
      return NULL;
  }
  return with_base(a, acc, s->base, t);
}

static loom_expr *normal_split(loom_arena *a, const loom_iter_split *x, loom_dtype t);

/* TVM's normal form of an iterator map (IterMapToExprNormalizer): a fused
 * mark's terms largest scale first; a split whole as source * scale, the
 * top of its source as source // lower_factor, else as
 * source % (lower_factor * extent) // lower_factor; the constant last. */
loom_expr *loom_arith_iter_sum_normal(loom_arena *a, const loom_iter_sum *s, loom_dtype t) {
  loom_expr *acc = NULL;
  for (int i = s->n_splits - 1; i >= 0; i--) {
    loom_expr *v = normal_split(a, &s->splits[i], t);
    if (!v)
      return NULL;
    acc = acc ? loom_ir_binary(a, LOOM_EXPR_ADD, acc, v) : v;
    if (!acc)
      return NULL;
  }
  if (s->symbolic_base) {
    loom_expr *q = s->symbolic_base;
    if (!loom_dtype_eq(q->dtype, t))
      q = loom_ir_cast(a, t, q);
    acc = !q ? NULL : acc ? loom_ir_binary(a, LOOM_EXPR_ADD, acc, q) : q;
    if (!acc)
      return NULL;
  }
  return with_base(a, acc, s->base, t);
}

static loom_expr *var_expr(loom_arena *a, const loom_var *v, int64_t min,
                           loom_dtype t) {
  loom_expr *e = loom_ir_ref(a, (loom_var *)v);
  if (e && !loom_dtype_eq(e->dtype, t))
    e = loom_ir_cast(a, t, e);
  return min == 0 ? e : binop(a, LOOM_EXPR_SUB, e, t, min);
}

static loom_expr *mark_expr(loom_arena *a, const loom_iter_mark *m, loom_dtype t) {
  if (m->var)
    return var_expr(a, m->var, m->var_min, t);
  return loom_arith_iter_sum_expr(a, m->fused, t);
}

static loom_expr *normal_split(loom_arena *a, const loom_iter_split *x, loom_dtype t) {
  const loom_iter_mark *m = x->source;
  loom_expr *src = m->var ? var_expr(a, m->var, m->var_min, t)
                          : loom_arith_iter_sum_normal(a, m->fused, t);
  if (!src)
    return NULL;
  if (x->lower_factor * x->extent != m->extent)
    src = binop(a, LOOM_EXPR_FLOORMOD, src, t, x->lower_factor * x->extent);
  if (x->lower_factor != 1)
    src = binop(a, LOOM_EXPR_FLOORDIV, src, t, x->lower_factor);
  return x->scale == 1 ? src : binop(a, LOOM_EXPR_MUL, src, t, x->scale);
}

/* ---- subspace division ------------------------------------------------------ */

static int cmp_leaf_scale(const void *p, const void *q) {
  const leaf *x = p, *y = q;
  return x->scale < y->scale ? -1 : x->scale > y->scale;
}

static bool is_inner(const loom_var *v, const loom_var *const *inner, int n) {
  for (int i = 0; i < n; i++)
    if (inner[i] == v)
      return true;
  return false;
}

/* Whether the predicate cut mark m short: a loop bounded below its
 * extent, or a fusion bounded below the product of its terms. */
static bool is_cut(const detector *dt, const loom_iter_mark *m) {
  int64_t e;
  if (m->var)
    return loom_ir_is_const_int(dt->iters[m - dt->var_marks].range.extent, &e) &&
           m->extent < e;
  for (int i = 0; i < dt->n_limited; i++)
    if (dt->limited[i] == m)
      return true;
  return false;
}

static bool has_cut(const detector *dt, const loom_iter_mark *m, int depth) {
  if (is_cut(dt, m))
    return true;
  if (m->var || depth > ARITH_MAX_DEPTH)
    return false;
  for (int k = 0; k < m->fused->n_splits; k++)
    if (has_cut(dt, m->fused->splits[k].source, depth + 1))
      return true;
  return false;
}

static bool mark_is_inner(const detector *dt, const loom_iter_mark *m,
                          const loom_var *const *inner, int n_inner, bool *is_inner_out,
                          bool *is_outer_out, int depth);

/* ANDs x < extent onto *pred (NULL: true). */
static bool add_bound(detector *dt, loom_expr **pred, loom_expr *x, int64_t extent,
                      loom_dtype t) {
  loom_expr *b = x ? loom_ir_binary(dt->a, LOOM_EXPR_LT, x, loom_ir_int(dt->a, t, extent))
                   : NULL;
  *pred = !b ? NULL : *pred ? loom_ir_binary(dt->a, LOOM_EXPR_AND, *pred, b) : b;
  return *pred ? true : nomem(dt);
}

/* The value of a cut mark in TVM's normal form (i * 8 + j < 100). */
static loom_expr *cut_expr(detector *dt, const loom_iter_mark *m, loom_dtype t) {
  if (m->var)
    return mark_expr(dt->a, m, t);
  return loom_arith_iter_sum_normal(dt->a, m->fused, t);
}

/* A binding that is the whole of a mark the predicate cut short (j_0 * 10 +
 * j_1 under j_0 * 10 + j_1 < 128) has no outer * extent + inner form: it
 * goes whole to the side its loops are on, and the bound with it, as that
 * side's predicate (TVM's division). A cut mark inside a binding, or one
 * over loops of both sides, does not divide. */
static bool divide_cut(detector *dt, const loom_iter_sum *s, loom_dtype t,
                       const loom_var *const *inner, int n_inner,
                       loom_iter_division *out, loom_expr **outer_pred,
                       loom_expr **inner_pred) {
  const loom_iter_split *x = &s->splits[0];
  if (s->n_splits != 1 || s->symbolic_base || x->scale != 1 || x->lower_factor != 1 ||
      x->extent != x->source->extent || !is_cut(dt, x->source) || !outer_pred)
    return fail(dt, "the predicate bounds a part of the binding, which then does not "
                "divide into outer and inner parts");
  bool in = false, outside = false;
  if (!mark_is_inner(dt, x->source, inner, n_inner, &in, &outside, 0))
    return false;
  if (in && outside)
    return fail(dt, "the predicate bounds loops of both sides, so the binding does "
                "not divide into outer and inner parts");
  loom_expr *e = cut_expr(dt, x->source, t);
  if (!e)
    return nomem(dt);
  if (in) {
    *out = (loom_iter_division){loom_ir_int(dt->a, t, 0), with_base(dt->a, e, s->base, t),
                                1, x->extent};
    return add_bound(dt, inner_pred, e, x->extent, t);
  }
  *out = (loom_iter_division){with_base(dt->a, e, s->base, t), loom_ir_int(dt->a, t, 0),
                              x->extent, 1};
  return add_bound(dt, outer_pred, e, x->extent, t);
}

/* Whether the loops under mark m are inner ones, outer ones, or both. */
static bool mark_is_inner(const detector *dt, const loom_iter_mark *m,
                          const loom_var *const *inner, int n_inner, bool *is_inner_out,
                          bool *is_outer_out, int depth) {
  if (m->var) {
    if (is_inner(m->var, inner, n_inner))
      *is_inner_out = true;
    else
      *is_outer_out = true;
    return true;
  }
  if (depth > ARITH_MAX_DEPTH)
    return false;
  for (int k = 0; k < m->fused->n_splits; k++)
    if (!mark_is_inner(dt, m->fused->splits[k].source, inner, n_inner, is_inner_out,
                       is_outer_out, depth + 1))
      return false;
  return true;
}

static bool divide_one(detector *dt, const loom_iter_sum *s, loom_dtype t,
                       const loom_var *const *inner, int n_inner,
                       loom_iter_division *out, loom_expr **outer_pred,
                       loom_expr **inner_pred) {
  for (int k = 0; k < s->n_splits; k++)
    if (has_cut(dt, s->splits[k].source, 0))
      return divide_cut(dt, s, t, inner, n_inner, out, outer_pred, inner_pred);
  leaves l = {0};
  bool is_ok = s->n_splits == 0 || expand(dt, &s->splits[0], &l, 0);
  if (!is_ok) {
    free(l.items);
    return false;
  }
  if (l.n > 1)
    qsort(l.items, (size_t)l.n, sizeof *l.items, cmp_leaf_scale);
  int64_t inner_extent = 1, outer_extent = 1;
  loom_expr *in = NULL, *outer = NULL;
  int n_outer = 0, n_in = 0;
  /* Each part is a sum of its digits, largest scale first, as TVM's
   * normal form writes it: the digits are checked from the smallest and
   * summed from the largest. */
  for (int k = 0; k < l.n && is_ok; k++) {
    const leaf *x = &l.items[k];
    const loom_iter_mark *m = &dt->var_marks[x->iter];
    if (is_inner(m->var, inner, n_inner)) {
      if (n_outer > 0) {
        is_ok = fail(dt, "inner loop '%s' sits above an outer loop in the "
                     "binding, so it cannot be split into outer and inner parts",
                     m->var->name);
        break;
      }
      n_in++;
      is_ok = mul_ok(dt, inner_extent, x->extent, &inner_extent);
    } else {
      n_outer++;
      is_ok = mul_ok(dt, outer_extent, x->extent, &outer_extent);
    }
  }
  for (int k = l.n - 1; k >= 0 && is_ok; k--) {
    const leaf *x = &l.items[k];
    const loom_iter_mark *m = &dt->var_marks[x->iter];
    loom_iter_split digits = {m, x->lower_factor, x->extent, 1};
    loom_expr *v = normal_split(dt->a, &digits, t);
    if (k < n_in)
      is_ok = (in = add_term(dt->a, in, v, x->scale, t)) != NULL;
    else
      is_ok = (outer = add_term(dt->a, outer, v, x->scale / inner_extent, t)) != NULL;
  }
  free(l.items);
  if (!is_ok)
    return dt->is_nomem || loom_arena_status(dt->a) != LOOM_OK ? nomem(dt) : false;
  int64_t base = s->base;
  if (s->symbolic_base) {
    /* Invariant terms belong to the outer part, whole multiples of the
     * inner extent only (vi_o * 16 + i_i with 16 inner iterations). */
    loom_expr *q = s->symbolic_base;
    if (!loom_dtype_eq(q->dtype, t))
      q = loom_ir_cast(dt->a, t, q);
    if (q && inner_extent > 1) {
      loom_arith_ctx *ctx = loom_arith_ctx_new();
      loom_expr *k = loom_ir_int(dt->a, t, inner_extent);
      loom_expr *r = ctx && k ? loom_arith_simplify(dt->a, ctx, loom_ir_binary(
                                    dt->a, LOOM_EXPR_FLOORMOD, q, k)) : NULL;
      int64_t rv = -1;
      bool is_multiple = r && loom_ir_is_const_int(r, &rv) && rv == 0;
      q = ctx && k ? loom_arith_simplify(dt->a, ctx, loom_ir_binary(
                         dt->a, LOOM_EXPR_FLOORDIV, q, k)) : NULL;
      loom_arith_ctx_free(ctx);
      if (!r || !q)
        return nomem(dt);
      if (!is_multiple)
        return fail(dt, "a term that is not a loop is not a multiple of the "
                    "inner extent %lld", (long long)inner_extent);
    }
    outer = q ? add_term(dt->a, outer, q, 1, t) : NULL;
    if (!outer)
      return nomem(dt);
    n_outer++;
  }
  if (n_outer == 0) {
    *out = (loom_iter_division){loom_ir_int(dt->a, t, 0),
                                with_base(dt->a, in, base, t), 1, inner_extent};
  } else if (base % inner_extent == 0) {
    *out = (loom_iter_division){with_base(dt->a, outer, base / inner_extent, t),
                                with_base(dt->a, in, 0, t), outer_extent,
                                inner_extent};
  } else {
    return fail(dt, "the offset %lld is not a multiple of the inner extent %lld",
                (long long)base, (long long)inner_extent);
  }
  return out->outer && out->inner ? true : nomem(dt);
}

static loom_status subspace_divide(
    loom_arena *a, loom_expr *const *bindings, int n,
    const loom_arith_relax *iters, int n_iters, const loom_expr *predicate,
    const loom_var *const *inner_vars, int n_inner, bool keep_units,
    loom_iter_division *out, loom_expr **outer_pred, loom_expr **inner_pred,
    loom_diag *d) {
  detector dt;
  TRY(setup(&dt, a, iters, n_iters, d));
  dt.keep_units = keep_units;
  if (outer_pred)
    *outer_pred = *inner_pred = NULL;
  loom_iter_map map;
  bool is_ok = detect(&dt, bindings, n, predicate, LOOM_ITER_MAP_SURJECTIVE, &map);
  for (int k = 0; k < n && is_ok; k++) {
    dt.binding = k;
    dt.binding_expr = bindings[k];
    is_ok = divide_one(&dt, &map.sums[k], bindings[k]->dtype, inner_vars,
                       n_inner, &out[k], outer_pred, inner_pred);
  }
  return finish(&dt, is_ok);
}

loom_status loom_arith_iter_map_subspace_divide(
    loom_arena *a, loom_expr *const *bindings, int n,
    const loom_arith_relax *iters, int n_iters, const loom_expr *predicate,
    const loom_var *const *inner_vars, int n_inner, loom_iter_division *out,
    loom_expr **outer_pred, loom_expr **inner_pred, loom_diag *d) {
  return subspace_divide(a, bindings, n, iters, n_iters, predicate, inner_vars, n_inner,
                         false, out, outer_pred, inner_pred, d);
}

loom_status loom_arith_iter_map_subspace_divide_units(
    loom_arena *a, loom_expr *const *bindings, int n,
    const loom_arith_relax *iters, int n_iters, const loom_expr *predicate,
    const loom_var *const *inner_vars, int n_inner, loom_iter_division *out,
    loom_expr **outer_pred, loom_expr **inner_pred, loom_diag *d) {
  return subspace_divide(a, bindings, n, iters, n_iters, predicate, inner_vars, n_inner,
                         true, out, outer_pred, inner_pred, d);
}
