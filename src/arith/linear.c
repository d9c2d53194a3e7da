/* Canonical linear form of integer sums of products: scale * e is collected
 * into sum(coef_i * atom_i) + constant, merging equal atoms, so that
 * `x*2 + x` becomes `x*3` and `(i*16 + j) - j` becomes `i*16`. Atoms are the
 * simplified non-linear parts (variables, products of non-constants,
 * divisions, ...). Coefficients are exact int64; any overflow fails the form. */
#include "arith/arith_impl.h"

#include <stdlib.h>
#include <string.h>

bool arith_same_expr(const loom_expr *a, const loom_expr *b, int depth) {
  if (a == b)
    return true;
  if (!a || !b || a->kind != b->kind || !loom_dtype_eq(a->dtype, b->dtype) ||
      depth > ARITH_MAX_DEPTH)
    return false;
  switch (a->kind) {
  case LOOM_EXPR_INT: return a->u.int_value == b->u.int_value;
  case LOOM_EXPR_VAR: return a->u.var == b->u.var;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    return arith_same_expr(a->u.unary.a, b->u.unary.a, depth + 1);
  case LOOM_EXPR_SELECT:
    return arith_same_expr(a->u.select.cond, b->u.select.cond, depth + 1) &&
           arith_same_expr(a->u.select.t, b->u.select.t, depth + 1) &&
           arith_same_expr(a->u.select.f, b->u.select.f, depth + 1);
  default:
    if (a->kind >= LOOM_EXPR_ADD && a->kind <= LOOM_EXPR_OR)
      return arith_same_expr(a->u.bin.a, b->u.bin.a, depth + 1) &&
             arith_same_expr(a->u.bin.b, b->u.bin.b, depth + 1);
    return false; /* loads, calls, lets: only the same node is known equal */
  }
}

void arith_linear_init(arith_linear *l, loom_dtype t) {
  *l = (arith_linear){.dtype = t};
}

void arith_linear_free(arith_linear *l) { free(l->terms); }

void arith_linear_add_const(arith_linear *l, int64_t c) {
  if (__builtin_add_overflow(l->constant, c, &l->constant))
    l->has_failed = true;
}

void arith_linear_add_term(arith_linear *l, loom_expr *atom, int64_t coef) {
  for (int i = 0; i < l->n_terms; i++) {
    if (arith_same_expr(l->terms[i].atom, atom, 0)) {
      if (__builtin_add_overflow(l->terms[i].coef, coef, &l->terms[i].coef))
        l->has_failed = true;
      return;
    }
  }
  if (l->n_terms == l->cap_terms) {
    int cap = l->cap_terms ? l->cap_terms * 2 : 8;
    arith_term *t = realloc(l->terms, (size_t)cap * sizeof *t);
    if (!t) {
      l->has_failed = true;
      return;
    }
    l->terms = t;
    l->cap_terms = cap;
  }
  l->terms[l->n_terms++] = (arith_term){atom, coef};
}

static bool is_linear_node(const arith_linear *l, const loom_expr *e) {
  return (e->kind == LOOM_EXPR_ADD || e->kind == LOOM_EXPR_SUB ||
          e->kind == LOOM_EXPR_MUL) &&
         loom_dtype_eq(e->dtype, l->dtype);
}

static void add_operand(arith_simp *s, arith_linear *l, loom_expr *e,
                        int64_t scale);

static void add_product(arith_simp *s, arith_linear *l, loom_expr *e,
                        int64_t scale) {
  loom_expr *x = l->is_simplified ? e->u.bin.a : arith_simp_expr(s, e->u.bin.a);
  loom_expr *y = l->is_simplified ? e->u.bin.b : arith_simp_expr(s, e->u.bin.b);
  if (!x || !y) {
    l->has_failed = true;
    return;
  }
  int64_t c, scaled;
  if (loom_ir_is_const_int(y, &c) || loom_ir_is_const_int(x, &c)) {
    loom_expr *other = y->kind == LOOM_EXPR_INT ? x : y;
    if (__builtin_mul_overflow(scale, c, &scaled)) {
      l->has_failed = true;
      return;
    }
    l->cost++; /* the constant factor */
    add_operand(s, l, other, scaled);
    return;
  }
  loom_expr *atom = e;
  if (x != e->u.bin.a || y != e->u.bin.b) {
    atom = loom_ir_binary(s->arena, LOOM_EXPR_MUL, x, y);
    l->is_changed = true;
  }
  if (!atom)
    l->has_failed = true;
  else
    arith_linear_add_term(l, atom, scale);
}

