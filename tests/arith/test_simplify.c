/* Tests of src/arith: bounds and the simplifier on named examples, a
 * differential property test against a reference evaluator, and long sums
 * that must not exhaust the stack. */
#include "arith_gen.h"
#include "test.h"

/* Override with -D to stress the simplifier with other streams. */
#ifndef PROPERTY_SEED
#define PROPERTY_SEED 20261123
#endif
#ifndef PROPERTY_COUNT
#define PROPERTY_COUNT 4000
#endif

typedef struct fixture {
  loom_arena *a;
  loom_arith_ctx *ctx;
  loom_var *i, *j, *x, *y;
  loom_expr *ei, *ej, *ex, *ey;
} fixture;

static void setup(fixture *f) {
  loom_diag d;
  loom_diag_init(&d);
  f->a = loom_arena_new();
  f->ctx = loom_arith_ctx_new();
  f->i = loom_ir_var(f->a, "i", LOOM_INT32);
  f->j = loom_ir_var(f->a, "j", LOOM_INT32);
  f->x = loom_ir_var(f->a, "x", LOOM_INT32);
  f->y = loom_ir_var(f->a, "y", LOOM_INT32);
  f->ei = loom_ir_ref(f->a, f->i);
  f->ej = loom_ir_ref(f->a, f->j);
  f->ex = loom_ir_ref(f->a, f->x);
  f->ey = loom_ir_ref(f->a, f->y);
  CHECK(loom_arith_bind(f->ctx, f->i, 0, 15, &d) == LOOM_OK);
  CHECK(loom_arith_bind(f->ctx, f->j, 0, 15, &d) == LOOM_OK);
  loom_diag_free(&d);
}

static void teardown(fixture *f) {
  loom_arith_ctx_free(f->ctx);
  loom_arena_free(f->a);
}

static loom_expr *k32(fixture *f, int64_t v) { return loom_ir_int(f->a, LOOM_INT32, v); }
static loom_expr *bin(fixture *f, loom_expr_kind k, loom_expr *x, loom_expr *y) {
  return loom_ir_binary(f->a, k, x, y);
}

/* Simplifies e and checks the printed result and that the dtype is kept. */
static void expect(fixture *f, loom_expr *e, const char *want, int line) {
  loom_expr *r = loom_arith_simplify(f->a, f->ctx, e);
  char *got = expr_text(r);
  test_checks++;
  if (!r || strcmp(got, want) || !loom_dtype_eq(r->dtype, e->dtype)) {
    test_failures++;
    char *in = expr_text(e);
    fprintf(stderr, "line %d: simplify(%s)\n  got:      %s\n  expected: %s\n",
            line, in, got, want);
    free(in);
  }
  free(got);
}
#define EXPECT(f, e, want) expect(f, e, want, __LINE__)

