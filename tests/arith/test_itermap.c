/* Tests of affine iterator maps: named cases (fuse, split, the reasons for
 * refusing), random reshapes that must be detected as bijective, random
 * bindings whose answers are checked by enumerating every loop point, and
 * subspace division recombined exactly at every point. */
#include "arith_gen.h"
#include "test.h"

#define K(v) loom_ir_int(a, LOOM_INT32, v)
#define B(k, x, y) loom_ir_binary(a, LOOM_EXPR_##k, x, y)
#define MAX_LOOPS 3

typedef struct nest {
  loom_var *vars[MAX_LOOPS + 1]; /* the loops, then an invariant "n" = 3 */
  int64_t mins[MAX_LOOPS], extents[MAX_LOOPS];
  loom_arith_relax iters[MAX_LOOPS];
  int n;
} nest;

static void nest_init(loom_arena *a, nest *ns, int n, const int64_t *mins,
                      const int64_t *extents) {
  static const char *names[MAX_LOOPS] = {"i", "j", "k"};
  ns->n = n;
  for (int i = 0; i < n; i++) {
    ns->vars[i] = loom_ir_var(a, names[i], LOOM_INT32);
    ns->mins[i] = mins ? mins[i] : 0;
    ns->extents[i] = extents[i];
    ns->iters[i] = (loom_arith_relax){ns->vars[i], {K(ns->mins[i]), K(extents[i])}};
  }
  ns->vars[n] = loom_ir_var(a, "n", LOOM_INT32);
}

/* Steps values to the next point of the nest; false after the last. */
static bool next_point(const nest *ns, int64_t *values) {
  for (int i = ns->n - 1; i >= 0; i--) {
    if (++values[i] < ns->mins[i] + ns->extents[i])
      return true;
    values[i] = ns->mins[i];
  }
  return false;
}

static void first_point(const nest *ns, int64_t *values) {
  for (int i = 0; i < ns->n; i++)
    values[i] = ns->mins[i];
}

static int64_t domain_size(const nest *ns) {
  int64_t p = 1;
  for (int i = 0; i < ns->n; i++)
    p *= ns->extents[i];
  return p;
}

static loom_status detect(loom_arena *a, nest *ns, loom_expr **b, int n,
                          loom_iter_map_level level, loom_iter_map *m,
                          char **why) {
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_arith_iter_map_detect(a, b, n, ns->iters, ns->n, NULL, level, m, &d);
  *why = d.msg ? loom_arena_strdup(a, d.msg) : NULL;
  loom_diag_free(&d);
  return st;
}