/* The operands hanging off a left spine, saved so that they are added in
 * source order (the spine is walked from the top, i.e. right to left). */
typedef struct pending {
  loom_expr *e;
  int64_t scale;
} pending;

static void add_sum(arith_simp *s, arith_linear *l, loom_expr *e,
                    int64_t scale) {
  pending *stack = NULL;
  int n = 0, cap = 0;
  loom_expr *cur = e;
  while (!l->has_failed && (cur->kind == LOOM_EXPR_ADD || cur->kind == LOOM_EXPR_SUB) &&
         loom_dtype_eq(cur->dtype, l->dtype)) {
    int64_t sc = scale;
    if (cur->kind == LOOM_EXPR_SUB && __builtin_mul_overflow(scale, -1, &sc))
      l->has_failed = true;
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      pending *p = realloc(stack, (size_t)cap * sizeof *p);
      if (!p) {
        l->has_failed = true;
        break;
      }
      stack = p;
    }
    stack[n++] = (pending){cur->u.bin.b, sc};
    l->cost++;
    cur = cur->u.bin.a;
  }
  if (!l->has_failed)
    add_operand(s, l, cur, scale);
  while (n > 0 && !l->has_failed) {
    n--;
    add_operand(s, l, stack[n].e, stack[n].scale);
  }
  free(stack);
}

static void add_operand(arith_simp *s, arith_linear *l, loom_expr *e,
                        int64_t scale) {
  if (l->has_failed)
    return;
  if (s->depth > ARITH_MAX_DEPTH) {
    l->cost++;
    arith_linear_add_term(l, e, scale);
    return;
  }
  int64_t v, scaled;
  if (loom_ir_is_const_int(e, &v)) {
    l->cost++;
    if (__builtin_mul_overflow(scale, v, &scaled))
      l->has_failed = true;
    else
      arith_linear_add_const(l, scaled);
    return;
  }
  if (is_linear_node(l, e)) {
    s->depth++;
    if (e->kind == LOOM_EXPR_MUL) {
      l->cost++; /* add_sum counts its own nodes */
      add_product(s, l, e, scale);
    } else {
      add_sum(s, l, e, scale);
    }
    s->depth--;
    return;
  }
  loom_expr *atom = l->is_simplified ? e : arith_simp_expr(s, e);
  if (!atom) {
    l->has_failed = true;
    return;
  }
  l->cost++;
  if (atom == e) {
    arith_linear_add_term(l, atom, scale);
    return;
  }
  l->is_changed = true;
  l->cost -= 1; /* counted again below, as what it simplified to */
  int old_cost = l->cost;
  if (atom->kind == LOOM_EXPR_INT || is_linear_node(l, atom))
    add_operand(s, l, atom, scale);
  else
    arith_linear_add_term(l, atom, scale);
  l->cost = old_cost + 1;
}

void arith_linear_add(arith_simp *s, arith_linear *l, loom_expr *e,
                      int64_t scale) {
  add_operand(s, l, e, scale);
}

static loom_expr *constant(arith_simp *s, arith_linear *l, int64_t v) {
  if (!arith_fits(l->dtype, v)) {
    l->has_failed = true;
    return NULL;
  }
  return loom_ir_int(s->arena, l->dtype, v);
}

/* acc + coef * atom, written as acc - |coef| * atom for negative coef. */
static loom_expr *append(arith_simp *s, arith_linear *l, loom_expr *acc,
                         loom_expr *atom, int64_t coef, int *cost) {
  bool is_neg = acc && coef < 0;
  int64_t mag = is_neg ? -coef : coef;
  loom_expr *term = atom;
  (*cost)++;
  if (mag != 1) {
    loom_expr *c = constant(s, l, mag);
    term = c ? loom_ir_binary(s->arena, LOOM_EXPR_MUL, atom, c) : NULL;
    *cost += 2;
  }
  if (!term)
    return NULL;
  if (!acc)
    return term;
  (*cost)++;
  return loom_ir_binary(s->arena, is_neg ? LOOM_EXPR_SUB : LOOM_EXPR_ADD, acc,
                        term);
}

