/* Fast tuning's policy and candidates: every tiling the policy keeps fits
 * the target (threads, shared memory, registers) and divides the shape, the
 * list is ranked by estimate and spans several block shapes; every
 * candidate computes what the program computes (in the interpreter) and
 * lowers to CUDA C; dlight's own schedule is the first candidate; a
 * function without a matmul gets dlight's schedule alone; a target without
 * a GPU's figures is refused. */
#include "interp_compare.h"
#include "program.h"
#include "loom/codegen.h"
#include "loom/lower.h"
#include "loom/target.h"
#include "loom/tune.h"
#include "test.h"

#include <string.h>

#define K 12

static const char matmul_nn[] =
    "from tvm.script import tir as T\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 16), \"float32\"), B: T.Buffer((16, 128), \"float32\"),\n"
    "         C: T.Buffer((64, 128), \"float32\")):\n"
    "    for i, j, k in T.grid(64, 128, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

/* float16 in, float32 out, B transposed: the loads of B run along k. */
static const char matmul_nt[] =
    "from tvm.script import tir as T\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 16), \"float16\"), B: T.Buffer((64, 16), \"float16\"),\n"
    "         C: T.Buffer((32, 64), \"float32\")):\n"
    "    for i, j, k in T.grid(32, 64, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + T.Cast(\"float32\", A[vi, vk]) * "
    "T.Cast(\"float32\", B[vj, vk])\n";

/* A padded 3x3 convolution: tiled as its im2col product, C[128, 16] over
 * k = 36 (dlight_gemm_form). */
static const char conv[] =
    "from tvm.script import tir as T\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((2, 4, 8, 8), \"float32\"), W: T.Buffer((16, 4, 3, 3), \"float32\"),\n"
    "         Y: T.Buffer((2, 16, 8, 8), \"float32\")):\n"
    "    P = T.alloc_buffer((2, 4, 10, 10))\n"
    "    for n, c, h, w in T.grid(2, 4, 10, 10):\n"
    "        with T.block(\"pad\"):\n"
    "            vn, vc, vh, vw = T.axis.remap(\"SSSS\", [n, c, h, w])\n"
    "            P[vn, vc, vh, vw] = T.if_then_else(1 <= vh and vh < 9 and 1 <= vw and vw < 9, "
    "X[vn, vc, vh - 1, vw - 1], T.float32(0))\n"
    "    for n, co, h, w, ci, rh, rw in T.grid(2, 16, 8, 8, 4, 3, 3):\n"
    "        with T.block(\"conv\"):\n"
    "            vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap(\"SSSSRRR\", "
    "[n, co, h, w, ci, rh, rw])\n"
    "            with T.init():\n"
    "                Y[vn, vco, vh, vw] = T.float32(0)\n"
    "            Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + P[vn, vci, vh + vrh, vw + vrw] * "
    "W[vco, vci, vrh, vrw]\n";

static const char add[] =
    "from tvm.script import tir as T\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\")):\n"
    "    for i, j in T.grid(64, 64):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            B[vi, vj] = A[vi, vj] + T.float32(1)\n";

/* The module the tuner keeps: the function normalized, alone. */
static loom_module *tuned_module(loom_arena *a, const char *text) {
  loom_module *m = program_read(a, text);
  CHECK(m && m->n_funcs == 1);
  if (!m || m->n_funcs != 1)
    return NULL;
  loom_module *one = loom_ir_module(a);
  loom_func **f = loom_arena_alloc(a, sizeof *f);
  f[0] = (loom_func *)loom_tune_normalized(a, m->funcs[0]);
  one->funcs = f;
  one->n_funcs = 1;
  return one;
}

