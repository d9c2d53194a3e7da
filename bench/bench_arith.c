/* Arithmetic throughput on the expressions schedule primitives produce:
 * simplification of split and fuse bindings and region bounds
 * (expressions/s), integer-set evaluation of regions, iterator-map
 * detection, and dependence analysis (models built/s, queries/s). Run with
 * `make bench` or build/bench/bench_arith [scale]. */
#include "loom/arith.h"
#include "loom/script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Processor time of this process: the machines these run on are shared,
 * and wall time measures the neighbours too. */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define K(v) loom_ir_int(a, LOOM_INT32, v)
#define B(k, x, y) loom_ir_binary(a, LOOM_EXPR_##k, x, y)
#define N_VARS 4

/* One expression of the kinds a schedule writes: a split binding, the
 * quotient or remainder of a fusion, a region bound, a nested re-split. */
static loom_expr *make_expr(loom_arena *a, loom_expr **v, int k) {
  int64_t f = 2 << (k % 4); /* 2, 4, 8, 16 */
  loom_expr *fused = B(ADD, B(MUL, v[0], K(f * 4)), B(ADD, B(MUL, v[1], K(4)), v[2]));
  switch (k % 6) {
  case 0: return B(ADD, B(MUL, v[0], K(f)), v[1]);
  case 1: return B(FLOORDIV, fused, K(4));
  case 2: return B(FLOORMOD, fused, K(f * 4));
  case 3: /* extent of a relaxed region: (hi + 1) - lo */
    return B(SUB, B(ADD, B(ADD, B(MUL, v[0], K(16)), B(MUL, v[3], K(4))), K(4)),
             B(ADD, B(MUL, v[0], K(16)), B(MUL, v[3], K(4))));
  case 4: return B(FLOORMOD, B(FLOORDIV, fused, K(f)), K(4));
  default:
    return B(MIN, B(ADD, B(MUL, v[0], K(f)), v[1]), K(1 << 20));
  }
}

static void bench_simplify(int n) {
  loom_arena *a = loom_arena_new();
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  loom_expr *v[N_VARS];
  for (int i = 0; i < N_VARS; i++) {
    loom_var *var = loom_ir_var(a, (const char *[]){"i0", "i1", "i2", "j"}[i], LOOM_INT32);
    loom_arith_bind(ctx, var, 0, i == 0 ? 63 : 3, NULL);
    v[i] = loom_ir_ref(a, var);
  }
  loom_expr **es = malloc((size_t)n * sizeof *es);
  for (int k = 0; k < n; k++)
    es[k] = make_expr(a, v, k);
  loom_arena *work = loom_arena_new();
  long nodes = 0;
  double t0 = now();
  for (int k = 0; k < n; k++) {
    loom_expr *s = loom_arith_simplify(work, ctx, es[k]);
    nodes += s != es[k];
    if (k % 4096 == 4095) {
      loom_arena_free(work);
      work = loom_arena_new();
    }
  }
  double t = now() - t0;
  printf("simplify:     %10.0f expressions/s  (%d in %.3f s, %ld rewritten)\n",
         n / t, n, t, nodes);
  loom_arena_free(work);
  free(es);
  loom_arith_ctx_free(ctx);
  loom_arena_free(a);
}

static void bench_intset(int n) {
  loom_arena *a = loom_arena_new();
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  loom_var *vars[N_VARS];
  loom_expr *v[N_VARS];
  for (int i = 0; i < N_VARS; i++) {
    vars[i] = loom_ir_var(a, (const char *[]){"i0", "i1", "i2", "j"}[i], LOOM_INT32);
    v[i] = loom_ir_ref(a, vars[i]);
  }
  loom_arith_bind(ctx, vars[0], 0, 63, NULL);
  loom_arith_relax relax[3] = {{vars[1], {K(0), K(4)}}, {vars[2], {K(0), K(4)}},
                               {vars[3], {K(0), K(4)}}};
  loom_arena *work = loom_arena_new();
  int n_bounded = 0;
  double t0 = now();
  for (int k = 0; k < n; k++) {
    loom_arith_intset s;
    loom_expr *e = make_expr(work, v, k);
    if (loom_arith_intset_eval(work, ctx, e, relax, 3, &s) == LOOM_OK)
      n_bounded += !s.is_unbounded;
    if (k % 1024 == 1023) {
      loom_arena_free(work);
      work = loom_arena_new();
    }
  }
  double t = now() - t0;
  printf("intset eval:  %10.0f sets/s         (%d in %.3f s, %d bounded)\n", n / t, n,
         t, n_bounded);
  loom_arena_free(work);
  loom_arith_ctx_free(ctx);
  loom_arena_free(a);
}

