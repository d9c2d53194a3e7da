/* Products for cuBLAS on a cuda target: which the pattern takes (float16
 * and bfloat16 factors cast to float32 among them, a gemv as a product of
 * one column) and refuses, what the pass leaves to the rules, and what the
 * GPU lowering makes of a marked nest: one call on the host between the
 * kernels, no kernel of its own; a mark that does not describe the
 * function's buffers runs as written. The marked and scheduled functions
 * compute in the interpreter what the programs compute. */
#include "interp_compare.h"
#include "program.h"
#include "loom/codegen.h"
#include "loom/dispatch.h"
#include "loom/lower.h"
#include "loom/tune.h"
#include "test.h"

#include <string.h>

#define HEAD "from tvm.script import tir as T\n@T.prim_func\n"

static loom_target cuda;

/* C[48, 40] (+)= A B over k = 24, A and B of dtype ab, C of dtype c, each
 * factor written as fa and fb (with %s for the load). */
static void product(char *buf, size_t n, const char *ab, const char *c, const char *fa,
                    const char *fb, bool init) {
  char a[128], b[128];
  snprintf(a, sizeof a, fa, "A[vi, vk]");
  snprintf(b, sizeof b, fb, "B[vk, vj]");
  snprintf(buf, n,
           HEAD "def main(A: T.Buffer((48, 24), \"%s\"), B: T.Buffer((24, 40), \"%s\"), "
                "C: T.Buffer((48, 40), \"%s\")):\n"
                "    for i, j, k in T.grid(48, 40, 24):\n"
                "        with T.block(\"C\"):\n"
                "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
                "%s"
                "            C[vi, vj] = C[vi, vj] + %s * %s\n",
           ab, ab, c, init ? "            with T.init():\n                C[vi, vj] = T.float32(0)\n" : "",
           a, b);
}

static const loom_func *read_one(loom_arena *a, const char *text) {
  loom_module *m = program_read(a, text);
  CHECK(m && m->n_funcs == 1);
  return m && m->n_funcs == 1 ? loom_tune_normalized(a, m->funcs[0]) : NULL;
}

static const loom_stmt *top(const loom_func *f, int i) {
  const loom_stmt *b = f->body->u.realize.block->body;
  return b->kind == LOOM_STMT_SEQ ? b->u.seq.stmts[i] : b;
}

/* The host's calls of cuBLAS in g, and the first. */
typedef struct calls {
  int n;
  const loom_expr *first;
} calls;

static loom_visit find_call(void *ctx, loom_expr *e) {
  calls *c = ctx;
  if (e->kind == LOOM_EXPR_CALL && e->u.call.n_args > 0 &&
      e->u.call.args[0]->kind == LOOM_EXPR_STR &&
      !strcmp(e->u.call.args[0]->u.str, LOOM_GPU_CUBLAS) && c->n++ == 0)
    c->first = e;
  return LOOM_VISIT_GO;
}

static calls host_calls(const loom_gpu_func *g) {
  calls c = {0};
  loom_ir_visitor v = {.expr_pre = find_call, .ctx = &c};
  loom_ir_visit_stmt(&v, g->host->body);
  return c;
}

static bool arg_is(const loom_expr *call, int i, const char *s) {
  const loom_expr *e = call->u.call.args[i];
  return e->kind == LOOM_EXPR_STR && !strcmp(e->u.str, s);
}

static int64_t arg_int(const loom_expr *call, int i) {
  int64_t v = -1;
  loom_ir_is_const_int(call->u.call.args[i], &v);
  return v;
}

/* text's product is taken for cuBLAS with factors of dtype ab into c,
 * lowers to one host call saying so and no kernel, and the marked function
 * computes what text does. */