static void check_configs(const loom_module *m, const loom_target *t, int64_t mm,
                          int64_t nn, int64_t kk, int bytes) {
  loom_matmul_config c[K];
  int n;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_tune_fast_configs(m, t, K, c, &n, &d) == LOOM_OK);
  CHECK(n == K);
  int shapes = 0;
  for (int i = 0; i < n; i++) {
    int64_t threads = (c[i].bm / c[i].tm) * (c[i].bn / c[i].tn);
    CHECK(mm % c[i].bm == 0 && nn % c[i].bn == 0 && kk % c[i].bk == 0);
    CHECK(c[i].bm % c[i].tm == 0 && c[i].bn % c[i].tn == 0);
    CHECK(threads % t->gpu.warp_size == 0 && threads <= t->gpu.max_threads_per_block);
    CHECK((c[i].bm + c[i].bn) * c[i].bk * bytes <= t->gpu.shared_per_block);
    CHECK(c[i].tm * c[i].tn <= t->gpu.regs_per_thread);
    CHECK(c[i].est_ms > 0);
    if (i > 0)
      CHECK(c[i - 1].est_ms <= c[i].est_ms);
    bool is_new = true;
    for (int j = 0; j < i; j++)
      is_new &= c[j].bm != c[i].bm || c[j].bn != c[i].bn || c[j].tm != c[i].tm ||
                c[j].tn != c[i].tn;
    shapes += is_new;
  }
  CHECK(shapes >= K / 2);
  loom_diag_free(&d);
}

/* want candidates (at least -want when negative). */
static void check_candidates(loom_arena *a, const loom_module *m, const loom_target *t,
                             int want) {
  loom_sched *s[K];
  int n;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_tune_fast_candidates(m, t, K, s, &n, &d) == LOOM_OK);
  CHECK(want < 0 ? n >= -want : n == want);
  /* The first is dlight's own schedule. */
  loom_sched *own;
  const loom_func *g;
  CHECK(loom_tune_dlight(a, m->funcs[0], t, NULL, 0, &own, &g, NULL, NULL, &d) == LOOM_OK);
  CHECK(own && n > 0 && loom_ir_equal_func(g, loom_sched_module(s[0])->funcs[0], NULL));
  if (own)
    loom_sched_free(own);
  for (int i = 0; i < n; i++) {
    const loom_func *f = loom_sched_module(s[i])->funcs[0];
    CHECK(interp_compare_results(m->funcs[0], f, 1, true, true));
    for (int j = 0; j < i; j++)
      CHECK(!loom_ir_equal_func(f, loom_sched_module(s[j])->funcs[0], NULL));
    loom_gpu_func gf;
    loom_buf cu;
    loom_buf_init(&cu);
    bool ok = loom_lower_gpu(a, f, t, &gf, &d) == LOOM_OK &&
              loom_codegen_cuda(&gf, &cu, &d) == LOOM_OK;
    if (!ok)
      fprintf(stderr, "candidate %d: %s\n", i, d.msg ? d.msg : "?");
    CHECK(ok);
    loom_buf_free(&cu);
  }
  for (int i = 0; i < n; i++)
    loom_sched_free(s[i]);
  loom_diag_free(&d);
}

int main(void) {
  loom_arena *a = loom_arena_new();
  loom_target sm90, sm80, cpu;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cuda -arch=sm_90", &sm90, &d) == LOOM_OK);
  CHECK(loom_target_parse("cuda -arch=sm_80", &sm80, &d) == LOOM_OK);
  CHECK(loom_target_parse("cpu", &cpu, &d) == LOOM_OK);

  loom_module *nn = tuned_module(a, matmul_nn), *nt = tuned_module(a, matmul_nt);
  loom_module *ew = tuned_module(a, add), *cv = tuned_module(a, conv);
  if (nn && nt && ew && cv) {
    check_configs(nn, &sm90, 64, 128, 16, 4);
    check_configs(nt, &sm80, 32, 64, 16, 2);
    check_candidates(a, nn, &sm90, K);
    check_candidates(a, nt, &sm80, K);
    check_candidates(a, ew, &sm90, 1);
    check_candidates(a, cv, &sm90, -2);

    loom_matmul_config c[K];
    int n = -1;
    CHECK(loom_tune_fast_configs(ew, &sm90, K, c, &n, &d) == LOOM_OK && n == 0);
    CHECK(loom_tune_fast_configs(nn, &cpu, K, c, &n, &d) == LOOM_ERROR);
    CHECK_CONTAINS(d.msg, "needs a cuda target");
  }
  loom_diag_free(&d);
  loom_arena_free(a);
  return test_summary("dlight fast");
}
