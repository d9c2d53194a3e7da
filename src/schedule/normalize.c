/* Bindings in the form TVM's canonical simplifier prints them: the
 * simplifier's result with every sum of products expanded into
 * `a * c1 + b * c2 + ... + k`, terms in order of first appearance. So a
 * split of a split reads `i_0 * 64 + i_1 * 64 + i_2`, not
 * `(i_0 * 1 + i_1) * 64 + i_2`. */
#include "schedule/sched_impl.h"

#include <stdint.h>
#include <string.h>

#define MAX_TERMS 64

typedef struct lin {
  loom_expr *atoms[MAX_TERMS];
  int64_t coefs[MAX_TERMS];
  int n;
  int64_t constant;
  bool has_failed;
} lin;

static loom_expr *expand(loom_arena *a, loom_arith_ctx *ctx, loom_expr *e);

static void add_term(lin *l, loom_expr *atom, int64_t coef) {
  for (int i = 0; i < l->n; i++)
    if (loom_ir_same_expr(l->atoms[i], atom)) {
      if (__builtin_add_overflow(l->coefs[i], coef, &l->coefs[i]))
        l->has_failed = true;
      return;
    }
  if (l->n == MAX_TERMS) {
    l->has_failed = true;
    return;
  }
  l->atoms[l->n] = atom;
  l->coefs[l->n++] = coef;
}

static void collect(loom_arena *a, loom_arith_ctx *ctx, lin *l, loom_expr *e,
                    int64_t scale) {
  int64_t k;
  if (l->has_failed)
    return;
  if (loom_ir_is_const_int(e, &k)) {
    if (__builtin_mul_overflow(k, scale, &k) ||
        __builtin_add_overflow(l->constant, k, &l->constant))
      l->has_failed = true;
    return;
  }
  switch (e->kind) {
  case LOOM_EXPR_ADD:
    collect(a, ctx, l, e->u.bin.a, scale);
    collect(a, ctx, l, e->u.bin.b, scale);
    return;
  case LOOM_EXPR_SUB:
    collect(a, ctx, l, e->u.bin.a, scale);
    collect(a, ctx, l, e->u.bin.b, -scale);
    return;
  case LOOM_EXPR_MUL:
    if (loom_ir_is_const_int(e->u.bin.b, &k) ||
        loom_ir_is_const_int(e->u.bin.a, &k)) {
      loom_expr *x = loom_ir_is_const_int(e->u.bin.b, NULL) ? e->u.bin.a
                                                            : e->u.bin.b;
      int64_t s;
      if (__builtin_mul_overflow(scale, k, &s))
        l->has_failed = true;
      else
        collect(a, ctx, l, x, s);
      return;
    }
    break;
  default:
    break;
  }
  loom_expr *atom = expand(a, ctx, e);
  if (!atom)
    l->has_failed = true;
  else
    add_term(l, atom, scale);
}

