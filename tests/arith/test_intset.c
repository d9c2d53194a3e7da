/* Tests of integer sets: named cases (bounds of split bindings, strides,
 * region union and intersection), and a brute-force check that a set holds
 * every value its expression takes over small ranges, including triangular
 * ones. */
#include "arith_gen.h"
#include "test.h"

/* Override with -D to stress the sets with other streams. */
#ifndef INTSET_SEED
#define INTSET_SEED 11
#endif
#ifndef INTSET_COUNT
#define INTSET_COUNT 4000
#endif

#define K(v) loom_ir_int(a, LOOM_INT32, v)
#define B(k, x, y) loom_ir_binary(a, LOOM_EXPR_##k, x, y)

static char *text(const loom_expr *e) { return expr_text(e); }

static void check_set(const loom_arith_intset *s, const char *min,
                      const char *extent, int64_t stride) {
  CHECK(!s->is_unbounded);
  if (s->is_unbounded)
    return;
  char *m = text(s->min), *x = text(s->extent);
  CHECK_STREQ(m, min);
  CHECK_STREQ(x, extent);
  CHECK(s->stride == stride);
  free(m);
  free(x);
}

static void test_named(void) {
  loom_arena *a = loom_arena_new();
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  loom_var *i = loom_ir_var(a, "i", LOOM_INT32), *j = loom_ir_var(a, "j", LOOM_INT32);
  loom_arith_bind(ctx, i, 0, 7, NULL);
  loom_expr *ei = loom_ir_ref(a, i), *ej = loom_ir_ref(a, j);
  loom_arith_relax rj = {j, {K(0), K(16)}};
  loom_arith_intset s;

  /* [i*16, i*16 + 15] relaxed over j, not over i. */
  CHECK(loom_arith_intset_eval(a, ctx, B(ADD, B(MUL, ei, K(16)), ej), &rj, 1, &s) == LOOM_OK);
  check_set(&s, "i * 16", "16", 1);
  CHECK(loom_arith_intset_eval(a, ctx, B(FLOORDIV, B(ADD, B(MUL, ei, K(16)), ej), K(4)),
                               &rj, 1, &s) == LOOM_OK);
  check_set(&s, "i * 4", "4", 1);
  CHECK(loom_arith_intset_eval(a, ctx, B(FLOORMOD, ej, K(4)), &rj, 1, &s) == LOOM_OK);
  check_set(&s, "0", "4", 1);
  CHECK(loom_arith_intset_eval(a, ctx, B(ADD, ei, B(MUL, ej, K(4))), &rj, 1, &s) == LOOM_OK);
  check_set(&s, "i", "61", 4);
  /* Nothing relaxed: a point. */
  CHECK(loom_arith_intset_eval(a, ctx, B(MUL, ei, K(3)), NULL, 0, &s) == LOOM_OK);
  check_set(&s, "i * 3", "1", 1);
  /* A load of a relaxed index is unknown, and says so. */
  loom_expr *shape[1] = {K(64)};
  loom_buffer *buf = loom_ir_buffer(a, "A", LOOM_INT32, shape, 1);
  loom_expr *idx[1] = {ej};
  CHECK(loom_arith_intset_eval(a, ctx, loom_ir_load(a, buf, idx, 1), &rj, 1, &s) == LOOM_OK);
  CHECK(s.is_unbounded && !s.min);
  /* Triangular: j in [i, i + 4) with i in [0, 8) relaxed too. */
  loom_arith_relax tri[2] = {{i, {K(0), K(8)}}, {j, {ei, K(4)}}};
  CHECK(loom_arith_intset_eval(a, ctx, B(SUB, ej, ei), tri, 2, &s) == LOOM_OK);
  CHECK(!s.is_unbounded);
  CHECK(loom_arith_intset_eval(a, ctx, ej, tri, 2, &s) == LOOM_OK);
  check_set(&s, "0", "11", 1);

  /* Regions: A[i*16 + j] over j is A[i*16 : i*16 + 16]. */
  loom_range r1[1] = {{B(ADD, B(MUL, ei, K(16)), ej), K(1)}};
  loom_buffer_region reg = {buf, r1, 1}, out;
  bool whole[1];
  CHECK(loom_arith_region_relax(a, ctx, &reg, &rj, 1, &out, whole) == LOOM_OK);
  CHECK(!whole[0]);
  check_set(&(loom_arith_intset){out.ranges[0].min, out.ranges[0].extent, 1, 0, 0},
            "i * 16", "16", 1);
  /* A[A[j]] cannot be bounded: the whole dimension, flagged. */
  loom_range r2[1] = {{loom_ir_load(a, buf, idx, 1), K(1)}};
  reg = (loom_buffer_region){buf, r2, 1};
  CHECK(loom_arith_region_relax(a, ctx, &reg, &rj, 1, &out, whole) == LOOM_OK);
  CHECK(whole[0]);
  check_set(&(loom_arith_intset){out.ranges[0].min, out.ranges[0].extent, 1, 0, 0},
            "0", "64", 1);

  loom_range ra[1] = {{K(0), K(8)}}, rb[1] = {{K(4), K(8)}}, rc[1] = {{K(9), K(3)}};
  loom_buffer_region x = {buf, ra, 1}, y = {buf, rb, 1}, z = {buf, rc, 1};
  bool is_empty = true;
  CHECK(loom_arith_region_union(a, ctx, &x, &y, &out, NULL) == LOOM_OK);
  check_set(&(loom_arith_intset){out.ranges[0].min, out.ranges[0].extent, 1, 0, 0},
            "0", "12", 1);
  CHECK(loom_arith_region_intersect(a, ctx, &x, &y, &out, &is_empty, NULL) == LOOM_OK);
  CHECK(!is_empty);
  check_set(&(loom_arith_intset){out.ranges[0].min, out.ranges[0].extent, 1, 0, 0},
            "4", "4", 1);
  CHECK(loom_arith_region_intersect(a, ctx, &x, &z, &out, &is_empty, NULL) == LOOM_OK);
  CHECK(is_empty);
  /* Symbolic: [i*16, +16) and [i*16 + 8, +16). */
  loom_range rs[1] = {{B(MUL, ei, K(16)), K(16)}};
  loom_range rt[1] = {{B(ADD, B(MUL, ei, K(16)), K(8)), K(16)}};
  x = (loom_buffer_region){buf, rs, 1};
  y = (loom_buffer_region){buf, rt, 1};
  CHECK(loom_arith_region_union(a, ctx, &x, &y, &out, NULL) == LOOM_OK);
  check_set(&(loom_arith_intset){out.ranges[0].min, out.ranges[0].extent, 1, 0, 0},
            "i * 16", "24", 1);
  CHECK(loom_arith_region_intersect(a, ctx, &x, &y, &out, &is_empty, NULL) == LOOM_OK);
  check_set(&(loom_arith_intset){out.ranges[0].min, out.ranges[0].extent, 1, 0, 0},
            "i * 16 + 8", "8", 1);
  /* Different buffers: an error that names both. */
  loom_buffer *other = loom_ir_buffer(a, "W", LOOM_INT32, shape, 1);
  loom_buffer_region w = {other, ra, 1};
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_arith_region_union(a, ctx, &x, &w, &out, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "'W'");
  loom_diag_free(&d);
  loom_arith_ctx_free(ctx);
  loom_arena_free(a);
}