loom_expr *arith_linear_build(arith_simp *s, arith_linear *l, int *cost) {
  *cost = 0;
  if (l->has_failed)
    return NULL;
  loom_expr *acc = NULL;
  int first = -1;
  for (int i = 0; i < l->n_terms && first < 0; i++)
    if (l->terms[i].coef > 0)
      first = i;
  if (first >= 0 &&
      !(acc = append(s, l, NULL, l->terms[first].atom, l->terms[first].coef, cost)))
    return NULL;
  for (int i = 0; i < l->n_terms; i++) {
    if (i == first || l->terms[i].coef == 0)
      continue;
    if (l->terms[i].coef == INT64_MIN) {
      l->has_failed = true;
      return NULL;
    }
    acc = append(s, l, acc, l->terms[i].atom, l->terms[i].coef, cost);
    if (!acc)
      return NULL;
  }
  int64_t c = l->constant;
  if (!acc) {
    (*cost)++;
    return constant(s, l, c);
  }
  if (c == 0)
    return acc;
  if (c == INT64_MIN) {
    l->has_failed = true;
    return NULL;
  }
  loom_expr *k = constant(s, l, c < 0 ? -c : c);
  *cost += 2;
  return k ? loom_ir_binary(s->arena, c < 0 ? LOOM_EXPR_SUB : LOOM_EXPR_ADD,
                            acc, k)
           : NULL;
}

loom_arith_interval arith_linear_bound(const arith_simp *s,
                                       const arith_linear *l) {
  if (l->has_failed)
    return arith_unbounded();
  int64_t lo = l->constant, hi = l->constant;
  for (int i = 0; i < l->n_terms; i++) {
    int64_t c = l->terms[i].coef;
    if (c == 0)
      continue;
    loom_arith_interval b = arith_bound(s->ctx, l->terms[i].atom, s->depth + 1);
    int64_t p, q;
    if (!b.is_bounded || __builtin_mul_overflow(b.min, c, &p) ||
        __builtin_mul_overflow(b.max, c, &q))
      return arith_unbounded();
    if (p > q) {
      int64_t t = p;
      p = q;
      q = t;
    }
    if (__builtin_add_overflow(lo, p, &lo) || __builtin_add_overflow(hi, q, &hi))
      return arith_unbounded();
  }
  return (loom_arith_interval){lo, hi, true};
}

/* Rewrites a signed integer +, - or * into its canonical linear form when
 * that is smaller than the input or an atom simplified; otherwise keeps the
 * node, with simplified operands. */
/* x // c as an atom: x and c > 0. */
static bool is_div_by(const loom_expr *e, loom_expr **x, int64_t *c) {
  if (e->kind != LOOM_EXPR_FLOORDIV || e->u.bin.b->kind != LOOM_EXPR_INT ||
      e->u.bin.b->u.int_value <= 0)
    return false;
  *x = e->u.bin.a;
  *c = e->u.bin.b->u.int_value;
  return true;
}

/* Terms i and j become one, atom, in the place of the earlier of the two;
 * the other terms keep their order (the sum prints in it). */
static void merge_terms(arith_linear *l, int i, int j, loom_expr *atom, int64_t coef) {
  int keep = i < j ? i : j, drop = i < j ? j : i;
  l->terms[keep] = (arith_term){atom, coef};
  memmove(&l->terms[drop], &l->terms[drop + 1],
          (size_t)(l->n_terms - drop - 1) * sizeof *l->terms);
  l->n_terms--;
  l->is_changed = true;
}

/* x % c as an atom: x and c > 0. */
static bool is_mod_by(const loom_expr *e, loom_expr **x, int64_t *c) {
  if (e->kind != LOOM_EXPR_FLOORMOD || e->u.bin.b->kind != LOOM_EXPR_INT ||
      e->u.bin.b->u.int_value <= 0)
    return false;
  *x = e->u.bin.a;
  *c = e->u.bin.b->u.int_value;
  return true;
}