static void test_named(void) {
  fixture f;
  setup(&f);
  loom_expr *i16 = bin(&f, LOOM_EXPR_MUL, f.ei, k32(&f, 16));
  loom_expr *i16j = bin(&f, LOOM_EXPR_ADD, i16, f.ej);
  EXPECT(&f, bin(&f, LOOM_EXPR_ADD, bin(&f, LOOM_EXPR_MUL, f.ex, k32(&f, 2)), f.ex),
         "x * 3");
  EXPECT(&f, bin(&f, LOOM_EXPR_SUB, i16j, f.ej), "i * 16");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORDIV, i16j, k32(&f, 16)), "i");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORMOD, i16j, k32(&f, 16)), "j");
  loom_expr *x7 = bin(&f, LOOM_EXPR_MUL, f.ex, k32(&f, 7));
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORDIV, x7, k32(&f, 7)), "x");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORMOD, x7, k32(&f, 7)), "0");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORDIV, f.ex, k32(&f, 1)), "x");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORDIV,
                 bin(&f, LOOM_EXPR_FLOORDIV, f.ex, k32(&f, 4)), k32(&f, 8)),
         "x // 32");
  /* A common factor divides out, as in TVM's canonical form. */
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORDIV, bin(&f, LOOM_EXPR_MUL, f.ex, k32(&f, 8)),
                 k32(&f, 16)),
         "x // 2");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORDIV,
                 bin(&f, LOOM_EXPR_ADD, bin(&f, LOOM_EXPR_MUL, f.ex, k32(&f, 6)),
                     k32(&f, 4)),
                 k32(&f, 8)),
         "(x * 3 + 2) // 4");
  /* A remainder below the scale of the rest drops out of the quotient. */
  loom_expr *x16j = bin(&f, LOOM_EXPR_ADD, bin(&f, LOOM_EXPR_MUL, f.ex, k32(&f, 16)), f.ej);
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORDIV, x16j, k32(&f, 64)), "x // 4");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORMOD, x16j, k32(&f, 64)), "x % 4 * 16 + j");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORDIV, bin(&f, LOOM_EXPR_ADD, x16j, f.ei), k32(&f, 64)),
         "(x * 16 + j + i) // 64");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORMOD, f.ei, k32(&f, 16)), "i");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORMOD, f.ei, k32(&f, 8)), "i % 8");
  EXPECT(&f, bin(&f, LOOM_EXPR_MIN, f.ei, k32(&f, 15)), "i");
  EXPECT(&f, bin(&f, LOOM_EXPR_MAX, f.ei, k32(&f, 15)), "15");
  EXPECT(&f, bin(&f, LOOM_EXPR_MIN, f.ei, bin(&f, LOOM_EXPR_ADD, f.ei, f.ej)), "i");
  EXPECT(&f, bin(&f, LOOM_EXPR_MIN, f.ex, f.ey), "T.min(x, y)");
  EXPECT(&f, bin(&f, LOOM_EXPR_LT, f.ei, k32(&f, 16)), "T.bool(True)");
  EXPECT(&f, bin(&f, LOOM_EXPR_GE, f.ei, k32(&f, 16)), "T.bool(False)");
  EXPECT(&f, bin(&f, LOOM_EXPR_LT, f.ei, k32(&f, 15)), "i < 15");
  EXPECT(&f, bin(&f, LOOM_EXPR_LT, i16j, bin(&f, LOOM_EXPR_ADD, i16, k32(&f, 16))),
         "T.bool(True)");
  /* Constant folding: floor vs truncating division, no folding by zero or
   * into a signed overflow. */
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORDIV, k32(&f, -7), k32(&f, 2)), "-4");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORMOD, k32(&f, -7), k32(&f, 2)), "1");
  EXPECT(&f, bin(&f, LOOM_EXPR_DIV, k32(&f, -7), k32(&f, 2)), "-3");
  EXPECT(&f, bin(&f, LOOM_EXPR_MOD, k32(&f, -7), k32(&f, 2)), "-1");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORDIV, k32(&f, 7), k32(&f, 0)), "T.FloorDiv(7, 0)");
  EXPECT(&f, bin(&f, LOOM_EXPR_FLOORMOD, f.ex, k32(&f, 0)), "x % 0");
  EXPECT(&f, bin(&f, LOOM_EXPR_ADD, k32(&f, INT32_MAX), k32(&f, 1)),
         "T.Add(2147483647, 1)");
  EXPECT(&f, bin(&f, LOOM_EXPR_MUL, k32(&f, 65536), k32(&f, 65536)),
         "T.Mul(65536, 65536)");
  EXPECT(&f, bin(&f, LOOM_EXPR_ADD, k32(&f, 2), k32(&f, 3)), "5");
  /* Unsigned arithmetic wraps. */
  loom_dtype u8 = LOOM_DTYPE(LOOM_DT_UINT, 8, 1);
  loom_expr *u = bin(&f, LOOM_EXPR_ADD, loom_ir_int(f.a, u8, 250), loom_ir_int(f.a, u8, 10));
  loom_expr *ur = loom_arith_simplify(f.a, f.ctx, u);
  CHECK(ur && ur->kind == LOOM_EXPR_INT && ur->u.int_value == 4 &&
        loom_dtype_eq(ur->dtype, u8));
  /* Floats: + - * fold when finite, never to inf. */
  loom_expr *fl = bin(&f, LOOM_EXPR_MUL, loom_ir_float(f.a, LOOM_FLOAT32, 1.5),
                      loom_ir_float(f.a, LOOM_FLOAT32, 2.0));
  loom_expr *fr = loom_arith_simplify(f.a, f.ctx, fl);
  CHECK(fr && fr->kind == LOOM_EXPR_FLOAT && fr->u.float_value == 3.0);
  loom_expr *big = bin(&f, LOOM_EXPR_MUL, loom_ir_float(f.a, LOOM_FLOAT32, 1e30),
                       loom_ir_float(f.a, LOOM_FLOAT32, 1e30));
  CHECK(loom_arith_simplify(f.a, f.ctx, big) == big);
  loom_expr *fd = bin(&f, LOOM_EXPR_DIV, loom_ir_float(f.a, LOOM_FLOAT32, 1.0),
                      loom_ir_float(f.a, LOOM_FLOAT32, 0.0));
  CHECK(loom_arith_simplify(f.a, f.ctx, fd) == fd);
  /* Logic with constants. */
  loom_expr *t = loom_ir_int(f.a, LOOM_BOOL, 1), *fa = loom_ir_int(f.a, LOOM_BOOL, 0);
  loom_expr *c = bin(&f, LOOM_EXPR_LT, f.ex, f.ey);
  EXPECT(&f, bin(&f, LOOM_EXPR_AND, t, c), "x < y");
  EXPECT(&f, bin(&f, LOOM_EXPR_AND, c, fa), "T.bool(False)");
  EXPECT(&f, bin(&f, LOOM_EXPR_OR, c, t), "T.bool(True)");
  EXPECT(&f, loom_ir_not(f.a, fa), "T.bool(True)");
  /* Sharing: an expression with nothing to do comes back as itself. */
  loom_expr *same = bin(&f, LOOM_EXPR_ADD, bin(&f, LOOM_EXPR_MUL, f.ex, f.ey), f.ei);
  CHECK(loom_arith_simplify(f.a, f.ctx, same) == same);
  /* Indices of a load are simplified; the buffer is kept. */
  loom_expr *shape[1] = {k32(&f, 256)};
  loom_buffer *buf = loom_ir_buffer(f.a, "A", LOOM_FLOAT32, shape, 1);
  loom_expr *idx[1] = {bin(&f, LOOM_EXPR_SUB, i16j, f.ej)};
  loom_expr *ld = loom_ir_load(f.a, buf, idx, 1);
  loom_expr *lr = loom_arith_simplify(f.a, f.ctx, ld);
  CHECK(lr && lr != ld && lr->kind == LOOM_EXPR_LOAD && lr->u.load.buffer == buf &&
        loom_dtype_eq(lr->dtype, ld->dtype));
  if (lr && lr->kind == LOOM_EXPR_LOAD) {
    char *text = expr_text(lr->u.load.indices[0]);
    CHECK_STREQ(text, "i * 16");
    free(text);
  }
  /* Rule counters: the named rules fired, and are listed by name. */
  int n_fired = 0;
  for (int r = 0; r < loom_arith_rule_count(); r++)
    n_fired += loom_arith_rule_fires(f.ctx, r) > 0;
  CHECK(n_fired > 10);
  CHECK(loom_arith_rule_name(0) != NULL);
  CHECK(loom_arith_rule_name(loom_arith_rule_count()) == NULL);
  teardown(&f);
}

