/* The gemm pattern, case by case: each program's top loop nest is taken
 * with the layout, extents and beta it says, or refused with the reason it
 * says. The dispatch pass marks what it takes, the mark reads back as the
 * same gemm, and a marked function computes in the interpreter what the
 * program computes (the mark changes no statement). */
#include "interp_compare.h"
#include "program.h"
#include "loom/dispatch.h"
#include "loom/tune.h"
#include "test.h"

#include <string.h>

#define HEAD "from tvm.script import tir as T\n@T.prim_func\n"

/* A matmul C[64, 32] over k = 16 with A and B as given, an init when init
 * is true, in dtype. */
static void program(char *buf, size_t n, const char *a_shape, const char *b_shape,
                    const char *a_idx, const char *b_idx, const char *dtype, bool init) {
  snprintf(buf, n,
           HEAD "def main(A: T.Buffer(%s, \"%s\"), B: T.Buffer(%s, \"%s\"), "
                "C: T.Buffer((64, 32), \"%s\")):\n"
                "    for i, j, k in T.grid(64, 32, 16):\n"
                "        with T.block(\"C\"):\n"
                "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
                "%s"
                "            C[vi, vj] = C[vi, vj] + A[%s] * B[%s]\n",
           a_shape, dtype, b_shape, dtype, dtype,
           init ? "            with T.init():\n                C[vi, vj] = T.float32(0)\n" : "",
           a_idx, b_idx);
}

static const loom_func *read_one(loom_arena *a, const char *text) {
  loom_module *m = program_read(a, text);
  CHECK(m && m->n_funcs == 1);
  return m && m->n_funcs == 1 ? loom_tune_normalized(a, m->funcs[0]) : NULL;
}

static const loom_stmt *top_loop(const loom_func *f) {
  const loom_stmt *b = f->body->u.realize.block->body;
  return b->kind == LOOM_STMT_SEQ ? b->u.seq.stmts[0] : b;
}

static void check_taken(const char *text, const char *routine, bool ta, bool tb, int beta) {
  loom_arena *a = loom_arena_new();
  const loom_func *f = read_one(a, text);
  if (!f) {
    loom_arena_free(a);
    return;
  }
  loom_gemm g;
  char why[256] = "";
  CHECK(loom_dispatch_match_gemm(f, NULL, top_loop(f), &g, why, sizeof why));
  if (why[0])
    fprintf(stderr, "refused: %s\n%s", why, text);
  CHECK_STREQ(g.routine, routine);
  CHECK(g.trans_a == ta && g.trans_b == tb && g.beta == beta);
  CHECK(g.m == 64 && g.n == 32 && g.k == 16);
  CHECK_STREQ(g.a->name, "A");
  CHECK_STREQ(g.c->name, "C");
  const loom_func *marked;
  int n;
  CHECK(loom_dispatch_func(a, f, NULL, &marked, &n, NULL, 0) == LOOM_OK && n == 1);
  loom_gemm back;
  CHECK(loom_dispatch_marked_gemm(marked, top_loop(marked), &back));
  CHECK(back.trans_a == ta && back.trans_b == tb && back.beta == beta && back.m == 64 &&
        back.n == 32 && back.k == 16 && !strcmp(back.routine, routine));
  CHECK(!loom_dispatch_marked_gemm(f, top_loop(f), &back));
  CHECK(interp_compare_results(f, marked, 1, false, true));
  loom_arena_free(a);
}

static void check_refused(const char *text, const char *reason) {
  loom_arena *a = loom_arena_new();
  const loom_func *f = read_one(a, text);
  if (f) {
    loom_gemm g;
    char why[256] = "";
    CHECK(!loom_dispatch_match_gemm(f, NULL, top_loop(f), &g, why, sizeof why));
    CHECK_CONTAINS(why, reason);
    const loom_func *same;
    int n = -1;
    CHECK(loom_dispatch_func(a, f, NULL, &same, &n, why, sizeof why) == LOOM_OK);
    CHECK(n == 0 && same == f);
  }
  loom_arena_free(a);
}