static loom_visit stop_at_loop(void *ctx, loom_expr *e) {
  if (e->kind != LOOM_EXPR_VAR)
    return LOOM_VISIT_GO;
  /* An unbound variable ranges over its whole type */
  loom_arith_interval r = loom_arith_bound(ctx, e);
  bool ranged = r.is_bounded && r.min > INT32_MIN && r.max < INT32_MAX;
  return ranged ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

/* Whether e uses a variable with a range: a loop, where the other
 * variables (outer block iters, shape symbols) are unbounded. */
static bool uses_loop(loom_arith_ctx *ctx, loom_expr *e) {
  loom_ir_visitor v = {.expr_pre = stop_at_loop, .ctx = ctx};
  return ctx && !loom_ir_visit_expr(&v, e);
}

/* Terms over loops first, then the others (TVM's iterator sums put what is
 * not an iterator in the base, after them); each part by decreasing
 * coefficient magnitude, ties in order of appearance, as TVM's canonical
 * form orders a sum. */
static void sort_terms(loom_arith_ctx *ctx, lin *l) {
  bool loop[MAX_TERMS], any_loop = false, any_other = false;
  for (int i = 0; i < l->n; i++) {
    loop[i] = uses_loop(ctx, l->atoms[i]);
    any_loop |= loop[i];
    any_other |= !loop[i];
  }
  bool split = any_loop && any_other;
  for (int i = 1; i < l->n; i++) {
    loom_expr *atom = l->atoms[i];
    bool lp = loop[i];
    int64_t coef = l->coefs[i], mag = coef < 0 ? -coef : coef;
    int j = i;
    while (j > 0) {
      int64_t m = l->coefs[j - 1] < 0 ? -l->coefs[j - 1] : l->coefs[j - 1];
      bool before = split && lp != loop[j - 1] ? lp : m < mag;
      if (!before)
        break;
      l->atoms[j] = l->atoms[j - 1];
      l->coefs[j] = l->coefs[j - 1];
      loop[j] = loop[j - 1];
      j--;
    }
    l->atoms[j] = atom;
    l->coefs[j] = coef;
    loop[j] = lp;
  }
}

static loom_expr *build(loom_arena *a, loom_arith_ctx *ctx, lin *l, loom_dtype t) {
  sort_terms(ctx, l);
  loom_expr *r = NULL;
  int first = 0;
  while (first < l->n && l->coefs[first] == 0)
    first++;
  /* A sum that starts with a negative term starts with its constant
   * instead: `126 - i * 32`, as TVM prints it. */
  bool constant_first = first < l->n && l->coefs[first] < 0 && l->constant;
  if (constant_first)
    r = loom_ir_int(a, t, l->constant);
  for (int i = 0; i < l->n; i++) {
    int64_t c = l->coefs[i];
    if (c == 0)
      continue;
    int64_t mag = c < 0 ? -c : c;
    loom_expr *term = mag == 1 ? l->atoms[i]
                               : loom_ir_binary(a, LOOM_EXPR_MUL, l->atoms[i],
                                                loom_ir_int(a, t, mag));
    if (!r)
      r = c < 0 ? loom_ir_binary(a, LOOM_EXPR_SUB, loom_ir_int(a, t, 0), term)
                : term;
    else
      r = loom_ir_binary(a, c < 0 ? LOOM_EXPR_SUB : LOOM_EXPR_ADD, r, term);
    if (!r)
      return NULL;
  }
  if (!r)
    return loom_ir_int(a, t, l->constant);
  if (constant_first)
    return r;
  if (l->constant > 0)
    r = loom_ir_binary(a, LOOM_EXPR_ADD, r, loom_ir_int(a, t, l->constant));
  else if (l->constant < 0)
    r = loom_ir_binary(a, LOOM_EXPR_SUB, r, loom_ir_int(a, t, -l->constant));
  return r;
}

static bool is_sum(const loom_expr *e) {
  return e->kind == LOOM_EXPR_ADD || e->kind == LOOM_EXPR_SUB ||
         e->kind == LOOM_EXPR_MUL;
}

static loom_expr *expand(loom_arena *a, loom_arith_ctx *ctx, loom_expr *e) {
  if (!e || e->dtype.code != LOOM_DT_INT || e->dtype.lanes != 1)
    return e;
  if (is_sum(e)) {
    bool is_product = e->kind == LOOM_EXPR_MUL &&
                      !loom_ir_is_const_int(e->u.bin.a, NULL) &&
                      !loom_ir_is_const_int(e->u.bin.b, NULL);
    if (!is_product) {
      lin l;
      memset(&l, 0, sizeof l);
      collect(a, ctx, &l, e, 1);
      if (l.has_failed)
        return e;
      return build(a, ctx, &l, e->dtype);
    }
  }
  if (e->kind >= LOOM_EXPR_ADD && e->kind <= LOOM_EXPR_MAX) {
    loom_expr *x = expand(a, ctx, e->u.bin.a), *y = expand(a, ctx, e->u.bin.b);
    if (!x || !y)
      return NULL;
    if (x == e->u.bin.a && y == e->u.bin.b)
      return e;
    loom_expr *r = loom_ir_binary(a, e->kind, x, y);
    if (r)
      r->dtype = e->dtype;
    return r;
  }
  return e;
}

loom_expr *sched_normalize(loom_arena *a, loom_arith_ctx *ctx, loom_expr *e) {
  loom_expr *s = loom_arith_simplify(a, ctx, e);
  return s ? expand(a, ctx, s) : NULL;
}
