/* Tests of loom_arith_modular_of: named cases (the alignments the CUDA
 * backend's vectors ask for), and a brute-force soundness check of random
 * expressions over small ranges: every value an expression takes must be
 * congruent to its base modulo its coefficient. */
#include "arith_gen.h"
#include "test.h"

static void check_modular(const loom_expr *e, int64_t coef, int64_t base) {
  loom_arith_modular m = loom_arith_modular_of(e);
  if (m.coef != coef || m.base != base) {
    char *s = expr_text(e);
    fprintf(stderr, "%s: %lld k + %lld, expected %lld k + %lld\n", s, (long long)m.coef,
            (long long)m.base, (long long)coef, (long long)base);
    free(s);
  }
  CHECK(m.coef == coef && m.base == base);
}

static void test_named(void) {
  loom_arena *a = loom_arena_new();
  loom_var *i = loom_ir_var(a, "i", LOOM_INT32), *j = loom_ir_var(a, "j", LOOM_INT32);
  loom_expr *ei = loom_ir_ref(a, i), *ej = loom_ir_ref(a, j);
#define K(v) loom_ir_int(a, LOOM_INT32, v)
#define B(k, x, y) loom_ir_binary(a, LOOM_EXPR_##k, x, y)
  check_modular(K(5), 0, 5);
  check_modular(ei, 1, 0);
  check_modular(B(MUL, ei, ej), 1, 0);
  check_modular(B(ADD, B(MUL, ei, K(8)), K(16)), 8, 0);
  check_modular(B(ADD, B(MUL, ei, K(8)), K(3)), 8, 3);
  check_modular(B(SUB, B(MUL, ei, K(8)), K(3)), 8, 5);
  check_modular(B(MUL, B(MUL, ei, K(4)), B(MUL, ej, K(6))), 24, 0);
  check_modular(B(FLOORMOD, B(MUL, ei, K(8)), K(32)), 8, 0);
  check_modular(B(FLOORMOD, K(-7), K(4)), 0, 1);
  check_modular(B(FLOORDIV, B(ADD, B(MUL, ei, K(64)), K(8)), K(32)), 2, 0);
  check_modular(B(FLOORDIV, B(MUL, ei, K(8)), K(32)), 1, 0);
  /* A padded tile's row and column: row * 40 + column, column a multiple of 8. */
  loom_expr *f = B(MUL, ei, K(8));
  check_modular(B(ADD, B(MUL, B(FLOORDIV, f, K(32)), K(40)), B(FLOORMOD, f, K(32))), 8, 0);
  check_modular(B(ADD, B(MUL, ei, K(1 << 22)), K(4)), 1 << 20, 4);
#undef K
#undef B
  loom_arena_free(a);
}

/* Random expressions over two variables in [-8, 8]. */
static void test_soundness(void) {
  loom_rng rng;
  loom_rng_seed(&rng, 11);
  int n_cases = 4000, n_unsound = 0, n_known = 0;
  for (int n = 0; n < n_cases; n++) {
    loom_arena *a = loom_arena_new();
    loom_var *vars[2] = {loom_ir_var(a, "x", LOOM_INT32), loom_ir_var(a, "y", LOOM_INT32)};
    gen g = {a, &rng, vars, 2};
    loom_expr *e = gen_int(&g, 1 + (int)loom_rng_below(&rng, 4));
    loom_arith_modular m = loom_arith_modular_of(e);
    n_known += m.coef != 1;
    int64_t values[2];
    env en = {vars, values, 2};
    bool sound = true;
    for (values[0] = -8; values[0] <= 8 && sound; values[0]++)
      for (values[1] = -8; values[1] <= 8 && sound; values[1]++) {
        int64_t r;
        if (eval(&en, e, &r) != EVAL_OK)
          continue;
        sound = m.coef == 0 ? r == m.base : (r - m.base) % m.coef == 0;
      }
    if (!sound && n_unsound++ < 10) {
      char *s = expr_text(e);
      fprintf(stderr, "unsound: %s as %lld k + %lld\n", s, (long long)m.coef,
              (long long)m.base);
      free(s);
    }
    loom_arena_free(a);
  }
  test_checks++;
  if (n_unsound)
    test_failures++;
  printf("modular: %d expressions, %d unsound, %d with a residue known\n", n_cases,
         n_unsound, n_known);
}

int main(void) {
  test_named();
  test_soundness();
  return test_summary("arith/modular");
}