static void check_taken(const char *text, const char *ab, const char *c, const char *trans,
                        int64_t m, int64_t n, int64_t k, int beta) {
  loom_arena *a = loom_arena_new();
  loom_diag d;
  loom_diag_init(&d);
  const loom_func *f = read_one(a, text);
  loom_gemm g;
  char why[256] = "", s[LOOM_DTYPE_STRLEN];
  if (!f)
    goto done;
  CHECK(loom_dispatch_match_gemm(f, &cuda, top(f, 0), &g, why, sizeof why));
  if (why[0])
    fprintf(stderr, "refused: %s\n%s", why, text);
  CHECK_STREQ(g.routine, "cublas_gemm");
  CHECK_STREQ(loom_dtype_str(g.ab, s), ab);
  CHECK(!g.is_gemv && g.m == m && g.n == n && g.k == k && g.beta == beta);
  const loom_func *marked;
  int taken;
  CHECK(loom_dispatch_func(a, f, &cuda, &marked, &taken, why, sizeof why) == LOOM_OK);
  CHECK(taken == 1);
  CHECK_STREQ(why, "cuBLAS");
  loom_gemm back;
  CHECK(loom_dispatch_marked_gemm(marked, top(marked, 0), &back));
  CHECK(back.m == m && back.n == n && back.k == k && !strcmp(back.routine, "cublas_gemm"));
  CHECK(interp_compare_results(f, marked, 1, false, true));
  loom_gpu_func gf;
  CHECK(loom_lower_gpu(a, marked, &cuda, &gf, &d) == LOOM_OK);
  if (d.msg)
    fprintf(stderr, "%s\n", d.msg);
  calls cs = host_calls(&gf);
  CHECK(cs.n == 1 && gf.n_kernels == 0);
  if (cs.first) {
    CHECK(cs.first->u.call.n_args == 13);
    CHECK(arg_is(cs.first, 1, ab) && arg_is(cs.first, 2, c) && arg_is(cs.first, 3, trans));
    CHECK(arg_int(cs.first, 7) == m && arg_int(cs.first, 8) == n && arg_int(cs.first, 9) == k);
    CHECK(arg_int(cs.first, 10) == 1 && arg_int(cs.first, 12) == beta);
  }
  /* The C backend's CPU leaves cuBLAS's mark alone: its loops. */
  loom_buf out;
  loom_buf_init(&out);
  const char *sym = "main";
  CHECK(loom_codegen_c_funcs(&marked, &sym, 1, &out, &d) == LOOM_OK);
  CHECK(out.data && !strstr(out.data, "loom_gemm("));
  loom_buf_free(&out);
done:
  loom_diag_free(&d);
  loom_arena_free(a);
}

static void check_refused(const loom_target *t, const char *text, const char *reason) {
  loom_arena *a = loom_arena_new();
  const loom_func *f = read_one(a, text);
  if (f) {
    loom_gemm g;
    char why[256] = "";
    CHECK(!loom_dispatch_match_gemm(f, t, top(f, 0), &g, why, sizeof why));
    CHECK_CONTAINS(why, reason);
  }
  loom_arena_free(a);
}

/* A product, then an epilogue: cuBLAS takes the product, dlight's Fallback
 * binds the epilogue, the GPU lowering makes one call and one kernel. A
 * mark edited to another size falls back to a kernel of the nest. */
static void check_epilogue(void) {
  static const char text[] =
      HEAD "def main(A: T.Buffer((32, 16), \"float32\"), B: T.Buffer((16, 24), \"float32\"),\n"
           "         C: T.Buffer((32, 24), \"float32\"), D: T.Buffer((32, 24), \"float32\")):\n"
           "    for i, j, k in T.grid(32, 24, 16):\n"
           "        with T.block(\"C\"):\n"
           "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
           "            with T.init():\n"
           "                C[vi, vj] = T.float32(0)\n"
           "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
           "    for i, j in T.grid(32, 24):\n"
           "        with T.block(\"D\"):\n"
           "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
           "            D[vi, vj] = T.max(C[vi, vj], T.float32(0))\n";
  loom_arena *a = loom_arena_new();
  loom_diag d;
  loom_diag_init(&d);
  const loom_func *f = read_one(a, text), *marked = NULL, *scheduled = NULL;
  int taken = 0;
  if (f)
    CHECK(loom_dispatch_func(a, f, &cuda, &marked, &taken, NULL, 0) == LOOM_OK && taken == 1);
  loom_sched *s = NULL;
  const char *rule = NULL;
  if (marked)
    CHECK(loom_tune_dlight(a, marked, &cuda, NULL, 0, &s, &scheduled, &rule, NULL, &d) == LOOM_OK);
  CHECK(rule && !strcmp(rule, "Fallback"));
  loom_gpu_func gf;
  if (scheduled) {
    CHECK(interp_compare_results(f, scheduled, 1, false, true));
    CHECK(loom_lower_gpu(a, scheduled, &cuda, &gf, &d) == LOOM_OK);
    CHECK(host_calls(&gf).n == 1 && gf.n_kernels == 1);
  }
  /* The mark says m = 31: it does not describe C, so the nest is a kernel. */
  if (marked) {
    loom_stmt *loop = (loom_stmt *)top(marked, 0);
    for (int i = 0; i < loop->u.loop.n_annotations; i++)
      if (!strcmp(loop->u.loop.annotations[i].key, "loom.m"))
        loop->u.loop.annotations[i].value =
            loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT64, 31));
    CHECK(loom_lower_gpu(a, marked, &cuda, &gf, &d) == LOOM_OK);
    CHECK(host_calls(&gf).n == 0 && gf.n_kernels >= 1);
  }
  loom_sched_free(s);
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* A convolution is not cuBLAS's: the pass takes nothing and says why. */
static void check_conv_left(void) {
  static const char text[] =
      HEAD "def main(X: T.Buffer((1, 8, 8, 4), \"float32\"), W: T.Buffer((3, 3, 4, 8), \"float32\"),\n"
           "         Y: T.Buffer((1, 6, 6, 8), \"float32\")):\n"
           "    for n, h, w, co, rh, rw, ci in T.grid(1, 6, 6, 8, 3, 3, 4):\n"
           "        with T.block(\"Y\"):\n"
           "            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap(\"SSSSRRR\", [n, h, w, co, rh, rw, ci])\n"
           "            with T.init():\n"
           "                Y[vn, vh, vw, vco] = T.float32(0)\n"
           "            Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + X[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]\n";
  loom_arena *a = loom_arena_new();
  const loom_func *f = read_one(a, text), *same = NULL;
  int taken = -1;
  char why[256] = "";
  if (f) {
    CHECK(loom_dispatch_func(a, f, NULL, &same, &taken, NULL, 0) == LOOM_OK && taken == 1);
    CHECK(loom_dispatch_func(a, f, &cuda, &same, &taken, why, sizeof why) == LOOM_OK);
    CHECK(taken == 0 && same == f);
    CHECK_CONTAINS(why, "is not two to four loops around one block");
  }
  loom_arena_free(a);
}