static bool eval_at(loom_var *x, int64_t xv, const loom_expr *e, int64_t *out) {
  loom_var *vars[1] = {x};
  int64_t values[1] = {xv};
  env en = {vars, values, 1};
  return eval(&en, e, out) == EVAL_OK;
}

/* Random expressions in x and y. Mode 0 relaxes y over a constant range
 * with x fixed (the set is a function of x); mode 1 relaxes x and y with
 * y's range starting at x (triangular). */
static void test_soundness(void) {
  loom_rng rng;
  loom_rng_seed(&rng, INTSET_SEED);
  int n_cases = INTSET_COUNT, n_wrong = 0, n_bounded = 0;
  for (int n = 0; n < n_cases; n++) {
    loom_arena *a = loom_arena_new();
    loom_arith_ctx *ctx = loom_arith_ctx_new();
    loom_var *x = loom_ir_var(a, "x", LOOM_INT32), *y = loom_ir_var(a, "y", LOOM_INT32);
    loom_var *vars[2] = {x, y};
    int mode = (int)(n % 2);
    int64_t lx = rand_in(&rng, -4, 4), ex = rand_in(&rng, 1, 6);
    int64_t ly = rand_in(&rng, -4, 4), ey = rand_in(&rng, 1, 6);
    loom_arith_relax relax[2];
    int n_relax = 0;
    if (mode == 0) {
      loom_arith_bind(ctx, x, lx, lx + ex - 1, NULL);
      relax[n_relax++] = (loom_arith_relax){y, {K(ly), K(ey)}};
    } else {
      relax[n_relax++] = (loom_arith_relax){x, {K(lx), K(ex)}};
      relax[n_relax++] = (loom_arith_relax){y, {B(ADD, loom_ir_ref(a, x), K(ly)), K(ey)}};
    }
    gen g = {a, &rng, vars, 2};
    loom_expr *e = gen_int(&g, 1 + (int)loom_rng_below(&rng, 3));
    loom_arith_intset s;
    if (loom_arith_intset_eval(a, ctx, e, relax, n_relax, &s) != LOOM_OK) {
      n_wrong++;
      goto next;
    }
    n_bounded += !s.is_unbounded;
    for (int64_t xv = lx; xv < lx + ex && !s.is_unbounded; xv++) {
      int64_t lo, ext;
      bool has_bounds = eval_at(x, xv, s.min, &lo) && eval_at(x, xv, s.extent, &ext);
      int64_t y0 = mode == 0 ? ly : xv + ly;
      for (int64_t yv = y0; yv < y0 + ey; yv++) {
        int64_t values[2] = {xv, yv}, v;
        env en = {vars, values, 2};
        if (eval(&en, e, &v) != EVAL_OK)
          continue;
        if (has_bounds && !s.is_empty && v >= lo && v < lo + ext &&
            (v - lo) % s.stride == 0)
          continue;
        if (n_wrong++ < 10) {
          char *t = text(e), *m = text(s.min), *xt = text(s.extent);
          fprintf(stderr, "unsound set: %s at x=%lld y=%lld is %lld, not in "
                  "[%s, +%s) stride %lld (mode %d)\n", t, (long long)xv,
                  (long long)yv, (long long)v, m, xt, (long long)s.stride, mode);
          free(t);
          free(m);
          free(xt);
        }
        break;
      }
    }
  next:
    loom_arith_ctx_free(ctx);
    loom_arena_free(a);
  }
  CHECK(n_wrong == 0);
  printf("intset soundness: %d expressions, %d bounded, %d unsound\n", n_cases,
         n_bounded, n_wrong);
}