static void test_bounds(void) {
  fixture f;
  setup(&f);
  loom_arith_interval b;
  b = loom_arith_bound(f.ctx, bin(&f, LOOM_EXPR_ADD, bin(&f, LOOM_EXPR_MUL, f.ei, k32(&f, 16)), f.ej));
  CHECK(b.is_bounded && b.min == 0 && b.max == 255);
  b = loom_arith_bound(f.ctx, bin(&f, LOOM_EXPR_FLOORMOD, f.ex, k32(&f, 8)));
  CHECK(b.is_bounded && b.min == 0 && b.max == 7);
  b = loom_arith_bound(f.ctx, bin(&f, LOOM_EXPR_MOD, bin(&f, LOOM_EXPR_SUB, f.ei, k32(&f, 20)), k32(&f, 8)));
  CHECK(b.is_bounded && b.min == -7 && b.max == 0);
  b = loom_arith_bound(f.ctx, bin(&f, LOOM_EXPR_FLOORDIV, bin(&f, LOOM_EXPR_SUB, f.ei, k32(&f, 8)), k32(&f, 4)));
  CHECK(b.is_bounded && b.min == -2 && b.max == 1);
  b = loom_arith_bound(f.ctx, bin(&f, LOOM_EXPR_MIN, f.ei, bin(&f, LOOM_EXPR_SUB, f.ej, k32(&f, 3))));
  CHECK(b.is_bounded && b.min == -3 && b.max == 12);
  loom_var *w = loom_ir_var(f.a, "w", LOOM_INT64);
  loom_expr *ew = loom_ir_ref(f.a, w);
  b = loom_arith_bound(f.ctx, bin(&f, LOOM_EXPR_ADD, ew, loom_ir_int(f.a, LOOM_INT64, 1)));
  CHECK(!b.is_bounded); /* int64 overflow: unbounded, not wrong */
  b = loom_arith_bound(f.ctx, loom_ir_cast(f.a, LOOM_DTYPE(LOOM_DT_INT, 8, 1), bin(&f, LOOM_EXPR_MUL, f.ei, k32(&f, 100))));
  CHECK(b.is_bounded && b.min == -128 && b.max == 127);
  b = loom_arith_bound(f.ctx, loom_ir_float(f.a, LOOM_FLOAT32, 1.0));
  CHECK(!b.is_bounded);
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_arith_bind(f.ctx, f.x, 3, 2, &d) == LOOM_ERROR && d.has_error);
  loom_diag_free(&d);
  teardown(&f);
}