/* The low digits joined: with c2 dividing c1,
 *   (x % c1 // c2) * c2 * k + (x % c2) * k  =  (x % c1) * k,
 * as x % c2 is (x % c1) % c2. */
static void join_low_digits(arith_simp *s, arith_linear *l) {
  for (int j = 0; j < l->n_terms; j++) {
    loom_expr *x, *y, *inner;
    int64_t c2, c1, d, want, k = l->terms[j].coef;
    if (!is_mod_by(l->terms[j].atom, &x, &c2))
      continue;
    for (int i = 0; i < l->n_terms; i++) {
      if (i == j || !is_div_by(l->terms[i].atom, &inner, &d) || d != c2 ||
          !is_mod_by(inner, &y, &c1) || c1 % c2 != 0 || !arith_same_expr(x, y, 0) ||
          __builtin_mul_overflow(k, c2, &want) || l->terms[i].coef != want)
        continue;
      merge_terms(l, i, j, inner, k);
      j = -1; /* the terms moved: look again from the start */
      break;
    }
  }
  (void)s;
}

/* Digits of one value joined again, as TVM's iterator maps join a fused
 * loop's parts: with c2 dividing c1,
 *   (x // c1) * (c1 / c2) * k + (x % c1 // c2) * k  =  (x // c2) * k,
 * and x // c * c * k + x % c * k = x * k (c2 = 1). Exact for floor division
 * and modulo, whatever the sign of x. */
static void join_digits(arith_simp *s, arith_linear *l) {
  join_low_digits(s, l);
  for (int j = 0; j < l->n_terms; j++) {
    loom_expr *atom = l->terms[j].atom, *x, *rest;
    int64_t c1, c2 = 1, k = l->terms[j].coef;
    if (atom->kind == LOOM_EXPR_FLOORMOD)
      rest = atom;
    else if (!is_div_by(atom, &rest, &c2) || rest->kind != LOOM_EXPR_FLOORMOD)
      continue;
    if (rest->u.bin.b->kind != LOOM_EXPR_INT || (c1 = rest->u.bin.b->u.int_value) <= 0 ||
        c1 % c2 != 0)
      continue;
    x = rest->u.bin.a;
    for (int i = 0; i < l->n_terms; i++) {
      loom_expr *y;
      int64_t d, want;
      if (i == j || !is_div_by(l->terms[i].atom, &y, &d) || d != c1 ||
          !arith_same_expr(x, y, 0) || __builtin_mul_overflow(k, c1 / c2, &want) ||
          l->terms[i].coef != want)
        continue;
      loom_expr *joined = x;
      if (c2 != 1) {
        loom_expr *cv = loom_ir_int(s->arena, atom->dtype, c2);
        joined = cv ? loom_ir_binary(s->arena, LOOM_EXPR_FLOORDIV, x, cv) : NULL;
      }
      if (!joined) {
        l->has_failed = true;
        return;
      }
      merge_terms(l, i, j, joined, k);
      j = -1; /* the terms moved: look again from the start */
      break;
    }
  }
}

loom_expr *rule_linear(arith_simp *s, loom_expr *e) {
  if (!arith_is_signed_int(e->dtype))
    return e;
  arith_linear l;
  arith_linear_init(&l, e->dtype);
  /* The walk simplified a product's operands, not those of a + or - chain. */
  l.is_simplified = e->kind == LOOM_EXPR_MUL;
  arith_linear_add(s, &l, e, 1);
  if (!l.has_failed)
    join_digits(s, &l);
  int cost = 0;
  loom_expr *r = arith_linear_build(s, &l, &cost);
  bool is_better = r && (l.is_changed || cost < l.cost);
  bool has_failed = l.has_failed;
  arith_linear_free(&l);
  if (is_better)
    return r;
  if (loom_arena_status(s->arena) != LOOM_OK)
    return NULL;
  /* The walk left + and - operands to this rule; when the form failed
   * (overflow), they still need simplifying. */
  return has_failed ? arith_simp_children(s, e) : e;
}
