/* The modular analysis: each integer expression as coef * k + base for
 * some integer k, the residue it keeps whatever its variables hold (TVM's
 * ModularSet). Variables are anything; constants, sums, products, and
 * floor division and modulo by constants carry what they can. */
#include "arith/arith_impl.h"

int64_t arith_gcd64(int64_t a, int64_t b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static int64_t floormod64(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

static loom_arith_modular norm(int64_t coef, int64_t base) {
  coef = coef < 0 ? -coef : coef;
  return (loom_arith_modular){coef, coef ? floormod64(base, coef) : base};
}

/* Residues are kept small, so that products stay in range: a coefficient
 * past 2^20 becomes its gcd with 2^20, which still proves divisibility by
 * every power of two up to it (the alignments asked of it). */
static loom_arith_modular cap(loom_arith_modular m) {
  const int64_t limit = 1 << 20;
  if (m.coef == 0)
    return m.base > limit || m.base < -limit ? norm(limit, m.base) : m;
  return m.coef > limit ? norm(arith_gcd64(m.coef, limit), m.base) : m;
}

loom_arith_modular loom_arith_modular_of(const loom_expr *e) {
  const loom_arith_modular any = {1, 0};
  int64_t c;
  if (!e || e->dtype.code != LOOM_DT_INT || e->dtype.lanes != 1)
    return any;
  switch (e->kind) {
  case LOOM_EXPR_INT: return cap((loom_arith_modular){0, e->u.int_value});
  case LOOM_EXPR_CAST: return loom_arith_modular_of(e->u.unary.a);
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB: {
    loom_arith_modular x = loom_arith_modular_of(e->u.bin.a);
    loom_arith_modular y = loom_arith_modular_of(e->u.bin.b);
    int64_t b = e->kind == LOOM_EXPR_ADD ? x.base + y.base : x.base - y.base;
    return cap(norm(arith_gcd64(x.coef, y.coef), b));
  }
  case LOOM_EXPR_MUL: {
    loom_arith_modular x = loom_arith_modular_of(e->u.bin.a);
    loom_arith_modular y = loom_arith_modular_of(e->u.bin.b);
    /* (cx k + bx)(cy l + by) = cx cy kl + cx by k + cy bx l + bx by */
    int64_t g = arith_gcd64(arith_gcd64(x.coef * y.coef, x.coef * y.base), y.coef * x.base);
    return cap(norm(g, x.base * y.base));
  }
  case LOOM_EXPR_FLOORMOD:
    if (loom_ir_is_const_int(e->u.bin.b, &c) && c > 0) {
      loom_arith_modular x = loom_arith_modular_of(e->u.bin.a);
      return x.coef ? norm(arith_gcd64(x.coef, c), x.base)
                    : (loom_arith_modular){0, floormod64(x.base, c)};
    }
    return any;
  case LOOM_EXPR_FLOORDIV:
    if (loom_ir_is_const_int(e->u.bin.b, &c) && c > 0) {
      loom_arith_modular x = loom_arith_modular_of(e->u.bin.a);
      /* (c q k + b) // c = q k + b // c when c divides the coefficient */
      if (x.coef % c == 0)
        return norm(x.coef / c, (x.base - floormod64(x.base, c)) / c);
    }
    return any;
  default: return any;
  }
}

