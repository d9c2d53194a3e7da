/* The simplifier: a bottom-up walk that applies the rules of rules.def to
 * each node until none fires, and the structural rules that reason with
 * variable ranges (floor division of linear forms, min/max and comparisons
 * decided by bounds, logic and select with constant operands). */
#include "arith/arith_impl.h"

typedef loom_expr *rule_fn(arith_simp *s, loom_expr *e);

typedef struct rule {
  loom_expr_kind kind;
  rule_fn *fn;
} rule;

static const rule rules[ARITH_RULE_COUNT_] = {
#define X(id, name, k, f) {LOOM_EXPR_##k, f},
#include "arith/rules.def"
#undef X
};

/* Rules may rewrite a node's result again this many times; each rewrite
 * makes progress, the cap only guards against a pair of rules that undo
 * each other. */
#define MAX_REWRITES 16

/* A copy of binary node e over new operands, keeping e's dtype. */
static loom_expr *rebuild(arith_simp *s, loom_expr *e, loom_expr_kind k,
                          loom_expr *x, loom_expr *y) {
  loom_expr *r = loom_ir_binary(s->arena, k, x, y);
  if (r)
    r->dtype = e->dtype; /* not shared yet */
  return r;
}

static loom_expr *constant(arith_simp *s, loom_dtype t, int64_t v) {
  return loom_ir_int(s->arena, t, v);
}

/* A load's indices or a call's arguments, simplified; e when none changed. */
static loom_expr *simp_operands(arith_simp *s, loom_expr *e) {
  bool is_load = e->kind == LOOM_EXPR_LOAD;
  loom_expr **xs = is_load ? e->u.load.indices : e->u.call.args;
  int n = is_load ? e->u.load.n_indices : e->u.call.n_args;
  loom_expr **ys = NULL;
  for (int i = 0; i < n; i++) {
    loom_expr *y = arith_simp_expr(s, xs[i]);
    if (!y)
      return NULL;
    if (y != xs[i] && !ys) {
      ys = loom_arena_alloc(s->arena, (size_t)n * sizeof *ys);
      if (!ys)
        return NULL;
      for (int k = 0; k < i; k++)
        ys[k] = xs[k];
    }
    if (ys)
      ys[i] = y;
  }
  if (!ys)
    return e;
  if (is_load) {
    loom_expr *r = loom_ir_load(s->arena, e->u.load.buffer, ys, n);
    if (r)
      r->dtype = e->dtype;
    return r;
  }
  return loom_ir_call(s->arena, e->dtype, e->u.call.op, ys, n);
}

loom_expr *arith_simp_children(arith_simp *s, loom_expr *e) {
  if (e->kind >= LOOM_EXPR_ADD && e->kind <= LOOM_EXPR_OR) {
    loom_expr *x = arith_simp_expr(s, e->u.bin.a);
    loom_expr *y = arith_simp_expr(s, e->u.bin.b);
    if (!x || !y)
      return NULL;
    return x == e->u.bin.a && y == e->u.bin.b ? e : rebuild(s, e, e->kind, x, y);
  }
  if (e->kind == LOOM_EXPR_NOT || e->kind == LOOM_EXPR_CAST) {
    loom_expr *x = arith_simp_expr(s, e->u.unary.a);
    if (!x || x == e->u.unary.a)
      return x ? e : NULL;
    return e->kind == LOOM_EXPR_NOT ? loom_ir_not(s->arena, x)
                                    : loom_ir_cast(s->arena, e->dtype, x);
  }
  if (e->kind == LOOM_EXPR_SELECT) {
    loom_expr *c = arith_simp_expr(s, e->u.select.cond);
    loom_expr *t = arith_simp_expr(s, e->u.select.t);
    loom_expr *f = arith_simp_expr(s, e->u.select.f);
    if (!c || !t || !f)
      return NULL;
    if (c == e->u.select.cond && t == e->u.select.t && f == e->u.select.f)
      return e;
    loom_expr *r = loom_ir_select(s->arena, c, t, f);
    if (r)
      r->dtype = e->dtype;
    return r;
  }
  if (e->kind == LOOM_EXPR_LOAD || e->kind == LOOM_EXPR_CALL)
    return simp_operands(s, e);
  return e; /* lets and vectors: left alone for now */
}

static loom_expr *apply_rules(arith_simp *s, loom_expr *e) {
  for (int round = 0; round < MAX_REWRITES; round++) {
    bool has_fired = false;
    for (int i = 0; i < ARITH_RULE_COUNT_ && !has_fired; i++) {
      if (rules[i].kind != e->kind)
        continue;
      loom_expr *r = rules[i].fn(s, e);
      if (!r)
        return NULL;
      if (r != e) {
        s->ctx->fires[i]++;
        e = r;
        has_fired = true;
      }
    }
    if (!has_fired)
      break;
  }
  return e;
}