int main(void) {
  char p[2048];
  program(p, sizeof p, "(64, 16)", "(16, 32)", "vi, vk", "vk, vj", "float32", true);
  check_taken(p, "cblas_sgemm", false, false, 0);
  program(p, sizeof p, "(64, 16)", "(32, 16)", "vi, vk", "vj, vk", "float32", true);
  check_taken(p, "cblas_sgemm", false, true, 0);
  program(p, sizeof p, "(16, 64)", "(16, 32)", "vk, vi", "vk, vj", "float32", true);
  check_taken(p, "cblas_sgemm", true, false, 0);
  program(p, sizeof p, "(16, 64)", "(32, 16)", "vk, vi", "vj, vk", "float64", true);
  check_taken(p, "cblas_dgemm", true, true, 0);
  program(p, sizeof p, "(64, 16)", "(16, 32)", "vi, vk", "vk, vj", "float32", false);
  check_taken(p, "cblas_sgemm", false, false, 1);

  program(p, sizeof p, "(64, 16)", "(16, 32)", "vi, vk", "vk, vj", "float16", true);
  check_refused(p, "is not float32 or float64 throughout");
  program(p, sizeof p, "(64, 16)", "(16, 32)", "vi, vk", "vk, vj", "int32", true);
  check_refused(p, "is not float32 or float64 throughout");
  program(p, sizeof p, "(64, 20)", "(16, 32)", "vi, vk", "vk, vj", "float32", true);
  check_refused(p, "does not cover whole compact global buffers");
  program(p, sizeof p, "(64, 16)", "(16, 32)", "vi, vk", "vk, vi", "float32", true);
  check_refused(p, "does not multiply A[i, k] by B[k, j]");
  check_refused(HEAD "def main(A: T.Buffer((64, 16), \"float32\"), B: T.Buffer((16, 32), "
                     "\"float32\"), C: T.Buffer((64, 32), \"float32\")):\n"
                     "    for i, j, k in T.grid(64, 32, 16):\n"
                     "        with T.block(\"C\"):\n"
                     "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
                     "            with T.init():\n"
                     "                C[vi, vj] = T.float32(1)\n"
                     "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
                "starts C from something other than zero");
  check_refused(HEAD "def main(A: T.Buffer((64, 16), \"float32\"), B: T.Buffer((16, 32), "
                     "\"float32\"), C: T.Buffer((64, 32), \"float32\")):\n"
                     "    for i, j, k in T.grid(64, 32, 16):\n"
                     "        with T.block(\"C\"):\n"
                     "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
                     "            with T.init():\n"
                     "                C[vi, vj] = T.float32(0)\n"
                     "            C[vi, vj] = T.max(C[vi, vj], A[vi, vk] * B[vk, vj])\n",
                "does not add a product to C");
  check_refused(HEAD "def main(A: T.Buffer((64, 32), \"float32\"), C: T.Buffer((64, 32), "
                     "\"float32\")):\n"
                     "    for i, j in T.grid(64, 32):\n"
                     "        with T.block(\"C\"):\n"
                     "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
                     "            C[vi, vj] = A[vi, vj]\n",
                "is not y[i] over one spatial iter and one reduction");
  /* Two iters on one loop (the diagonal C[i, i]): BLAS would fill all of C. */
  check_refused(HEAD "def main(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), "
                     "\"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
                     "    for i, j, k in T.grid(32, 32, 32):\n"
                     "        with T.block(\"C\"):\n"
                     "            vi = T.axis.spatial(32, i)\n"
                     "            vj = T.axis.spatial(32, i)\n"
                     "            vk = T.axis.reduce(32, k)\n"
                     "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
                "has an iter not bound to a whole loop of its own");
  check_refused(HEAD "def main(A: T.Buffer((64,), \"float32\")):\n"
                     "    for i in range(64):\n"
                     "        with T.block(\"A\"):\n"
                     "            vi = T.axis.spatial(64, i)\n"
                     "            A[vi] = T.float32(0)\n",
                "is not two to four loops around one block");
  check_refused(HEAD "def main(A: T.Buffer((64, 16), \"float32\"), B: T.Buffer((16, 32), "
                     "\"float32\"), C: T.Buffer((64, 32), \"float32\")):\n"
                     "    for i in T.parallel(64):\n"
                     "        for j, k in T.grid(32, 16):\n"
                     "            with T.block(\"C\"):\n"
                     "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
                     "                with T.init():\n"
                     "                    C[vi, vj] = T.float32(0)\n"
                     "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
                "is not a plain serial loop");

  /* Batches: B with the batch, or one B for all. */
  {
    loom_arena *a = loom_arena_new();
    const char *bmm = HEAD
        "def main(A: T.Buffer((3, 8, 4), \"float32\"), B: T.Buffer(%s, \"float32\"), "
        "C: T.Buffer((3, 8, 6), \"float32\")):\n"
        "    for b, i, j, k in T.grid(3, 8, 6, 4):\n"
        "        with T.block(\"C\"):\n"
        "            vb, vi, vj, vk = T.axis.remap(\"SSSR\", [b, i, j, k])\n"
        "            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[%s]\n";
    for (int shared = 0; shared < 2; shared++) {
      snprintf(p, sizeof p, bmm, shared ? "(6, 4)" : "(3, 4, 6)", shared ? "vj, vk" : "vb, vk, vj");
      const loom_func *f = read_one(a, p);
      loom_gemm g;
      char why[256] = "";
      CHECK(f && loom_dispatch_match_gemm(f, NULL, top_loop(f), &g, why, sizeof why));
      CHECK(g.batch == 3 && g.is_b_batched == !shared && g.trans_b == shared && g.beta == 1);
      CHECK(g.m == 8 && g.n == 6 && g.k == 4);
    }
    loom_arena_free(a);
  }

  /* Matrix times vector. */
  {
    loom_arena *a = loom_arena_new();
    const loom_func *f = read_one(a, HEAD
        "def main(A: T.Buffer((16, 24), \"float32\"), x: T.Buffer((16,), \"float32\"), "
        "y: T.Buffer((24,), \"float32\")):\n"
        "    for i, k in T.grid(24, 16):\n"
        "        with T.block(\"y\"):\n"
        "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
        "            with T.init():\n"
        "                y[vi] = T.float32(0)\n"
        "            y[vi] = y[vi] + A[vk, vi] * x[vk]\n");
    loom_gemm g;
    char why[256] = "";
    CHECK(f && loom_dispatch_match_gemm(f, NULL, top_loop(f), &g, why, sizeof why));
    CHECK(g.is_gemv && g.trans_a && g.m == 24 && g.k == 16 && g.n == 1 && g.beta == 0);
    CHECK_STREQ(g.routine, "cblas_sgemv");
    const loom_func *marked;
    int n;
    loom_gemm back;
    CHECK(f && loom_dispatch_func(a, f, NULL, &marked, &n, NULL, 0) == LOOM_OK && n == 1);
    CHECK(n == 1 && loom_dispatch_marked_gemm(marked, top_loop(marked), &back) && back.is_gemv &&
          back.trans_a && back.m == 24 && back.k == 16);
    loom_arena_free(a);
  }

  /* B a layer's constant weights ("layout_free_buffers"): oneDNN's matmul,
   * and the mark reads back; a batch stays with BLAS. */
  {
    char text[1024];
    program(text, sizeof text, "(64, 16)", "(32, 16)", "vi, vk", "vj, vk", "float32", true);
    char *at = strstr(text, "    for i");
    char tail[1024];
    snprintf(tail, sizeof tail, "%s", at);
    snprintf(at, sizeof text - (size_t)(at - text),
             "    T.func_attr({\"layout_free_buffers\": [1]})\n%s", tail);
    loom_arena *a = loom_arena_new();
    const loom_func *f = read_one(a, text), *marked;
    loom_gemm back;
    int n;
    char why[256] = "";
    CHECK(f && loom_dispatch_func(a, f, NULL, &marked, &n, why, sizeof why) == LOOM_OK && n == 1);
    CHECK_STREQ(why, "oneDNN");
    CHECK(loom_dispatch_marked_gemm(marked, top_loop(marked), &back) &&
          !strcmp(back.routine, "dnnl_matmul") && back.trans_b && !back.trans_a &&
          back.m == 64 && back.n == 32 && back.k == 16 && back.beta == 0);
    CHECK(f && interp_same_results(f, marked, 1, true));
    loom_arena_free(a);
  }

  /* The pipeline's spelling. */
  loom_pipeline pl;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_pipeline_parse("dispatch,apply-db,default", &pl, &d) == LOOM_OK && pl.n == 3);
  CHECK(pl.passes[0] == LOOM_PASS_DISPATCH && pl.passes[2] == LOOM_PASS_DEFAULT);
  CHECK(loom_pipeline_parse("dispatch,blas", &pl, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "unknown pass 'blas'");
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(loom_pipeline_parse("dlight,dlight", &pl, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "twice");
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(loom_pipeline_parse("", &pl, &d) == LOOM_ERROR);
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(loom_pipeline_parse("manual=pairs/x,dispatch", &pl, &d) == LOOM_OK && pl.n == 2);
  CHECK(pl.passes[0] == LOOM_PASS_MANUAL && pl.manual_dir_len == 7 &&
        !strncmp(pl.manual_dir, "pairs/x", 7));
  CHECK(loom_pipeline_parse("dispatch,manual", &pl, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "manual=DIR");
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(loom_pipeline_parse("dispatch=blas", &pl, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "takes no value");
  loom_diag_free(&d);
  return test_summary("dispatch/gemm");
}