static void bench_itermap(int n) {
  loom_arena *a = loom_arena_new();
  loom_var *vars[3];
  loom_arith_relax iters[3];
  loom_expr *v[3];
  for (int i = 0; i < 3; i++) {
    vars[i] = loom_ir_var(a, (const char *[]){"i", "j", "k"}[i], LOOM_INT32);
    v[i] = loom_ir_ref(a, vars[i]);
    iters[i] = (loom_arith_relax){vars[i], {K(0), K(i == 0 ? 16 : 8)}};
  }
  loom_expr *f = B(ADD, B(MUL, B(ADD, B(MUL, v[0], K(8)), v[1]), K(8)), v[2]);
  loom_expr *b[3] = {B(FLOORDIV, f, K(64)), B(FLOORMOD, B(FLOORDIV, f, K(4)), K(16)),
                     B(FLOORMOD, f, K(4))};
  loom_arena *work = loom_arena_new();
  int n_ok = 0;
  double t0 = now();
  for (int k = 0; k < n; k++) {
    loom_iter_map m;
    n_ok += loom_arith_iter_map_detect(work, b, 3, iters, 3, NULL, LOOM_ITER_MAP_BIJECTIVE, &m,
                                       NULL) == LOOM_OK;
    if (k % 1024 == 1023) {
      loom_arena_free(work);
      work = loom_arena_new();
    }
  }
  double t = now() - t0;
  printf("iter map:     %10.0f detections/s   (%d in %.3f s, %d bijective)\n", n / t, n,
         t, n_ok);
  loom_arena_free(work);
  loom_arena_free(a);
}

static const char *const programs[] = {
    "@T.prim_func\n"
    "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\"),"
    " C: T.Buffer((128, 128), \"float32\")):\n"
    "    for i, j, k in T.grid(128, 128, 128):\n"
    "        with T.block(\"matmul\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0.0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\")):\n"
    "    for t in range(8):\n"
    "        for i in range(1, 63):\n"
    "            for j in range(1, 63):\n"
    "                A[i, j] = (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1]) * T.float32(0.25)\n",
    "@T.prim_func\n"
    "def main(A: T.Buffer((1024,), \"float32\"), B: T.Buffer((1024,), \"float32\")):\n"
    "    for i0 in range(64):\n"
    "        for i1 in range(16):\n"
    "            with T.block(\"scan\"):\n"
    "                vi = T.axis.spatial(1024, i0 * 16 + i1)\n"
    "                B[vi] = B[T.max(vi - 1, 0)] + A[vi]\n",
};

static void bench_depend(int n) {
  int n_programs = (int)(sizeof programs / sizeof programs[0]);
  loom_arena *a = loom_arena_new();
  loom_module *m[3];
  loom_diag d;
  loom_diag_init(&d);
  for (int p = 0; p < n_programs; p++) {
    if (loom_script_read(programs[p], strlen(programs[p]), "bench.py", a, &m[p], &d) !=
        LOOM_OK) {
      fprintf(stderr, "bench: program %d does not read: %s\n", p, d.msg);
      exit(1);
    }
  }
  double t0 = now();
  int n_models = n / 20 + 1;
  for (int k = 0; k < n_models; k++) {
    loom_arith_deps *deps;
    if (loom_arith_deps_new(m[k % n_programs]->funcs[0], &deps, &d) == LOOM_OK)
      loom_arith_deps_free(deps);
  }
  double t_new = now() - t0;
  /* Queries: every loop of every program, in turn. */
  loom_arith_deps *deps[3];
  const loom_var *loops[3][4];
  int n_loops[3] = {0, 0, 0};
  for (int p = 0; p < n_programs; p++) {
    loom_arith_deps_new(m[p]->funcs[0], &deps[p], &d);
    const loom_stmt *s = m[p]->funcs[0]->body;
    while (s && n_loops[p] < 4) {
      if (s->kind == LOOM_STMT_FOR) {
        loops[p][n_loops[p]++] = s->u.loop.var;
        s = s->u.loop.body;
      } else if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
        s = s->u.realize.block->body;
      } else {
        break;
      }
    }
  }
  int n_carried = 0;
  t0 = now();
  for (int k = 0; k < n; k++) {
    int p = k % n_programs;
    bool is_carried = false;
    if (n_loops[p] > 0)
      loom_arith_deps_loop_carried(deps[p], loops[p][(k / n_programs) % n_loops[p]],
                                   &is_carried, NULL, &d);
    n_carried += is_carried;
  }
  double t_query = now() - t0;
  printf("deps model:   %10.0f functions/s    (%d in %.3f s)\n", n_models / t_new,
         n_models, t_new);
  printf("deps query:   %10.0f queries/s      (%d in %.3f s, %d carried)\n", n / t_query,
         n, t_query, n_carried);
  for (int p = 0; p < n_programs; p++)
    loom_arith_deps_free(deps[p]);
  loom_diag_free(&d);
  loom_arena_free(a);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  if (scale < 1)
    scale = 1;
  bench_simplify(200000 * scale);
  bench_intset(50000 * scale);
  bench_itermap(50000 * scale);
  bench_depend(2000 * scale);
  return 0;
}