/* Simplified and original agree at random points of random ranges. */
static void test_property(void) {
  loom_rng rng;
  loom_rng_seed(&rng, PROPERTY_SEED);
  int n_exprs = PROPERTY_COUNT, n_mismatch = 0, n_points = 0, n_changed = 0;
  for (int n = 0; n < n_exprs; n++) {
    loom_arena *a = loom_arena_new();
    loom_arith_ctx *ctx = loom_arith_ctx_new();
    loom_var *vars[3];
    int64_t lo[3], hi[3], values[3];
    for (int v = 0; v < 3; v++) {
      vars[v] = loom_ir_var(a, v == 0 ? "x" : v == 1 ? "y" : "z", LOOM_INT32);
      lo[v] = rand_in(&rng, -4, 4);
      hi[v] = lo[v] + rand_in(&rng, 0, 7);
      loom_arith_bind(ctx, vars[v], lo[v], hi[v], NULL);
    }
    gen g = {a, &rng, vars, 3};
    loom_expr *e = loom_rng_below(&rng, 4) == 0 ? gen_cond(&g, 5) : gen_int(&g, 5);
    loom_expr *s = loom_arith_simplify(a, ctx, e);
    CHECK(s && loom_dtype_eq(s->dtype, e->dtype));
    n_changed += s != e;
    env en = {vars, values, 3};
    for (int p = 0; s && p < 24; p++) {
      for (int v = 0; v < 3; v++)
        values[v] = rand_in(&rng, lo[v], hi[v]);
      int64_t want, got;
      if (eval(&en, e, &want) != EVAL_OK)
        continue;
      n_points++;
      if (eval(&en, s, &got) == EVAL_OK && got == want)
        continue;
      if (n_mismatch++ < 10) {
        char *te = expr_text(e), *ts = expr_text(s);
        fprintf(stderr, "mismatch at x=%lld y=%lld z=%lld (x in [%lld,%lld], y in "
                "[%lld,%lld], z in [%lld,%lld]):\n  %s = %lld\n  %s = %lld\n",
                (long long)values[0], (long long)values[1], (long long)values[2],
                (long long)lo[0], (long long)hi[0], (long long)lo[1],
                (long long)hi[1], (long long)lo[2], (long long)hi[2], te,
                (long long)want, ts,
                eval(&en, s, &got) == EVAL_OK ? (long long)got : -999999LL);
        free(te);
        free(ts);
      }
      break;
    }
    loom_arith_ctx_free(ctx);
    loom_arena_free(a);
  }
  test_checks++;
  if (n_mismatch)
    test_failures++;
  printf("property: %d expressions, %d changed, %d points, %d mismatches\n",
         n_exprs, n_changed, n_points, n_mismatch);
}