/* The region a tiled matmul block touches under each tile: named bounds,
 * and every element touched by every inner point lies inside. */
static void test_block_region(void) {
  static const char *text =
      "@T.prim_func\n"
      "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"),"
      " C: T.Buffer((64, 64), \"float32\")):\n"
      "    for i0, j0, i1, j1, k in T.grid(4, 2, 16, 32, 64):\n"
      "        with T.block(\"C\"):\n"
      "            vi = T.axis.spatial(64, i0 * 16 + i1)\n"
      "            vj = T.axis.spatial(64, j0 * 32 + j1)\n"
      "            vk = T.axis.reduce(64, k)\n"
      "            T.reads(A[vi, vk], B[vk, vj // 2 * 2:vj // 2 * 2 + 2])\n"
      "            T.writes(C[vi, vj])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0.0)\n"
      "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";
  loom_arena *a = loom_arena_new();
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(text, strlen(text), "t.py", a, &m, &d) == LOOM_OK);
  const loom_func *f = m->funcs[0];
  const loom_stmt *s = f->body;
  loom_var *loops[5];
  int n_loops = 0;
  while (s && (s->kind == LOOM_STMT_FOR || (s->kind == LOOM_STMT_BLOCK_REALIZE &&
                                            s->u.realize.block->n_iter_vars == 0))) {
    if (s->kind == LOOM_STMT_FOR && n_loops < 5)
      loops[n_loops++] = s->u.loop.var;
    s = s->kind == LOOM_STMT_FOR ? s->u.loop.body : s->u.realize.block->body;
  }
  CHECK(n_loops == 5 && s && s->kind == LOOM_STMT_BLOCK_REALIZE);
  if (n_loops != 5 || !s) {
    loom_arena_free(a);
    loom_arith_ctx_free(ctx);
    return;
  }
  static const int64_t extents[5] = {4, 2, 16, 32, 64};
  loom_arith_bind(ctx, loops[0], 0, 3, NULL);
  loom_arith_bind(ctx, loops[1], 0, 1, NULL);
  loom_arith_relax inner[3];
  for (int i = 0; i < 3; i++)
    inner[i] = (loom_arith_relax){loops[2 + i], {K(0), K(extents[2 + i])}};
  loom_buffer *bufs[3] = {f->params[0].buffer, f->params[1].buffer, f->params[2].buffer};
  static const char *want[3][4] = {{"i0 * 16", "16", "0", "64"},
                                   {"0", "64", "j0 * 32", "32"},
                                   {"i0 * 16", "16", "j0 * 32", "32"}};
  for (int q = 0; q < 3; q++) {
    loom_buffer_region r;
    bool whole[2] = {true, true}, is_found = false;
    CHECK(loom_arith_block_region(a, ctx, s, bufs[q], q == 2, inner, 3, &r, whole,
                                  &is_found, &d) == LOOM_OK);
    CHECK(is_found && !whole[0] && !whole[1]);
    if (!is_found)
      continue;
    for (int k = 0; k < 2; k++)
      check_set(&(loom_arith_intset){r.ranges[k].min, r.ranges[k].extent, 1, 0, 0},
                want[q][2 * k], want[q][2 * k + 1], 1);
    /* Brute force: each element the declared region names, at every point. */
    const loom_block *blk = s->u.realize.block;
    const loom_buffer_region *decl = q == 2 ? &blk->writes[0] : &blk->reads[q];
    int64_t values[5] = {0}, iv[3];
    loom_var *ivars[3] = {blk->iter_vars[0].var, blk->iter_vars[1].var,
                          blk->iter_vars[2].var};
    env all = {loops, values, 5}, outer = {loops, values, 2}, itv = {ivars, iv, 3};
    int n_outside = 0;
    for (values[0] = 0; values[0] < 4; values[0]++)
      for (values[1] = 0; values[1] < 2; values[1]++)
        for (values[2] = 0; values[2] < 16; values[2] += 5)
          for (values[3] = 0; values[3] < 32; values[3] += 3)
            for (values[4] = 0; values[4] < 64; values[4] += 7) {
              for (int t = 0; t < 3; t++)
                eval(&all, s->u.realize.iter_values[t], &iv[t]);
              for (int k = 0; k < 2; k++) {
                int64_t lo, ext, rlo, rext;
                if (eval(&itv, decl->ranges[k].min, &lo) ||
                    eval(&itv, decl->ranges[k].extent, &ext) ||
                    eval(&outer, r.ranges[k].min, &rlo) ||
                    eval(&outer, r.ranges[k].extent, &rext) || lo < rlo ||
                    lo + ext > rlo + rext)
                  n_outside++;
              }
            }
    CHECK(n_outside == 0);
  }
  /* Not a block: an error at the statement. */
  loom_buffer_region r;
  bool is_found;
  CHECK(loom_arith_block_region(a, ctx, f->body->kind == LOOM_STMT_FOR ? f->body
                                : f->body->u.realize.block->body,
                                bufs[0], false, inner, 3, &r, NULL, &is_found, &d) ==
        LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "expected a block");
  loom_diag_free(&d);
  loom_arith_ctx_free(ctx);
  loom_arena_free(a);
}