int main(void) {
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cuda -arch=sm_90", &cuda, &d) == LOOM_OK);
  loom_diag_free(&d);
  char p[2048];
  product(p, sizeof p, "float32", "float32", "%s", "%s", true);
  check_taken(p, "float32", "float32", "NN", 48, 40, 24, 0);
  product(p, sizeof p, "float16", "float32", "T.Cast(\"float32\", %s)", "T.Cast(\"float32\", %s)",
          true);
  check_taken(p, "float16", "float32", "NN", 48, 40, 24, 0);
  product(p, sizeof p, "bfloat16", "float32", "T.Cast(\"float32\", %s)",
          "T.Cast(\"float32\", %s)", false);
  check_taken(p, "bfloat16", "float32", "NN", 48, 40, 24, 1);
  product(p, sizeof p, "float16", "float16", "%s", "%s", true);
  check_taken(p, "float16", "float16", "NN", 48, 40, 24, 0);
  product(p, sizeof p, "float64", "float64", "%s", "%s", true);
  check_taken(p, "float64", "float64", "NN", 48, 40, 24, 0);
  /* A B^T with B stored [n, k], and y = A x as a product of one column. */
  check_taken(HEAD "def main(A: T.Buffer((48, 24), \"float16\"), B: T.Buffer((40, 24), \"float16\"),"
                   " C: T.Buffer((48, 40), \"float32\")):\n"
                   "    for i, j, k in T.grid(48, 40, 24):\n"
                   "        with T.block(\"C\"):\n"
                   "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
                   "            with T.init():\n"
                   "                C[vi, vj] = T.float32(0)\n"
                   "            C[vi, vj] = C[vi, vj] + T.Cast(\"float32\", A[vi, vk]) * "
                   "T.Cast(\"float32\", B[vj, vk])\n",
              "float16", "float32", "NT", 48, 40, 24, 0);
  check_taken(HEAD "def main(A: T.Buffer((48, 24), \"float32\"), x: T.Buffer((24,), \"float32\"),"
                   " y: T.Buffer((48,), \"float32\")):\n"
                   "    for i, k in T.grid(48, 24):\n"
                   "        with T.block(\"y\"):\n"
                   "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
                   "            with T.init():\n"
                   "                y[vi] = T.float32(0)\n"
                   "            y[vi] = y[vi] + A[vi, vk] * x[vk]\n",
              "float32", "float32", "NN", 48, 1, 24, 0);

  /* What cuBLAS has no routine for, and the CPU's BLAS refusing casts. */
  product(p, sizeof p, "int8", "int8", "%s", "%s", false);
  check_refused(&cuda, p, "multiplies int8 into int8, which cuBLAS has no routine for");
  product(p, sizeof p, "bfloat16", "bfloat16", "%s", "%s", false);
  check_refused(&cuda, p, "multiplies bfloat16 into bfloat16, which cuBLAS has no routine for");
  product(p, sizeof p, "float16", "float32", "T.Cast(\"float32\", %s)", "T.Cast(\"float32\", %s)",
          true);
  check_refused(NULL, p, "does not add a product of two loads to C");

  check_epilogue();
  check_conv_left();
  return test_summary("dispatch/cublas");
}