loom_expr *arith_simp_expr(arith_simp *s, loom_expr *e) {
  if (!e || s->depth > ARITH_MAX_DEPTH)
    return e;
  s->depth++;
  /* The linear rule walks + and - chains itself, iteratively. */
  bool is_chain = (e->kind == LOOM_EXPR_ADD || e->kind == LOOM_EXPR_SUB) &&
                  arith_is_signed_int(e->dtype);
  loom_expr *r = is_chain ? e : arith_simp_children(s, e);
  if (r)
    r = apply_rules(s, r);
  s->depth--;
  return r;
}

loom_expr *loom_arith_simplify(loom_arena *a, loom_arith_ctx *ctx,
                               loom_expr *e) {
  arith_simp s = {a, ctx, 0};
  return arith_simp_expr(&s, e);
}

/* ---- rules that reason with ranges ---------------------------------------- */

static loom_arith_interval bound(arith_simp *s, loom_expr *e) {
  return arith_bound(s->ctx, e, s->depth + 1);
}

/* Truncating division equals floor division when neither operand is
 * negative; the floor rules below know more. */
loom_expr *rule_trunc_to_floor(arith_simp *s, loom_expr *e) {
  if (!arith_is_signed_int(e->dtype))
    return e;
  loom_arith_interval bx = bound(s, e->u.bin.a), by = bound(s, e->u.bin.b);
  if (!bx.is_bounded || !by.is_bounded || bx.min < 0 || by.min <= 0)
    return e;
  loom_expr_kind k = e->kind == LOOM_EXPR_DIV ? LOOM_EXPR_FLOORDIV
                                              : LOOM_EXPR_FLOORMOD;
  return rebuild(s, e, k, e->u.bin.a, e->u.bin.b);
}

/* (x // a) // b == x // (a*b) for a, b > 0. */
loom_expr *rule_floordiv_nested(arith_simp *s, loom_expr *e) {
  loom_expr *inner = e->u.bin.a;
  int64_t a, b, ab;
  if (!arith_is_signed_int(e->dtype) || inner->kind != LOOM_EXPR_FLOORDIV ||
      !loom_ir_is_const_int(inner->u.bin.b, &a) ||
      !loom_ir_is_const_int(e->u.bin.b, &b) || a <= 0 || b <= 0 ||
      __builtin_mul_overflow(a, b, &ab) || !arith_fits(e->dtype, ab))
    return e;
  loom_expr *c = constant(s, e->dtype, ab);
  return c ? rebuild(s, e, LOOM_EXPR_FLOORDIV, inner->u.bin.a, c) : NULL;
}

/* (a * g) // (c * g) == a // c: a common factor of every coefficient, the
 * constant and the divisor divides out, as in TVM's canonical form
 * (i * 8 // 16 -> i // 2). */
loom_expr *rule_floordiv_gcd(arith_simp *s, loom_expr *e) {
  int64_t c;
  if (!arith_is_signed_int(e->dtype) || !loom_ir_is_const_int(e->u.bin.b, &c) ||
      c <= 1)
    return e;
  arith_linear l;
  arith_linear_init(&l, e->dtype);
  l.is_simplified = true;
  arith_linear_add(s, &l, e->u.bin.a, 1);
  int64_t g = c;
  bool any = false;
  for (int i = 0; i < l.n_terms && !l.has_failed; i++) {
    if (l.terms[i].coef == INT64_MIN)
      l.has_failed = true;
    else if (l.terms[i].coef) {
      g = arith_gcd64(g, l.terms[i].coef < 0 ? -l.terms[i].coef : l.terms[i].coef);
      any = true;
    }
  }
  if (l.constant == INT64_MIN)
    l.has_failed = true;
  else if (l.constant)
    g = arith_gcd64(g, l.constant < 0 ? -l.constant : l.constant);
  loom_expr *r = e;
  if (!l.has_failed && any && g > 1) {
    for (int i = 0; i < l.n_terms; i++)
      l.terms[i].coef /= g;
    l.constant /= g;
    int cost;
    loom_expr *x = arith_linear_build(s, &l, &cost);
    loom_expr *k = x ? constant(s, e->dtype, c / g) : NULL;
    r = k ? rebuild(s, e, LOOM_EXPR_FLOORDIV, x, k) : NULL;
  }
  arith_linear_free(&l);
  return r;
}

