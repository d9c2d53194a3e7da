/* Shared by the arith tests: random int32 expressions over a few variables
 * and a reference evaluator with TVM semantics (floor // and %, truncating
 * T.truncdiv/T.truncmod, both sides of T.Select evaluated). */
#ifndef ARITH_GEN_H
#define ARITH_GEN_H

#include "loom/arith.h"
#include "loom/script.h"
#include <stdlib.h>

typedef enum { EVAL_OK, EVAL_UNDEFINED } eval_status;

typedef struct env {
  loom_var **vars;
  int64_t *values;
  int n;
} env;

/* Division by zero and int32 overflow are undefined (TVM assumes neither);
 * the caller skips points where the original expression hits them. */
static eval_status eval(const env *en, const loom_expr *e, int64_t *out) {
  int64_t x = 0, y = 0, c = 0;
  switch (e->kind) {
  case LOOM_EXPR_INT: *out = e->u.int_value; return EVAL_OK;
  case LOOM_EXPR_VAR:
    for (int i = 0; i < en->n; i++)
      if (en->vars[i] == e->u.var) {
        *out = en->values[i];
        return EVAL_OK;
      }
    return EVAL_UNDEFINED;
  case LOOM_EXPR_NOT:
    if (eval(en, e->u.unary.a, &x))
      return EVAL_UNDEFINED;
    *out = !x;
    return EVAL_OK;
  case LOOM_EXPR_CAST:
    /* Between integer types an index keeps its value (checked below). */
    if (!loom_dtype_is_int(e->dtype) || !loom_dtype_is_int(e->u.unary.a->dtype) ||
        eval(en, e->u.unary.a, &x))
      return EVAL_UNDEFINED;
    *out = x;
    return EVAL_OK;
  case LOOM_EXPR_SELECT:
    if (eval(en, e->u.select.cond, &c) || eval(en, e->u.select.t, &x) ||
        eval(en, e->u.select.f, &y))
      return EVAL_UNDEFINED;
    *out = c ? x : y;
    return EVAL_OK;
  default: break;
  }
  if (e->kind < LOOM_EXPR_ADD || e->kind > LOOM_EXPR_OR)
    return EVAL_UNDEFINED;
  if (eval(en, e->u.bin.a, &x) || eval(en, e->u.bin.b, &y))
    return EVAL_UNDEFINED;
  int64_t r;
  switch (e->kind) {
  case LOOM_EXPR_ADD: r = x + y; break;
  case LOOM_EXPR_SUB: r = x - y; break;
  case LOOM_EXPR_MUL: r = x * y; break; /* |x|,|y| < 2^31: no int64 overflow */
  case LOOM_EXPR_DIV:
  case LOOM_EXPR_MOD:
  case LOOM_EXPR_FLOORDIV:
  case LOOM_EXPR_FLOORMOD: {
    if (y == 0)
      return EVAL_UNDEFINED;
    int64_t q = x / y, m = x % y;
    if ((e->kind == LOOM_EXPR_FLOORDIV || e->kind == LOOM_EXPR_FLOORMOD) &&
        m != 0 && (m < 0) != (y < 0)) {
      q--;
      m += y;
    }
    r = e->kind == LOOM_EXPR_DIV || e->kind == LOOM_EXPR_FLOORDIV ? q : m;
    break;
  }
  case LOOM_EXPR_MIN: r = x < y ? x : y; break;
  case LOOM_EXPR_MAX: r = x > y ? x : y; break;
  case LOOM_EXPR_EQ: r = x == y; break;
  case LOOM_EXPR_NE: r = x != y; break;
  case LOOM_EXPR_LT: r = x < y; break;
  case LOOM_EXPR_LE: r = x <= y; break;
  case LOOM_EXPR_GT: r = x > y; break;
  case LOOM_EXPR_GE: r = x >= y; break;
  case LOOM_EXPR_AND: r = x && y; break;
  default: r = x || y; break;
  }
  if (r < INT32_MIN || r > INT32_MAX)
    return EVAL_UNDEFINED;
  *out = r;
  return EVAL_OK;
}

typedef struct gen {
  loom_arena *a;
  loom_rng *rng;
  loom_var **vars;
  int n_vars;
} gen;

static int64_t rand_in(loom_rng *r, int64_t lo, int64_t hi) {
  return lo + (int64_t)loom_rng_below(r, (uint64_t)(hi - lo + 1));
}

static loom_expr *gen_int(gen *g, int depth);

static loom_expr *gen_cond(gen *g, int depth) {
  static const loom_expr_kind cmps[] = {LOOM_EXPR_EQ, LOOM_EXPR_NE, LOOM_EXPR_LT,
                                        LOOM_EXPR_LE, LOOM_EXPR_GT, LOOM_EXPR_GE};
  int pick = (int)loom_rng_below(g->rng, 10);
  if (depth > 1 && pick == 0)
    return loom_ir_binary(g->a, LOOM_EXPR_AND, gen_cond(g, depth - 1),
                          gen_cond(g, depth - 1));
  if (depth > 1 && pick == 1)
    return loom_ir_binary(g->a, LOOM_EXPR_OR, gen_cond(g, depth - 1),
                          gen_cond(g, depth - 1));
  if (depth > 1 && pick == 2)
    return loom_ir_not(g->a, gen_cond(g, depth - 1));
  return loom_ir_binary(g->a, cmps[loom_rng_below(g->rng, 6)],
                        gen_int(g, depth - 1), gen_int(g, depth - 1));
}

static loom_expr *gen_int(gen *g, int depth) {
  static const loom_expr_kind ops[] = {
      LOOM_EXPR_ADD, LOOM_EXPR_SUB, LOOM_EXPR_MUL, LOOM_EXPR_FLOORDIV,
      LOOM_EXPR_FLOORMOD, LOOM_EXPR_DIV, LOOM_EXPR_MOD, LOOM_EXPR_MIN,
      LOOM_EXPR_MAX, LOOM_EXPR_ADD, LOOM_EXPR_SUB};
  int n_ops = (int)(sizeof ops / sizeof ops[0]);
  if (depth <= 0 || loom_rng_below(g->rng, 4) == 0) {
    if (loom_rng_below(g->rng, 3) == 0)
      return loom_ir_int(g->a, LOOM_INT32, rand_in(g->rng, -9, 9));
    return loom_ir_ref(g->a, g->vars[loom_rng_below(g->rng, (uint64_t)g->n_vars)]);
  }
  int pick = (int)loom_rng_below(g->rng, (uint64_t)n_ops + 1);
  if (pick == n_ops)
    return loom_ir_select(g->a, gen_cond(g, depth - 1), gen_int(g, depth - 1),
                          gen_int(g, depth - 1));
  loom_expr_kind k = ops[pick];
  loom_expr *x = gen_int(g, depth - 1), *y;
  /* Constant right operands half the time, so the linear and floor rules
   * (which want constant factors and divisors) get exercised. */
  if (loom_rng_below(g->rng, 2))
    y = loom_ir_int(g->a, LOOM_INT32,
                    k >= LOOM_EXPR_DIV && k <= LOOM_EXPR_FLOORMOD
                        ? rand_in(g->rng, 1, 16)
                        : rand_in(g->rng, -9, 9));
  else
    y = gen_int(g, depth - 1);
  return loom_ir_binary(g->a, k, x, y);
}

/* The expression as text, for failure messages; the caller frees it. */
static inline char *expr_text(const loom_expr *e) {
  loom_buf b;
  loom_buf_init(&b);
  if (e)
    loom_script_print_expr(e, &b);
  else
    loom_buf_puts(&b, "(null)");
  return loom_buf_take(&b);
}

#endif