static void test_long_sums(void) {
  fixture f;
  setup(&f);
  int n = 10000;
  loom_expr *sum = f.ei;
  for (int k = 1; k < n; k++)
    sum = bin(&f, LOOM_EXPR_ADD, sum, k % 2 ? f.ej : f.ei);
  EXPECT(&f, sum, "i * 5000 + j * 5000");
  loom_arith_interval b = loom_arith_bound(f.ctx, sum);
  CHECK(b.is_bounded && b.min == 0 && b.max == 15 * n);
  CHECK(loom_arith_can_prove(f.ctx, bin(&f, LOOM_EXPR_LE, sum, k32(&f, 15 * n))) ==
        LOOM_ARITH_TRUE);
  /* Distinct variables: nothing merges, the sum comes back as itself. */
  loom_expr *distinct = NULL;
  for (int k = 0; k < n; k++) {
    loom_var *v = loom_ir_var(f.a, "v", LOOM_INT32);
    loom_arith_bind(f.ctx, v, 0, 1, NULL);
    loom_expr *r = loom_ir_ref(f.a, v);
    distinct = distinct ? bin(&f, LOOM_EXPR_ADD, distinct, r) : r;
  }
  CHECK(loom_arith_simplify(f.a, f.ctx, distinct) == distinct);
  b = loom_arith_bound(f.ctx, distinct);
  CHECK(b.is_bounded && b.min == 0 && b.max == n);
  /* Right-nested and deep non-sum nesting: no crash, a sound answer. */
  loom_expr *right = f.ei, *deep = f.ei;
  for (int k = 0; k < n; k++) {
    right = bin(&f, LOOM_EXPR_ADD, f.ej, right);
    deep = bin(&f, LOOM_EXPR_MIN, deep, k32(&f, k + 20));
  }
  CHECK(loom_arith_simplify(f.a, f.ctx, right) != NULL);
  CHECK(loom_arith_simplify(f.a, f.ctx, deep) != NULL);
  b = loom_arith_bound(f.ctx, deep);
  CHECK(!b.is_bounded || (b.min <= 0 && b.max >= 15));
  teardown(&f);
}

/* Allocation failure in the output arena: the n-th allocation fails, for
 * every n until simplification succeeds; each run must either give NULL or
 * the right answer, never a half-built tree, and never leak. */
static void test_faultsim(void) {
  fixture f;
  setup(&f);
  loom_expr *i16j = bin(&f, LOOM_EXPR_ADD, bin(&f, LOOM_EXPR_MUL, f.ei, k32(&f, 16)), f.ej);
  loom_expr *e = bin(&f, LOOM_EXPR_ADD,
                     bin(&f, LOOM_EXPR_FLOORDIV, i16j, k32(&f, 16)),
                     bin(&f, LOOM_EXPR_MUL, bin(&f, LOOM_EXPR_FLOORMOD, i16j, k32(&f, 16)),
                         k32(&f, 2)));
  const char *want = "i + j * 2";
  int n_failed_runs = 0;
  for (long n = 1; n < 10000; n++) {
    loom_faultsim fs = {n, 0};
    loom_arena *out = loom_arena_new();
    loom_arena_set_faultsim(out, &fs);
    loom_expr *r = loom_arith_simplify(out, f.ctx, e);
    bool has_failed = loom_arena_status(out) != LOOM_OK;
    char *got = r ? expr_text(r) : NULL;
    CHECK(!r || !strcmp(got, want));
    CHECK(has_failed == (r == NULL));
    free(got);
    loom_arena_free(out);
    if (!has_failed)
      break;
    n_failed_runs++;
  }
  CHECK(n_failed_runs > 0);
  teardown(&f);
}

/* The digits of a fused loop joined again (TVM's iterator maps do it):
 * named cases, then every small c2 | c1 and coefficient, checked against
 * evaluation at x in [-60, 60]. */