static int64_t floor_div(int64_t x, int64_t c) {
  int64_t q = x / c;
  return (x % c != 0 && (x < 0) != (c < 0)) ? q - 1 : q;
}

/* Splits the linear form of x into c * quot + rest, where quot takes every
 * term whose coefficient c divides and the floor quotient of the constant.
 * Then x // c == quot + rest // c and x % c == rest % c, exactly; and when
 * rest // c is the same k over the whole bound of rest, both fold:
 * (i*16 + j) // 16 -> i and (i*16 + j) % 16 -> j for j in [0, 15]. */
typedef struct floor_split {
  arith_linear quot, rest;
  bool has_quot_atoms;
  bool is_decided;
  int64_t k;
} floor_split;

static bool split(arith_simp *s, loom_expr *x, int64_t c, floor_split *f) {
  arith_linear l;
  arith_linear_init(&l, x->dtype);
  arith_linear_init(&f->quot, x->dtype);
  arith_linear_init(&f->rest, x->dtype);
  f->has_quot_atoms = f->is_decided = false;
  l.is_simplified = true;
  arith_linear_add(s, &l, x, 1);
  bool is_ok = !l.has_failed && !(c == -1 && l.constant == INT64_MIN);
  for (int i = 0; is_ok && i < l.n_terms; i++) {
    arith_term t = l.terms[i];
    if (t.coef == 0)
      continue;
    if (c == -1 && t.coef == INT64_MIN) {
      is_ok = false;
    } else if (c == -1 || t.coef % c == 0) {
      arith_linear_add_term(&f->quot, t.atom, t.coef / c);
      f->has_quot_atoms = true;
    } else {
      arith_linear_add_term(&f->rest, t.atom, t.coef);
    }
  }
  if (is_ok) {
    int64_t q = floor_div(l.constant, c);
    f->quot.constant = q;
    f->rest.constant = l.constant - q * c; /* in [0, c) or (c, 0]: no overflow */
    loom_arith_interval rb = arith_linear_bound(s, &f->rest);
    if (rb.is_bounded && floor_div(rb.min, c) == floor_div(rb.max, c)) {
      f->is_decided = true;
      f->k = floor_div(rb.min, c);
    }
  }
  arith_linear_free(&l);
  return is_ok && !f->quot.has_failed && !f->rest.has_failed;
}

static loom_expr *floor_result(arith_simp *s, loom_expr *e, floor_split *f) {
  int cost;
  int64_t c = e->u.bin.b->u.int_value, kc;
  bool is_div = e->kind == LOOM_EXPR_FLOORDIV;
  if (f->is_decided) {
    arith_linear *l = is_div ? &f->quot : &f->rest;
    if (__builtin_mul_overflow(f->k, c, &kc))
      return e;
    arith_linear_add_const(l, is_div ? f->k : -kc);
    loom_expr *r = arith_linear_build(s, l, &cost);
    return r ? r : l->has_failed ? e : NULL;
  }
  if (!f->has_quot_atoms && f->quot.constant == 0)
    return e;
  loom_expr *rest = arith_linear_build(s, &f->rest, &cost);
  loom_expr *m = rest ? rebuild(s, e, e->kind, rest, e->u.bin.b) : NULL;
  if (!is_div || !m)
    return m ? m : f->rest.has_failed ? e : NULL;
  loom_expr *q = arith_linear_build(s, &f->quot, &cost);
  if (!q)
    return f->quot.has_failed ? e : NULL;
  return rebuild(s, e, LOOM_EXPR_ADD, q, m);
}

loom_expr *rule_floor_linear(arith_simp *s, loom_expr *e) {
  int64_t c;
  if (!arith_is_signed_int(e->dtype) || !loom_ir_is_const_int(e->u.bin.b, &c) ||
      c == 0)
    return e;
  floor_split f;
  loom_expr *r = e;
  if (split(s, e->u.bin.a, c, &f))
    r = floor_result(s, e, &f);
  arith_linear_free(&f.quot);
  arith_linear_free(&f.rest);
  if (r == e && loom_arena_status(s->arena) != LOOM_OK)
    return NULL;
  return r;
}

/* x = g * quot + rest for g: quot takes the terms whose coefficient g
 * divides, and the floor quotient of the constant. */
static bool scaled_split(const arith_linear *l, int64_t g, arith_linear *quot,
                         arith_linear *rest) {
  bool has_atoms = false;
  for (int i = 0; i < l->n_terms; i++) {
    arith_term t = l->terms[i];
    if (t.coef == 0)
      continue;
    if (t.coef % g == 0) {
      arith_linear_add_term(quot, t.atom, t.coef / g);
      has_atoms = true;
    } else {
      arith_linear_add_term(rest, t.atom, t.coef);
    }
  }
  quot->constant = floor_div(l->constant, g);
  rest->constant = l->constant - quot->constant * g;
  return has_atoms && !quot->has_failed && !rest->has_failed;
}