/* Allocation failure: the n-th allocation fails, for every n until the
 * evaluation succeeds; each run gives LOOM_NOMEM or the right set. */
static void test_faultsim(void) {
  loom_arena *a = loom_arena_new();
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  loom_var *i = loom_ir_var(a, "i", LOOM_INT32), *j = loom_ir_var(a, "j", LOOM_INT32);
  loom_arith_bind(ctx, i, 0, 7, NULL);
  loom_expr *e = B(FLOORMOD, B(FLOORDIV, B(ADD, B(MUL, loom_ir_ref(a, i), K(16)),
                                           loom_ir_ref(a, j)), K(4)), K(8));
  loom_arith_relax rj = {j, {K(0), K(16)}};
  loom_range r1[1] = {{e, K(1)}};
  loom_expr *shape[1] = {K(64)};
  loom_buffer_region reg = {loom_ir_buffer(a, "A", LOOM_INT32, shape, 1), r1, 1};
  int n_failed_runs = 0;
  for (long n = 1; n < 10000; n++) {
    loom_faultsim fs = {n, 0};
    loom_arena *out = loom_arena_new();
    loom_arena_set_faultsim(out, &fs);
    loom_arith_intset s;
    loom_buffer_region rr;
    loom_status st = loom_arith_intset_eval(out, ctx, e, &rj, 1, &s);
    if (st == LOOM_OK)
      st = loom_arith_region_relax(out, ctx, &reg, &rj, 1, &rr, NULL);
    CHECK(st == LOOM_OK || st == LOOM_NOMEM);
    if (st == LOOM_OK) {
      /* ((i*16 + j) // 4) % 8 is i % 2 * 4 + j // 4: four values for each i. */
      check_set(&s, "i % 2 * 4", "4", 1);
      check_set(&(loom_arith_intset){rr.ranges[0].min, rr.ranges[0].extent, 1, 0, 0},
                "i % 2 * 4", "4", 1);
    }
    loom_arena_free(out);
    if (st == LOOM_OK)
      break;
    n_failed_runs++;
  }
  CHECK(n_failed_runs > 0);
  loom_arith_ctx_free(ctx);
  loom_arena_free(a);
}

int main(void) {
  test_named();
  test_block_region();
  test_faultsim();
  test_soundness();
  return test_summary("arith/intset");
}