static void test_named(void) {
  loom_arena *a = loom_arena_new();
  nest ns;
  int64_t ext[3] = {4, 8, 2};
  nest_init(a, &ns, 3, NULL, ext);
  loom_expr *i = loom_ir_ref(a, ns.vars[0]), *j = loom_ir_ref(a, ns.vars[1]);
  loom_expr *k = loom_ir_ref(a, ns.vars[2]);
  loom_expr *f = B(ADD, B(MUL, i, K(8)), j);
  loom_iter_map m;
  char *why;

  loom_expr *b1[2] = {f, k};
  CHECK(detect(a, &ns, b1, 2, LOOM_ITER_MAP_BIJECTIVE, &m, &why) == LOOM_OK);
  CHECK(m.n_sums == 2 && m.sums[0].n_splits == 1);
  CHECK(m.sums[0].splits[0].source->extent == 32);
  CHECK(m.sums[0].splits[0].source->var == NULL);
  char *t = expr_text(loom_arith_iter_sum_expr(a, &m.sums[0], LOOM_INT32));
  CHECK_STREQ(t, "j + i * 8");
  free(t);

  /* The split of a fusion: (i*8 + j) // 4 and % 4, with k. */
  loom_expr *b2[3] = {B(FLOORDIV, f, K(4)), B(FLOORMOD, f, K(4)), k};
  CHECK(detect(a, &ns, b2, 3, LOOM_ITER_MAP_BIJECTIVE, &m, &why) == LOOM_OK);
  CHECK(m.sums[0].splits[0].lower_factor == 4 && m.sums[0].splits[0].extent == 8);
  CHECK(m.sums[1].splits[0].lower_factor == 1 && m.sums[1].splits[0].extent == 4);
  t = expr_text(loom_arith_iter_sum_expr(a, &m.sums[0], LOOM_INT32));
  CHECK_STREQ(t, "(j + i * 8) // 4");
  free(t);

  /* Refusals say why. */
  loom_expr *b3[3] = {i, i, B(ADD, j, B(MUL, k, K(8)))};
  CHECK(detect(a, &ns, b3, 3, LOOM_ITER_MAP_SURJECTIVE, &m, &why) == LOOM_ERROR);
  CHECK_CONTAINS(why, "loop 'i' is used twice");
  loom_expr *b4[1] = {i};
  CHECK(detect(a, &ns, b4, 1, LOOM_ITER_MAP_BIJECTIVE, &m, &why) == LOOM_ERROR);
  CHECK_CONTAINS(why, "is not used by any binding");
  CHECK(detect(a, &ns, b4, 1, LOOM_ITER_MAP_SURJECTIVE, &m, &why) == LOOM_OK);
  loom_expr *b5[1] = {B(MUL, i, j)};
  CHECK(detect(a, &ns, b5, 1, LOOM_ITER_MAP_NO_CHECK, &m, &why) == LOOM_ERROR);
  CHECK_CONTAINS(why, "product of two iterators");
  loom_expr *b6[1] = {B(FLOORDIV, f, K(3))};
  CHECK(detect(a, &ns, b6, 1, LOOM_ITER_MAP_SURJECTIVE, &m, &why) == LOOM_ERROR);
  CHECK_CONTAINS(why, "binding 0 (");
  CHECK_CONTAINS(why, "does not divide");
  /* Overlapping terms fuse below a bijection, as TVM fuses them: i * 4 + j
   * with j over [0, 8) ranges over [0, i_extent * 4 + 4). */
  loom_expr *b7[1] = {B(ADD, B(MUL, i, K(4)), j)};
  CHECK(detect(a, &ns, b7, 1, LOOM_ITER_MAP_BIJECTIVE, &m, &why) == LOOM_ERROR);
  CHECK_CONTAINS(why, "cannot be fused");
  CHECK(detect(a, &ns, b7, 1, LOOM_ITER_MAP_SURJECTIVE, &m, &why) == LOOM_OK);
  CHECK(m.sums[0].n_splits == 1 && m.sums[0].splits[0].source->extent == 4 * 4 + 4);
  loom_expr *b8[1] = {B(MUL, i, K(2))};
  CHECK(detect(a, &ns, b8, 1, LOOM_ITER_MAP_SURJECTIVE, &m, &why) == LOOM_ERROR);
  CHECK_CONTAINS(why, "steps by 2");
  loom_var *n = loom_ir_var(a, "n", LOOM_INT32);
  /* A variable that is not a loop is an invariant, kept in the base. */
  loom_expr *b9[1] = {B(ADD, i, B(MUL, loom_ir_ref(a, n), K(4)))};
  CHECK(detect(a, &ns, b9, 1, LOOM_ITER_MAP_SURJECTIVE, &m, &why) == LOOM_OK);
  t = expr_text(m.sums[0].symbolic_base);
  CHECK_STREQ(t, "n * 4");
  free(t);
  t = expr_text(loom_arith_iter_sum_expr(a, &m.sums[0], LOOM_INT32));
  CHECK_STREQ(t, "n * 4 + i");
  free(t);
  loom_expr *b9b[1] = {B(MUL, i, loom_ir_ref(a, n))};
  CHECK(detect(a, &ns, b9b, 1, LOOM_ITER_MAP_NO_CHECK, &m, &why) == LOOM_ERROR);
  CHECK_CONTAINS(why, "scaled by a term that is not a constant");
  loom_expr *b9c[1] = {B(FLOORDIV, B(ADD, i, loom_ir_ref(a, n)), K(2))};
  CHECK(detect(a, &ns, b9c, 1, LOOM_ITER_MAP_NO_CHECK, &m, &why) == LOOM_ERROR);
  CHECK_CONTAINS(why, "plus a term that is not a loop");
  /* A fusion through truncating division of non-negative values. */
  loom_expr *b10[3] = {B(DIV, f, K(8)), B(MOD, f, K(8)), k};
  CHECK(detect(a, &ns, b10, 3, LOOM_ITER_MAP_BIJECTIVE, &m, &why) == LOOM_OK);

  /* A loop from 1: the binding keeps the offset in its base. */
  nest one;
  int64_t mins1[1] = {1}, ext1[1] = {99};
  nest_init(a, &one, 1, mins1, ext1);
  loom_expr *b11[1] = {loom_ir_ref(a, one.vars[0])};
  CHECK(detect(a, &one, b11, 1, LOOM_ITER_MAP_BIJECTIVE, &m, &why) == LOOM_OK);
  CHECK(m.sums[0].base == 1);
  /* A symbolic extent is refused with the loop's name. */
  loom_var *nl = loom_ir_var(a, "nl", LOOM_INT32);
  loom_arith_relax sym[2] = {{nl, {K(0), loom_ir_ref(a, n)}}, one.iters[0]};
  loom_diag d;
  loom_diag_init(&d);
  loom_expr *b12[1] = {loom_ir_ref(a, nl)};
  CHECK(loom_arith_iter_map_detect(a, b12, 1, sym, 2, NULL, LOOM_ITER_MAP_NO_CHECK, &m,
                                   &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "loop 'nl' has a range that is not constant");
  loom_diag_free(&d);
  /* ... which is no error while no binding uses it. */
  loom_diag_init(&d);
  CHECK(loom_arith_iter_map_detect(a, b11, 1, sym, 2, NULL, LOOM_ITER_MAP_BIJECTIVE, &m,
                                   &d) == LOOM_OK);
  loom_diag_free(&d);

  /* Subspace division: (i*8 + j) with j inner is i * 8 + j. */
  loom_iter_division div[3];
  const loom_var *inner_j[1] = {ns.vars[1]};
  loom_diag_init(&d);
  CHECK(loom_arith_iter_map_subspace_divide(a, b1, 2, ns.iters, 3, NULL, inner_j, 1, div, NULL, NULL,
                                            &d) ==
        LOOM_OK);
  CHECK(div[0].inner_extent == 8 && div[0].outer_extent == 4);
  t = expr_text(div[0].outer);
  CHECK_STREQ(t, "i");
  free(t);
  t = expr_text(div[0].inner);
  CHECK_STREQ(t, "j");
  free(t);
  CHECK(div[1].inner_extent == 1 && div[1].outer_extent == 2);
  /* An outer block's iterator in a binding: vo * 8 + j with j inner. */
  loom_expr *bo[1] = {B(ADD, B(MUL, loom_ir_ref(a, n), K(8)), j)};
  CHECK(loom_arith_iter_map_subspace_divide(a, bo, 1, ns.iters, 3, NULL, inner_j, 1, div,
                                            NULL, NULL, &d) == LOOM_OK);
  t = expr_text(div[0].outer);
  CHECK_STREQ(t, "n");
  free(t);
  t = expr_text(div[0].inner);
  CHECK_STREQ(t, "j");
  free(t);
  loom_expr *bo2[1] = {B(ADD, B(MUL, loom_ir_ref(a, n), K(3)), j)};
  CHECK(loom_arith_iter_map_subspace_divide(a, bo2, 1, ns.iters, 3, NULL, inner_j, 1, div,
                                            NULL, NULL, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "not a multiple of the inner extent 8");
  loom_diag_free(&d);
  loom_diag_init(&d);
  /* i inner but j outer below it cannot be divided. */
  const loom_var *inner_i[1] = {ns.vars[0]};
  CHECK(loom_arith_iter_map_subspace_divide(a, b1, 2, ns.iters, 3, NULL, inner_i, 1, div, NULL, NULL, &d) ==
        LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "inner loop 'i' sits above an outer loop");
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* Checks every sum against its binding at every point, and the level
 * against the image of the map. Returns the number of wrong answers. */
static int check_map_where(loom_arena *a, nest *ns, loom_expr **b, int n,
                           const loom_expr *pred, loom_iter_map_level level,
                           const loom_iter_map *m);

static int check_map(loom_arena *a, nest *ns, loom_expr **b, int n,
                     loom_iter_map_level level, const loom_iter_map *m) {
  return check_map_where(a, ns, b, n, NULL, level, m);
}

/* As check_map, on the points where pred holds. */
static int check_map_where(loom_arena *a, nest *ns, loom_expr **b, int n,
                           const loom_expr *pred, loom_iter_map_level level,
                           const loom_iter_map *m) {
  loom_expr *sum_exprs[8];
  for (int k = 0; k < n; k++)
    sum_exprs[k] = loom_arith_iter_sum_expr(a, &m->sums[k], LOOM_INT32);
  int64_t values[MAX_LOOPS + 1], lo[8], hi[8];
  env en = {ns->vars, values, ns->n + 1};
  values[ns->n] = 3;
  int64_t size = domain_size(ns), n_wrong = 0;
  int64_t *images = calloc((size_t)size, sizeof *images);
  int n_images = 0;
  for (int k = 0; k < n; k++) {
    lo[k] = INT64_MAX;
    hi[k] = INT64_MIN;
  }
  first_point(ns, values);
  int64_t n_points = 0;
  do {
    int64_t holds = 1;
    if (pred && (eval(&en, pred, &holds) != EVAL_OK || !holds))
      continue;
    n_points++;
    int64_t key = 0;
    for (int k = 0; k < n; k++) {
      int64_t x, y;
      if (eval(&en, b[k], &x) != EVAL_OK || eval(&en, sum_exprs[k], &y) != EVAL_OK ||
          x != y) {
        n_wrong++;
        break;
      }
      lo[k] = x < lo[k] ? x : lo[k];
      hi[k] = x > hi[k] ? x : hi[k];
      key = key * 1000 + x + 500;
    }
    images[n_images++] = key;
  } while (next_point(ns, values));
  /* Distinct images: a bijection has one per point; a surjection fills the
   * box of its bindings' ranges. */
  int64_t distinct = 0;
  for (int p = 0; p < n_images; p++) {
    bool is_new = true;
    for (int q = 0; q < p && is_new; q++)
      is_new = images[q] != images[p];
    distinct += is_new;
  }
  int64_t box = 1;
  for (int k = 0; k < n; k++)
    box *= hi[k] - lo[k] + 1;
  size = n_points;
  if (level == LOOM_ITER_MAP_BIJECTIVE && (distinct != size || box != size))
    n_wrong++;
  if (level == LOOM_ITER_MAP_SURJECTIVE && distinct != box)
    n_wrong++;
  free(images);
  return (int)n_wrong;
}

/* A random loop nest, fused in a random order and split again into a
 * random shape: always a bijection. */
static int make_reshape(loom_arena *a, loom_rng *rng, nest *ns, loom_expr **b) {
  static const int64_t choices[] = {1, 2, 3, 4, 6, 8};
  int64_t ext[MAX_LOOPS], mins[MAX_LOOPS];
  int n = 1 + (int)loom_rng_below(rng, MAX_LOOPS);
  for (int i = 0; i < n; i++) {
    ext[i] = choices[loom_rng_below(rng, 6)];
    mins[i] = loom_rng_below(rng, 4) == 0 ? 1 : 0;
  }
  nest_init(a, ns, n, mins, ext);
  int order[MAX_LOOPS] = {0, 1, 2};
  for (int i = n - 1; i > 0; i--) {
    int j = (int)loom_rng_below(rng, (uint64_t)i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  loom_expr *f = NULL;
  int64_t size = 1;
  for (int p = 0; p < n; p++) {
    int i = order[p];
    loom_expr *v = loom_ir_ref(a, ns->vars[i]);
    if (mins[i])
      v = B(SUB, v, K(mins[i]));
    f = f ? B(ADD, B(MUL, f, K(ext[i])), v) : v;
    size *= ext[i];
  }
  /* Split size into factors, outermost first. */
  int n_b = 0;
  int64_t stride = size;
  while (stride > 1 && n_b < 3) {
    int64_t d = 1;
    for (int tries = 0; tries < 8 && d == 1; tries++) {
      int64_t c = 1 + (int64_t)loom_rng_below(rng, (uint64_t)stride);
      if (stride % c == 0)
        d = c;
    }
    if (n_b == 2 || d == 1)
      d = stride;
    int64_t lower = stride / d;
    loom_expr *e = f;
    if (lower > 1)
      e = B(FLOORDIV, e, K(lower));
    if (d < stride || n_b > 0)
      e = B(FLOORMOD, e, K(d));
    b[n_b++] = e;
    stride = lower;
  }
  if (n_b == 0)
    b[n_b++] = f;
  return n_b;
}

static void test_reshapes(void) {
  loom_rng rng;
  loom_rng_seed(&rng, 3);
  int n_cases = 1500, n_refused = 0, n_wrong = 0, n_div = 0, n_div_wrong = 0;
  for (int c = 0; c < n_cases; c++) {
    loom_arena *a = loom_arena_new();
    nest ns;
    loom_expr *b[4];
    int n = make_reshape(a, &rng, &ns, b);
    loom_iter_map m;
    char *why;
    if (detect(a, &ns, b, n, LOOM_ITER_MAP_BIJECTIVE, &m, &why) != LOOM_OK) {
      if (n_refused++ < 5) {
        char *t = expr_text(b[0]);
        fprintf(stderr, "refused reshape (%s ...): %s\n", t, why);
        free(t);
      }
      loom_arena_free(a);
      continue;
    }
    n_wrong += check_map(a, &ns, b, n, LOOM_ITER_MAP_BIJECTIVE, &m) != 0;
    /* Divide by a random set of inner loops; recombine at every point. */
    const loom_var *inner[MAX_LOOPS];
    int n_inner = 0;
    for (int i = 0; i < ns.n; i++)
      if (loom_rng_below(&rng, 2))
        inner[n_inner++] = ns.vars[i];
    loom_iter_division div[4];
    loom_diag d;
    loom_diag_init(&d);
    loom_status st = loom_arith_iter_map_subspace_divide(a, b, n, ns.iters, ns.n, NULL,
                                                         inner, n_inner, div, NULL, NULL, &d);
    loom_diag_free(&d);
    if (st == LOOM_OK) {
      n_div++;
      int64_t values[MAX_LOOPS], outer_values[MAX_LOOPS], inner_values[MAX_LOOPS];
      loom_var *outer_vars[MAX_LOOPS], *inner_vars[MAX_LOOPS];
      first_point(&ns, values);
      do {
        int no = 0, ni = 0;
        for (int i = 0; i < ns.n; i++) {
          bool is_in = false;
          for (int q = 0; q < n_inner; q++)
            is_in |= inner[q] == ns.vars[i];
          if (is_in) {
            inner_vars[ni] = ns.vars[i];
            inner_values[ni++] = values[i];
          } else {
            outer_vars[no] = ns.vars[i];
            outer_values[no++] = values[i];
          }
        }
        env all = {ns.vars, values, ns.n}, eo = {outer_vars, outer_values, no},
            ei = {inner_vars, inner_values, ni};
        for (int k = 0; k < n; k++) {
          int64_t x, o, in;
          if (eval(&all, b[k], &x) || eval(&eo, div[k].outer, &o) ||
              eval(&ei, div[k].inner, &in) || x != o * div[k].inner_extent + in ||
              in < 0 || (div[k].outer_extent > 1 && in >= div[k].inner_extent) ||
              (div[k].outer_extent > 1 && (o < 0 || o >= div[k].outer_extent))) {
            n_div_wrong++;
            break;
          }
        }
      } while (next_point(&ns, values));
    }
    loom_arena_free(a);
  }
  CHECK(n_refused == 0);
  CHECK(n_wrong == 0);
  CHECK(n_div_wrong == 0);
  CHECK(n_div > n_cases / 4);
  printf("reshapes: %d maps, %d refused, %d wrong; %d divided, %d wrong\n",
         n_cases, n_refused, n_wrong, n_div, n_div_wrong);
}

/* Random affine-looking bindings: whatever is accepted must be right. */
static loom_expr *random_binding(loom_arena *a, loom_rng *rng, nest *ns) {
  static const int64_t coefs[] = {1, 1, 2, 3, 4, 8};
  loom_expr *e = NULL;
  for (int i = 0; i < ns->n; i++) {
    if (loom_rng_below(rng, 3) == 0)
      continue;
    loom_expr *t = loom_ir_ref(a, ns->vars[i]);
    int64_t c = coefs[loom_rng_below(rng, 6)];
    if (c != 1)
      t = B(MUL, t, K(c));
    e = e ? B(ADD, e, t) : t;
  }
  if (!e)
    e = loom_ir_ref(a, ns->vars[0]);
  if (loom_rng_below(rng, 4) == 0)
    e = B(ADD, e, K((int64_t)loom_rng_below(rng, 5) - 2));
  if (loom_rng_below(rng, 5) == 0) /* an outer block's iterator, say */
    e = B(ADD, e, B(MUL, loom_ir_ref(a, ns->vars[ns->n]), K(coefs[loom_rng_below(rng, 6)])));
  int pick = (int)loom_rng_below(rng, 4);
  int64_t c = coefs[loom_rng_below(rng, 6)] + (int64_t)loom_rng_below(rng, 2);
  if (pick == 1)
    e = B(FLOORDIV, e, K(c));
  else if (pick == 2)
    e = B(FLOORMOD, e, K(c));
  return e;
}

static void test_random(void) {
  loom_rng rng;
  loom_rng_seed(&rng, 5);
  static const int64_t choices[] = {1, 2, 3, 4, 6, 8};
  int n_cases = 6000, n_accepted[3] = {0, 0, 0}, n_wrong = 0;
  for (int c = 0; c < n_cases; c++) {
    loom_arena *a = loom_arena_new();
    nest ns;
    int64_t ext[MAX_LOOPS];
    int n_loops = 1 + (int)loom_rng_below(&rng, MAX_LOOPS);
    for (int i = 0; i < n_loops; i++)
      ext[i] = choices[loom_rng_below(&rng, 6)];
    nest_init(a, &ns, n_loops, NULL, ext);
    loom_expr *b[3];
    int n = 1 + (int)loom_rng_below(&rng, 3);
    for (int k = 0; k < n; k++)
      b[k] = random_binding(a, &rng, &ns);
    loom_iter_map_level level = (loom_iter_map_level)(c % 3);
    loom_iter_map m;
    char *why;
    if (detect(a, &ns, b, n, level, &m, &why) == LOOM_OK) {
      n_accepted[level]++;
      int w = check_map(a, &ns, b, n, level, &m);
      if (w && n_wrong < 5) {
        char *t = expr_text(b[0]);
        fprintf(stderr, "wrong map (level %d): %s ... (%d bindings)\n", level, t, n);
        free(t);
      }
      n_wrong += w != 0;
    }
    loom_arena_free(a);
  }
  CHECK(n_wrong == 0);
  printf("random bindings: %d cases, accepted bijective %d, surjective %d, "
         "unchecked %d; %d wrong\n",
         n_cases, n_accepted[0], n_accepted[1], n_accepted[2], n_wrong);
}

/* Splits that do not divide leave a predicate (T.where): i*8 + j < 100. */
static void test_predicates(void) {
  loom_arena *a = loom_arena_new();
  nest ns;
  int64_t ext[2] = {13, 8};
  nest_init(a, &ns, 2, NULL, ext);
  loom_expr *i = loom_ir_ref(a, ns.vars[0]), *j = loom_ir_ref(a, ns.vars[1]);
  loom_expr *f = B(ADD, B(MUL, i, K(8)), j);
  loom_expr *pred = B(LT, f, K(100));
  loom_iter_map m;
  loom_diag d;
  loom_diag_init(&d);
  loom_expr *b1[1] = {f};
  CHECK(loom_arith_iter_map_detect(a, b1, 1, ns.iters, 2, pred, LOOM_ITER_MAP_BIJECTIVE,
                                   &m, &d) == LOOM_OK);
  CHECK(m.sums[0].splits[0].extent == 100);
  CHECK(check_map_where(a, &ns, b1, 1, pred, LOOM_ITER_MAP_BIJECTIVE, &m) == 0);
  loom_expr *b2[2] = {B(FLOORDIV, f, K(4)), B(FLOORMOD, f, K(4))};
  CHECK(loom_arith_iter_map_detect(a, b2, 2, ns.iters, 2, pred, LOOM_ITER_MAP_BIJECTIVE,
                                   &m, &d) == LOOM_OK);
  CHECK(check_map_where(a, &ns, b2, 2, pred, LOOM_ITER_MAP_BIJECTIVE, &m) == 0);
  loom_expr *b3[2] = {i, j};
  CHECK(loom_arith_iter_map_detect(a, b3, 2, ns.iters, 2, pred, LOOM_ITER_MAP_BIJECTIVE,
                                   &m, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "which no binding reads as a whole");
  loom_diag_free(&d);
  loom_diag_init(&d);
  loom_expr *b4[1] = {B(FLOORDIV, f, K(8))};
  CHECK(loom_arith_iter_map_detect(a, b4, 1, ns.iters, 2, pred, LOOM_ITER_MAP_SURJECTIVE,
                                   &m, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "does not divide");
  loom_diag_free(&d);
  loom_diag_init(&d);
  loom_expr *bad = B(LT, B(MUL, i, j), K(10));
  CHECK(loom_arith_iter_map_detect(a, b1, 1, ns.iters, 2, bad, LOOM_ITER_MAP_BIJECTIVE,
                                   &m, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "product of two iterators");
  loom_diag_free(&d);
  /* A bound on one loop: i < 10 (and the same written 10 > i). */
  loom_expr *b5[2] = {i, j};
  loom_expr *p5 = B(AND, B(LT, i, K(10)), B(GT, K(12), i));
  loom_diag_init(&d);
  CHECK(loom_arith_iter_map_detect(a, b5, 2, ns.iters, 2, p5, LOOM_ITER_MAP_BIJECTIVE,
                                   &m, &d) == LOOM_OK);
  CHECK(m.sums[0].splits[0].extent == 10);
  CHECK(check_map_where(a, &ns, b5, 2, p5, LOOM_ITER_MAP_BIJECTIVE, &m) == 0);
  /* Division under the predicate: the bounded fusion goes whole to the
   * side of its loops, its bound with it; over loops of both sides (j
   * inner) it does not divide, nor without a place for the bound. */
  loom_iter_division div[1];
  loom_expr *op, *ip;
  const loom_var *inner[1] = {ns.vars[1]};
  CHECK(loom_arith_iter_map_subspace_divide(a, b1, 1, ns.iters, 2, pred, inner, 1, div,
                                            &op, &ip, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "loops of both sides");
  loom_diag_free(&d);
  loom_diag_init(&d);
  const loom_var *both[2] = {ns.vars[0], ns.vars[1]};
  CHECK(loom_arith_iter_map_subspace_divide(a, b1, 1, ns.iters, 2, pred, both, 2, div,
                                            NULL, NULL, &d) == LOOM_ERROR);
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(loom_arith_iter_map_subspace_divide(a, b1, 1, ns.iters, 2, pred, both, 2, div,
                                            &op, &ip, &d) == LOOM_OK);
  CHECK(div[0].inner_extent == 100 && div[0].outer_extent == 1 && !op && ip);
  char *t = expr_text(ip);
  CHECK_STREQ(t, "i * 8 + j < 100");
  free(t);
  CHECK(loom_arith_iter_map_subspace_divide(a, b1, 1, ns.iters, 2, pred, both, 0, div,
                                            &op, &ip, &d) == LOOM_OK);
  CHECK(div[0].inner_extent == 1 && div[0].outer_extent == 100 && op && !ip);
  t = expr_text(div[0].outer);
  CHECK_STREQ(t, "i * 8 + j");
  free(t);
  loom_diag_free(&d);

  /* Random bounds on random fusions: whatever is accepted is right. */
  loom_rng rng;
  loom_rng_seed(&rng, 9);
  int n_accepted = 0, n_wrong = 0;
  for (int c = 0; c < 600; c++) {
    loom_arena *a2 = loom_arena_new();
    loom_arena *save = a;
    a = a2;
    nest rs;
    int64_t e2[2] = {1 + (int64_t)loom_rng_below(&rng, 6), 1 + (int64_t)loom_rng_below(&rng, 6)};
    nest_init(a, &rs, 2, NULL, e2);
    loom_expr *ri = loom_ir_ref(a, rs.vars[0]), *rj = loom_ir_ref(a, rs.vars[1]);
    loom_expr *rf = B(ADD, B(MUL, ri, K(e2[1])), rj);
    int64_t bound = 1 + (int64_t)loom_rng_below(&rng, (uint64_t)(e2[0] * e2[1]));
    loom_expr *rp = B(LT, rf, K(bound));
    int64_t dv = 1 + (int64_t)loom_rng_below(&rng, 4);
    loom_expr *rb[2] = {B(FLOORDIV, rf, K(dv)), B(FLOORMOD, rf, K(dv))};
    int nb = loom_rng_below(&rng, 3) == 0 ? 1 : 2;
    if (nb == 1)
      rb[0] = loom_rng_below(&rng, 2) ? rf : ri;
    loom_iter_map_level level = (loom_iter_map_level)loom_rng_below(&rng, 2);
    loom_iter_map rm;
    loom_diag rd;
    loom_diag_init(&rd);
    if (loom_arith_iter_map_detect(a, rb, nb, rs.iters, 2, rp, level, &rm, &rd) == LOOM_OK) {
      n_accepted++;
      n_wrong += check_map_where(a, &rs, rb, nb, rp, level, &rm) != 0;
    }
    loom_diag_free(&rd);
    a = save;
    loom_arena_free(a2);
  }
  CHECK(n_wrong == 0);
  CHECK(n_accepted > 100);
  printf("predicates: 600 maps, %d accepted, %d wrong\n", n_accepted, n_wrong);
  loom_arena_free(a);
}

/* Allocation failure: the n-th allocation fails, for every n until both
 * detection and division succeed; each run gives LOOM_NOMEM or the answer. */
static void test_faultsim(void) {
  loom_arena *a = loom_arena_new();
  nest ns;
  int64_t ext[3] = {4, 8, 2};
  nest_init(a, &ns, 3, NULL, ext);
  loom_expr *i = loom_ir_ref(a, ns.vars[0]), *j = loom_ir_ref(a, ns.vars[1]);
  loom_expr *f = B(ADD, B(MUL, B(ADD, B(MUL, i, K(8)), j), K(2)), loom_ir_ref(a, ns.vars[2]));
  loom_expr *b[2] = {B(FLOORDIV, f, K(4)), B(FLOORMOD, f, K(4))};
  const loom_var *inner[2] = {ns.vars[1], ns.vars[2]};
  int n_failed_runs = 0;
  for (long n = 1; n < 10000; n++) {
    loom_faultsim fs = {n, 0};
    loom_arena *out = loom_arena_new();
    loom_arena_set_faultsim(out, &fs);
    loom_iter_map m;
    loom_iter_division div[2];
    loom_diag d;
    loom_diag_init(&d);
    loom_status st = loom_arith_iter_map_detect(out, b, 2, ns.iters, 3, NULL,
                                                LOOM_ITER_MAP_BIJECTIVE, &m, &d);
    if (st == LOOM_OK)
      st = loom_arith_iter_map_subspace_divide(out, b, 2, ns.iters, 3, NULL, inner, 2, div,
                                               NULL, NULL, &d);
    CHECK(st == LOOM_OK || st == LOOM_NOMEM);
    if (st == LOOM_OK) {
      CHECK(m.sums[0].splits[0].extent == 16 && m.sums[1].splits[0].extent == 4);
      CHECK(div[0].inner_extent == 4 && div[0].outer_extent == 4);
      char *t = expr_text(div[0].outer);
      CHECK_STREQ(t, "i");
      free(t);
    }
    loom_diag_free(&d);
    loom_arena_free(out);
    if (st == LOOM_OK)
      break;
    n_failed_runs++;
  }
  CHECK(n_failed_runs > 0);
  loom_arena_free(a);
}

/* TVM's normal form (the form schedules give bindings): a split of a
 * fused iterator as x % (lower * extent) // lower, two runs of one source
 * combined back into one, and unit loops kept as terms when asked. Each
 * normal form equals its binding at every point of the nest. */
static char *normal(loom_arena *a, nest *ns, loom_expr *b, bool keep_units) {
  loom_iter_map m;
  loom_diag d;
  loom_diag_init(&d);
  loom_expr *bs[1] = {b};
  loom_status st = (keep_units ? loom_arith_iter_map_detect_units
                               : loom_arith_iter_map_detect)(a, bs, 1, ns->iters, ns->n, NULL,
                                                             LOOM_ITER_MAP_SURJECTIVE, &m, &d);
  loom_diag_free(&d);
  if (st != LOOM_OK)
    return NULL;
  loom_expr *e = loom_arith_iter_sum_normal(a, &m.sums[0], LOOM_INT32);
  CHECK(e != NULL);
  int64_t values[MAX_LOOPS + 1];
  env en = {ns->vars, values, ns->n + 1};
  values[ns->n] = 3;
  first_point(ns, values);
  do {
    int64_t x, y;
    CHECK(eval(&en, b, &x) == EVAL_OK && eval(&en, e, &y) == EVAL_OK && x == y);
  } while (next_point(ns, values));
  return expr_text(e);
}

static void test_normal_form(void) {
  loom_arena *a = loom_arena_new();
  nest ns;
  int64_t ext[3] = {4, 1, 8};
  nest_init(a, &ns, 3, NULL, ext);
  loom_expr *i = loom_ir_ref(a, ns.vars[0]), *j = loom_ir_ref(a, ns.vars[1]);
  loom_expr *k = loom_ir_ref(a, ns.vars[2]);
  loom_expr *f = B(ADD, B(MUL, i, K(8)), k); /* i * 8 + k over [0, 32) */
  char *t = normal(a, &ns, B(FLOORDIV, B(FLOORMOD, f, K(32)), K(4)), false);
  CHECK_STREQ(t, "(i * 8 + k) // 4");
  free(t);
  t = normal(a, &ns, B(FLOORMOD, B(FLOORDIV, f, K(2)), K(4)), false);
  CHECK_STREQ(t, "(i * 8 + k) % 8 // 2");
  free(t);
  /* (f // 4) * 4 + f % 4 is f again: i * 8 + k. */
  t = normal(a, &ns, B(ADD, B(MUL, B(FLOORDIV, f, K(4)), K(4)), B(FLOORMOD, f, K(4))), false);
  CHECK_STREQ(t, "i * 8 + k");
  free(t);
  /* The unit loop j: a constant, or kept beside i at the same scale. */
  loom_expr *g = B(ADD, B(MUL, B(ADD, i, j), K(8)), k);
  t = normal(a, &ns, g, false);
  CHECK_STREQ(t, "i * 8 + k");
  free(t);
  t = normal(a, &ns, g, true);
  CHECK_STREQ(t, "i * 8 + j * 8 + k");
  free(t);
  loom_arena_free(a);
}

int main(void) {
  test_named();
  test_normal_form();
  test_predicates();
  test_faultsim();
  test_reshapes();
  test_random();
  return test_summary("arith/itermap");
}