/* (g*X + r) // c -> X // (c/g) and (g*X + r) % c -> X % (c/g) * g + r when
 * g divides c and r stays in [0, g) ((o*8 + i) // 48 -> o // 6 for i in
 * [0, 7]), g the gcd of c with one of the coefficients. floor_linear takes
 * g == c. */
loom_expr *rule_floor_scaled(arith_simp *s, loom_expr *e) {
  int64_t c;
  if (!arith_is_signed_int(e->dtype) || !loom_ir_is_const_int(e->u.bin.b, &c) || c <= 1)
    return e;
  arith_linear l;
  arith_linear_init(&l, e->dtype);
  l.is_simplified = true;
  arith_linear_add(s, &l, e->u.bin.a, 1);
  loom_expr *r = e;
  for (int i = 0; i < l.n_terms && !l.has_failed && r == e; i++) {
    int64_t coef = l.terms[i].coef;
    if (coef == 0 || coef == INT64_MIN)
      continue;
    int64_t g = arith_gcd64(c, coef < 0 ? -coef : coef);
    if (g <= 1 || g == c)
      continue;
    arith_linear quot, rest;
    arith_linear_init(&quot, e->dtype);
    arith_linear_init(&rest, e->dtype);
    if (scaled_split(&l, g, &quot, &rest)) {
      loom_arith_interval rb = arith_linear_bound(s, &rest);
      int cost;
      if (rb.is_bounded && rb.min >= 0 && rb.max < g) {
        loom_expr *x = arith_linear_build(s, &quot, &cost);
        loom_expr *k = x ? constant(s, e->dtype, c / g) : NULL;
        loom_expr *q = k ? rebuild(s, e, e->kind, x, k) : NULL;
        if (q && e->kind == LOOM_EXPR_FLOORMOD) {
          loom_expr *y = arith_linear_build(s, &rest, &cost);
          loom_expr *m = y ? rebuild(s, e, LOOM_EXPR_MUL, q, constant(s, e->dtype, g)) : NULL;
          q = m ? rebuild(s, e, LOOM_EXPR_ADD, m, y) : NULL;
        }
        r = q;
      }
    }
    arith_linear_free(&quot);
    arith_linear_free(&rest);
  }
  arith_linear_free(&l);
  if (!r && loom_arena_status(s->arena) == LOOM_OK)
    r = e; /* a coefficient that does not fit the dtype */
  return r;
}

/* g*X + r < c -> X < q + 1 when r stays below s, and X < q when r stays in
 * [s, g), for c = q*g + s and r in [0, g): every r then answers alike for
 * one X (i * 8 + j < 120 -> i < 15 for j in [0, 7], as TVM's simplifier
 * writes it). g is one of the coefficients, tried in turn. */
loom_expr *rule_cmp_scaled(arith_simp *s, loom_expr *e) {
  int64_t c;
  loom_expr *x = e->u.bin.a;
  if (!arith_is_signed_int(x->dtype) || !loom_ir_is_const_int(e->u.bin.b, &c))
    return e;
  arith_linear l;
  arith_linear_init(&l, x->dtype);
  l.is_simplified = true;
  arith_linear_add(s, &l, x, 1);
  if (__builtin_sub_overflow(c, l.constant, &c))
    l.has_failed = true;
  l.constant = 0;
  loom_expr *r = e;
  for (int i = 0; i < l.n_terms && !l.has_failed && r == e; i++) {
    int64_t coef = l.terms[i].coef;
    if (coef <= 1 || coef == INT64_MIN)
      continue;
    int64_t g = coef;
    arith_linear quot, rest;
    arith_linear_init(&quot, x->dtype);
    arith_linear_init(&rest, x->dtype);
    if (scaled_split(&l, g, &quot, &rest)) {
      loom_arith_interval rb = arith_linear_bound(s, &rest);
      int64_t q = floor_div(c, g), sm = c - q * g;
      int cost;
      if (rb.is_bounded && rb.min >= 0 && rb.max < g && (rb.max < sm || rb.min >= sm)) {
        loom_expr *y = arith_linear_build(s, &quot, &cost);
        loom_expr *k = y ? constant(s, x->dtype, rb.max < sm ? q + 1 : q) : NULL;
        r = k ? rebuild(s, e, LOOM_EXPR_LT, y, k) : NULL;
      }
    }
    arith_linear_free(&quot);
    arith_linear_free(&rest);
  }
  arith_linear_free(&l);
  if (!r && loom_arena_status(s->arena) == LOOM_OK)
    r = e;
  return r;
}