static void test_join_digits(void) {
  fixture f;
  setup(&f);
  loom_expr *hi = bin(&f, LOOM_EXPR_MUL, bin(&f, LOOM_EXPR_FLOORDIV, f.ex, k32(&f, 12)),
                      k32(&f, 8));
  loom_expr *lo = bin(&f, LOOM_EXPR_MUL,
                      bin(&f, LOOM_EXPR_FLOORDIV,
                          bin(&f, LOOM_EXPR_FLOORMOD, f.ex, k32(&f, 12)), k32(&f, 3)),
                      k32(&f, 2));
  EXPECT(&f, bin(&f, LOOM_EXPR_ADD, hi, lo), "x // 3 * 2");
  EXPECT(&f, bin(&f, LOOM_EXPR_ADD,
                 bin(&f, LOOM_EXPR_MUL, bin(&f, LOOM_EXPR_FLOORDIV, f.ex, k32(&f, 16)),
                     k32(&f, 16)),
                 bin(&f, LOOM_EXPR_FLOORMOD, f.ex, k32(&f, 16))),
         "x");
  loom_expr *mid = bin(&f, LOOM_EXPR_MUL,
                       bin(&f, LOOM_EXPR_FLOORDIV,
                           bin(&f, LOOM_EXPR_FLOORMOD, f.ex, k32(&f, 56)), k32(&f, 7)),
                       k32(&f, 7));
  EXPECT(&f, bin(&f, LOOM_EXPR_ADD, mid, bin(&f, LOOM_EXPR_FLOORMOD, f.ex, k32(&f, 7))),
         "x % 56");
  /* A coefficient that does not line up stays two terms. */
  loom_expr *off = bin(&f, LOOM_EXPR_ADD,
                       bin(&f, LOOM_EXPR_MUL, bin(&f, LOOM_EXPR_FLOORDIV, f.ex, k32(&f, 12)),
                           k32(&f, 7)), lo);
  char *t = expr_text(loom_arith_simplify(f.a, f.ctx, off));
  CHECK(t && strstr(t, "x // 12"));
  free(t);
  int n_wrong = 0;
  for (int c2 = 1; c2 <= 6; c2++)
    for (int m = 1; m <= 4; m++)
      for (int k = -3; k <= 3; k++) {
        int c1 = c2 * m;
        loom_expr *a = bin(&f, LOOM_EXPR_MUL, bin(&f, LOOM_EXPR_FLOORDIV, f.ex, k32(&f, c1)),
                           k32(&f, m * k));
        loom_expr *b = bin(&f, LOOM_EXPR_MUL,
                           bin(&f, LOOM_EXPR_FLOORDIV,
                               bin(&f, LOOM_EXPR_FLOORMOD, f.ex, k32(&f, c1)), k32(&f, c2)),
                           k32(&f, k));
        /* The low digits: (x % c1 // c2) * c2 * k + (x % c2) * k. */
        loom_expr *c = bin(&f, LOOM_EXPR_MUL,
                           bin(&f, LOOM_EXPR_FLOORDIV,
                               bin(&f, LOOM_EXPR_FLOORMOD, f.ex, k32(&f, c1)), k32(&f, c2)),
                           k32(&f, c2 * k));
        loom_expr *d = bin(&f, LOOM_EXPR_MUL, bin(&f, LOOM_EXPR_FLOORMOD, f.ex, k32(&f, c2)),
                           k32(&f, k));
        loom_expr *es[2] = {bin(&f, LOOM_EXPR_ADD, a, b), bin(&f, LOOM_EXPR_ADD, c, d)};
        for (int q = 0; q < 2; q++) {
          loom_expr *r = loom_arith_simplify(f.a, f.ctx, es[q]);
          for (int64_t x = -60; x <= 60; x++) {
            loom_var *vars[1] = {f.x};
            int64_t vals[1] = {x}, want, got;
            env en = {vars, vals, 1};
            if (eval(&en, es[q], &want) == EVAL_OK &&
                (eval(&en, r, &got) != EVAL_OK || got != want))
              n_wrong++;
          }
        }
      }
  CHECK(n_wrong == 0);
  teardown(&f);
}

int main(void) {
  test_named();
  test_join_digits();
  test_faultsim();
  test_bounds();
  test_property();
  test_long_sums();
  return test_summary("arith/simplify");
}