/* The bound of y - x over their linear forms, so that shared atoms cancel. */
static loom_arith_interval difference(arith_simp *s, loom_expr *x,
                                      loom_expr *y) {
  arith_linear l;
  arith_linear_init(&l, x->dtype);
  l.is_simplified = true;
  arith_linear_add(s, &l, y, 1);
  arith_linear_add(s, &l, x, -1);
  loom_arith_interval d = arith_linear_bound(s, &l);
  arith_linear_free(&l);
  return d;
}

loom_expr *rule_minmax_bound(arith_simp *s, loom_expr *e) {
  loom_expr *x = e->u.bin.a, *y = e->u.bin.b;
  if (!arith_is_signed_int(e->dtype))
    return e;
  loom_arith_interval d = difference(s, x, y); /* y - x */
  if (!d.is_bounded)
    return e;
  bool is_min = e->kind == LOOM_EXPR_MIN;
  if (d.min >= 0)
    return is_min ? x : y;
  if (d.max <= 0)
    return is_min ? y : x;
  return e;
}

/* Decides x OP y from the bound of y - x; 1 true, 0 false, -1 unknown. */
static int decide(loom_expr_kind k, loom_arith_interval d) {
  switch (k) {
  case LOOM_EXPR_LT: return d.min > 0 ? 1 : d.max <= 0 ? 0 : -1;
  case LOOM_EXPR_LE: return d.min >= 0 ? 1 : d.max < 0 ? 0 : -1;
  case LOOM_EXPR_GT: return d.max < 0 ? 1 : d.min >= 0 ? 0 : -1;
  case LOOM_EXPR_GE: return d.max <= 0 ? 1 : d.min > 0 ? 0 : -1;
  case LOOM_EXPR_EQ:
    return d.min == 0 && d.max == 0 ? 1 : (d.min > 0 || d.max < 0) ? 0 : -1;
  case LOOM_EXPR_NE:
    return d.min == 0 && d.max == 0 ? 0 : (d.min > 0 || d.max < 0) ? 1 : -1;
  default: return -1;
  }
}

loom_expr *rule_cmp_bound(arith_simp *s, loom_expr *e) {
  loom_expr *x = e->u.bin.a, *y = e->u.bin.b;
  if (!arith_is_signed_int(x->dtype) || !loom_dtype_eq(x->dtype, y->dtype) ||
      e->dtype.lanes != 1)
    return e;
  loom_arith_interval d = difference(s, x, y);
  int v = d.is_bounded ? decide(e->kind, d) : -1;
  return v < 0 ? e : constant(s, e->dtype, v);
}

static bool is_bool_const(const loom_expr *e, int64_t *v) {
  return e->dtype.code == LOOM_DT_BOOL && loom_ir_is_const_int(e, v);
}

/* and/or with a constant side, and x and x == x or x == x. */
loom_expr *rule_logic(arith_simp *s, loom_expr *e) {
  (void)s;
  loom_expr *x = e->u.bin.a, *y = e->u.bin.b;
  bool is_and = e->kind == LOOM_EXPR_AND;
  int64_t v;
  if (!loom_dtype_eq(x->dtype, e->dtype) || !loom_dtype_eq(y->dtype, e->dtype))
    return e;
  for (int side = 0; side < 2; side++) {
    loom_expr *c = side ? y : x, *other = side ? x : y;
    if (!is_bool_const(c, &v))
      continue;
    /* true and y == y; false and y == false; dually for or. */
    return (v != 0) == is_and ? other : c;
  }
  return arith_same_expr(x, y, 0) ? x : e;
}

loom_expr *rule_not(arith_simp *s, loom_expr *e) {
  loom_expr *x = e->u.unary.a;
  int64_t v;
  if (is_bool_const(x, &v))
    return constant(s, e->dtype, v == 0);
  if (x->kind == LOOM_EXPR_NOT && loom_dtype_eq(x->u.unary.a->dtype, e->dtype))
    return x->u.unary.a;
  return e;
}

loom_expr *rule_select(arith_simp *s, loom_expr *e) {
  (void)s;
  int64_t v;
  loom_expr *t = e->u.select.t, *f = e->u.select.f;
  if (loom_ir_is_const_int(e->u.select.cond, &v) && e->u.select.cond->dtype.lanes == 1)
    return v ? t : f;
  return arith_same_expr(t, f, 0) ? t : e;
}
