/* tensorize and the tensor-intrinsic registry. Split matmuls are tensorized
 * with the built-in dot-product and register-tile intrinsics; each result
 * must print as recorded, replay from both trace forms, and compute what the
 * unscheduled program computes on random inputs, in the interpreter and
 * compiled by the C backend. Refusals must name what does not match. */
#include "loom/codegen.h"
#include "loom/interp.h"
#include "loom/runtime.h"
#include "loom/schedule.h"
#include "loom/script.h"
#include "test.h"
#include "interp_compare.h"
#include "program.h"

#include <math.h>
#include <stdlib.h>

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"

/* C = A * B^T: each output is a dot product of two rows. */
static const char *const dense =
    HEAD "def main(A: T.Buffer((8, 64), \"float32\"), B: T.Buffer((12, 64), "
         "\"float32\"), C: T.Buffer((8, 12), \"float32\")):\n"
         "    for i, j, k in T.grid(8, 12, 64):\n"
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            with T.init():\n"
         "                C[vi, vj] = T.float32(0)\n"
         "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]\n";

static const char *const matmul =
    HEAD "def main(A: T.Buffer((16, 32), \"float32\"), B: T.Buffer((32, 32), "
         "\"float32\"), C: T.Buffer((16, 32), \"float32\")):\n"
         "    for i, j, k in T.grid(16, 32, 32):\n"
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            with T.init():\n"
         "                C[vi, vj] = T.float32(0)\n"
         "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char *const dense_f64 =
    HEAD "def main(A: T.Buffer((8, 64), \"float64\"), B: T.Buffer((12, 64), "
         "\"float64\"), C: T.Buffer((8, 12), \"float64\")):\n"
         "    for i, j, k in T.grid(8, 12, 64):\n"
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            with T.init():\n"
         "                C[vi, vj] = T.float64(0)\n"
         "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]\n";

/* A sum of differences: the shape of a dot product, not its body. */
static const char *const dense_sub =
    HEAD "def main(A: T.Buffer((8, 64), \"float32\"), B: T.Buffer((12, 64), "
         "\"float32\"), C: T.Buffer((8, 12), \"float32\")):\n"
         "    for i, j, k in T.grid(8, 12, 64):\n"
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            with T.init():\n"
         "                C[vi, vj] = T.float32(0)\n"
         "            C[vi, vj] = C[vi, vj] + (A[vi, vk] - B[vj, vk])\n";

#define DENSE_LOOPS                                                            \
  "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"                      \
  "l1, l2, l3 = sch.get_loops(block=b0)\n"

static const char *const dot_script =
    DENSE_LOOPS
    "l4, l5 = sch.split(loop=l3, factors=[None, 16], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "sch.tensorize(block_or_loop=l5, tensor_intrin=\"loom_f32_dot_16\", "
    "preserve_unit_iters=True)\n";

/* The init split off first: the update block itself is tensorized. */
static const char *const dot_decomposed_script =
    DENSE_LOOPS
    "l4, l5 = sch.split(loop=l3, factors=[None, 16], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "b6 = sch.decompose_reduction(block=b0, loop=l4)\n"
    "b7 = sch.blockize(target=l5, preserve_unit_iters=True)\n"
    "sch.tensorize(block_or_loop=b7, tensor_intrin=\"loom_f32_dot_16\", "
    "preserve_unit_iters=True)\n";

static const char *const gemm_script =
    DENSE_LOOPS
    "l4, l5 = sch.split(loop=l1, factors=[None, 4], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "l6, l7 = sch.split(loop=l2, factors=[None, 16], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "l8, l9 = sch.split(loop=l3, factors=[None, 4], preserve_unit_iters=True, "
    "disable_predication=False)\n"
    "sch.reorder(l4, l6, l8, l5, l7, l9)\n"
    "sch.parallel(loop=l4)\n"
    "sch.tensorize(block_or_loop=l5, tensor_intrin=\"loom_f32_gemm_4x16x4\", "
    "preserve_unit_iters=True)\n";

static const char *const dot_expected =
    "# from tvm.script import tir as T\n"
    "\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 64), \"float32\"), B: T.Buffer((12, 64), "
    "\"float32\"), C: T.Buffer((8, 12), \"float32\")):\n"
    "    # with T.block(\"root\"):\n"
    "    for i, j, k_0 in T.grid(8, 12, 4):\n"
    "        with T.block(\"C_o\"):\n"
    "            vi_o, vj_o, vk_o = T.axis.remap(\"SSR\", [i, j, k_0])\n"
    "            T.reads(A[vi_o, vk_o * 16:vk_o * 16 + 16], B[vj_o, vk_o * 16:vk_o * 16 + 16])\n"
    "            T.writes(C[vi_o, vj_o])\n"
    "            A_1 = T.match_buffer(A[vi_o, vk_o * 16:vk_o * 16 + 16], (16,), offset_factor=1)\n"
    "            B_1 = T.match_buffer(B[vj_o, vk_o * 16:vk_o * 16 + 16], (16,), offset_factor=1)\n"
    "            C_1 = T.match_buffer(C[vi_o, vj_o], (1,), offset_factor=1)\n"
    "            with T.init():\n"
    "                with T.block(\"C_init\"):\n"
    "                    T.reads()\n"
    "                    T.writes(C[vi_o, vj_o])\n"
    "                    C[vi_o, vj_o] = T.float32(0.0)\n"
    "            for k in T.unroll(16):\n"
    "                C_1[0] = C_1[0] + A_1[k] * B_1[k]\n";

/* ---- helpers ---------------------------------------------------------------------- */

/* Runs script on a schedule of m; the schedule, or NULL with the message in
 * *err (heap) when refused. */
static loom_sched *schedule(const loom_module *m, const char *script,
                            const loom_intrin_set *set, char **err) {
  loom_sched *s = loom_sched_new(m, 1);
  if (!s)
    return NULL;
  loom_sched_set_intrins(s, set);
  loom_diag d;
  loom_diag_init(&d);
  *err = NULL;
  if (loom_sched_run_script(s, script, strlen(script), "script", &d) !=
      LOOM_OK) {
    loom_buf b;
    loom_buf_init(&b);
    loom_diag_render(&d, &b);
    *err = strdup(b.data ? b.data : "?");
    loom_buf_free(&b);
    loom_sched_free(s);
    s = NULL;
  }
  loom_diag_free(&d);
  return s;
}

static char *print_module(const loom_module *m) {
  loom_buf b;
  loom_buf_init(&b);
  loom_print_opts o = {LOOM_DIALECT_TIR};
  loom_script_print_module(m, &o, &b);
  return b.data; /* heap, owned by the caller */
}

/* Runs f in the interpreter on inputs drawn from seed; the arrays stay in
 * args (one per parameter). */
static bool interp(const loom_func *f, uint64_t seed, loom_interp_array **args) {
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_interp_alloc_args(f, NULL, args, &d) == LOOM_OK;
  loom_rng r;
  loom_rng_seed(&r, seed);
  for (int i = 0; ok && i < f->n_params; i++)
    loom_interp_fill_random(args[i], &r);
  ok = ok && loom_interp_run(f, args, NULL, &d) == LOOM_OK;
  if (!ok)
    fprintf(stderr, "interp: %s\n", d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return ok;
}

/* The scheduled module computes what the original does: in the
 * interpreter exactly (same order of accumulation), compiled within
 * rounding. */
static void check_same(const loom_module *orig, const loom_module *got) {
  const loom_func *f = orig->funcs[0], *g = got->funcs[0];
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_ir_verify_module(got, &d) == LOOM_OK);
  if (d.msg)
    fprintf(stderr, "verify: %s\n", d.msg);
  loom_diag_free(&d);
  for (uint64_t seed = 1; seed <= 3; seed++) {
    loom_interp_array *want[8] = {0}, *have[8] = {0};
    loom_runtime_array *cc[8] = {0};
    CHECK(interp(f, seed, want));
    CHECK(interp(g, seed, have));
    bool is_compiled = seed == 1 && interp_run_compiled(got, seed, cc);
    CHECK(seed != 1 || is_compiled);
    for (int i = 0; i < f->n_params; i++) {
      char *why = NULL;
      if (want[i] && have[i]) {
        CHECK(loom_interp_compare(have[i], want[i], 0, 0, &why));
        if (why)
          fprintf(stderr, "interp, param %d: %s\n", i, why);
        free(why);
        why = NULL;
      }
      if (is_compiled && want[i] && cc[i]) {
        loom_interp_array v = loom_runtime_array_view(cc[i]);
        CHECK(loom_interp_compare(&v, want[i], 1e-5, 1e-5, &why));
        if (why)
          fprintf(stderr, "compiled, param %d: %s\n", i, why);
        free(why);
      }
      loom_runtime_array_free(cc[i]);
    }
    loom_interp_free_args(f, want);
    loom_interp_free_args(g, have);
  }
}

/* The trace replays from its script and JSON forms to the same module. */
static void check_replay(const loom_module *orig, loom_sched *s) {
  loom_trace t = loom_sched_trace(s);
  loom_buf py, js;
  loom_buf_init(&py);
  loom_buf_init(&js);
  loom_trace_print_py(&t, LOOM_DIALECT_TIR, &py);
  loom_trace_print_json(&t, LOOM_DIALECT_TIR, &js);
  CHECK_CONTAINS(js.data, "[\"Tensorize\", [");
  char *err;
  loom_sched *s2 = schedule(orig, py.data, NULL, &err);
  CHECK(s2 != NULL);
  if (s2)
    CHECK(loom_ir_equal_module(loom_sched_module(s2), loom_sched_module(s),
                               NULL));
  loom_sched_free(s2);
  free(err);
  loom_arena *a = loom_arena_new();
  loom_diag d;
  loom_diag_init(&d);
  loom_trace t2;
  loom_sched *s3 = loom_sched_new(orig, 1);
  CHECK(loom_trace_read_json(js.data, js.len, "json", a, &t2, &d) == LOOM_OK &&
        loom_trace_apply(&t2, s3, LOOM_REPLAY_CHECK, &d) == LOOM_OK);
  CHECK(loom_ir_equal_module(loom_sched_module(s3), loom_sched_module(s), NULL));
  if (d.msg)
    fprintf(stderr, "replay: %s\n", d.msg);
  loom_sched_free(s3);
  loom_diag_free(&d);
  loom_arena_free(a);
  loom_buf_free(&py);
  loom_buf_free(&js);
}

/* ---- tests ---------------------------------------------------------------------------- */

static void test_allowed(const char *program, const char *script,
                         const char *expected) {
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, program);
  CHECK(m != NULL);
  char *err = NULL;
  loom_sched *s = m ? schedule(m, script, NULL, &err) : NULL;
  CHECK(s != NULL);
  if (err)
    fprintf(stderr, "refused: %s\n", err);
  if (s) {
    char *text = print_module(loom_sched_module(s));
    if (expected)
      CHECK_STREQ(text, expected);
    free(text);
    check_same(m, loom_sched_module(s));
    check_replay(m, s);
  }
  loom_sched_free(s);
  free(err);
  loom_arena_free(a);
}

static void test_refused(const char *program, const char *script,
                         const char *message) {
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, program);
  char *err = NULL;
  loom_sched *s = m ? schedule(m, script, NULL, &err) : NULL;
  CHECK(m && !s);
  CHECK_CONTAINS(err, message);
  loom_sched_free(s);
  free(err);
  loom_arena_free(a);
}

static void test_refusals(void) {
  /* Wrong shape: a tile of 8 against an intrinsic of 16. */
  test_refused(dense,
               DENSE_LOOPS "l4, l5 = sch.split(loop=l3, factors=[None, 8])\n"
                           "sch.tensorize(l5, \"loom_f32_dot_16\")\n",
               "script:4:1: error: tensorize: block 'C_o' does not match "
               "tensor intrinsic 'loom_f32_dot_16': loop 'k_1' has extent 8 "
               "where the description's loop 'k' has 16\n"
               "  sch.tensorize(l5, \"loom_f32_dot_16\")\n");
  /* Wrong dtype. */
  test_refused(dense_f64,
               DENSE_LOOPS "l4, l5 = sch.split(loop=l3, factors=[None, 16])\n"
                           "sch.tensorize(l5, \"loom_f32_dot_16\")\n",
               "has dtype float64 where the description's 'C' has float32");
  /* A body that is not the description's. */
  test_refused(dense_sub,
               DENSE_LOOPS "l4, l5 = sch.split(loop=l3, factors=[None, 16])\n"
                           "sch.tensorize(l5, \"loom_f32_dot_16\")\n",
               "the block computes A[vi_o, vk_o * 16 + vk_i] - B[vj_o, vk_o * "
               "16 + vk_i] where the description computes A[vk] * B[vk]");
  /* The dot product needs contiguous operands: B[k, j] runs down a column. */
  test_refused(matmul,
               DENSE_LOOPS "l4, l5 = sch.split(loop=l3, factors=[None, 16])\n"
                           "sch.tensorize(l5, \"loom_f32_dot_16\")\n",
               "leading dimensions must be single elements");
  /* Two reduction loops inside where the intrinsic has one. */
  test_refused(dense, DENSE_LOOPS "sch.tensorize(l2, \"loom_f32_dot_16\")\n",
               "loop 'j' has extent 12 where the description's loop 'k' has "
               "16");
  /* A loop of another kind than the description's. */
  test_refused(dense,
               DENSE_LOOPS "l4, l5 = sch.split(loop=l3, factors=[None, 16])\n"
                           "sch.unroll(l5)\n"
                           "sch.tensorize(l5, \"loom_f32_dot_16\")\n",
               "loop 'k_1' is not of the kind (serial, parallel, vectorized, "
               "unrolled, bound) of the description's loop 'k'");
  test_refused(dense, DENSE_LOOPS "sch.tensorize(l3, \"no_such\")\n",
               "tensorize: no tensor intrinsic is named 'no_such'");
  /* The gemm tile against a dot-product shaped nest. */
  test_refused(dense,
               DENSE_LOOPS "l4, l5 = sch.split(loop=l3, factors=[None, 16])\n"
                           "sch.tensorize(l5, \"loom_f32_gemm_4x16x4\")\n",
               "loop 'k_1' has extent 16 where the description's loop 'i' "
               "has 4");
}

/* An intrinsic of the caller's own: int32 dot product of 4, registered in a
 * set attached to the schedule. */
static const char *const idot_desc =
    HEAD "def idot_desc(A: T.Buffer((4,), \"int32\", offset_factor=1), "
         "B: T.Buffer((4,), \"int32\", offset_factor=1), "
         "C: T.Buffer((1,), \"int32\", offset_factor=1)):\n"
         "    with T.block(\"root\"):\n"
         "        T.reads(C[0:1], A[0:4], B[0:4])\n"
         "        T.writes(C[0:1])\n"
         "        for k in range(4):\n"
         "            with T.block(\"update\"):\n"
         "                vk = T.axis.reduce(4, k)\n"
         "                C[0] = C[0] + A[vk] * B[vk]\n";

static const char *const idot_impl =
    HEAD "def idot_impl(a: T.handle, b: T.handle, c: T.handle):\n"
         "    A = T.match_buffer(a, (4,), \"int32\", elem_offset=A_off)\n"
         "    B = T.match_buffer(b, (4,), \"int32\", offset_factor=1)\n"
         "    C = T.match_buffer(c, (1,), \"int32\", offset_factor=1)\n"
         "    with T.block(\"root\"):\n"
         "        T.reads(C[0:1], A[0:4], B[0:4])\n"
         "        T.writes(C[0:1])\n"
         "        C[0] = C[0] + A[0] * B[0] + A[1] * B[1] + A[2] * B[2] + "
         "A[3] * B[3]\n";

static const char *const idense =
    HEAD "def main(A: T.Buffer((6, 8), \"int32\"), B: T.Buffer((5, 8), "
         "\"int32\"), C: T.Buffer((6, 5), \"int32\")):\n"
         "    for i, j, k in T.grid(6, 5, 8):\n"
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            with T.init():\n"
         "                C[vi, vj] = 0\n"
         "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]\n";

static void test_registry(void) {
  CHECK(loom_sched_intrin_count(NULL) >= 2);
  const loom_sched_intrin *t = loom_sched_intrin_get(NULL, "loom_f32_dot_16");
  CHECK(t && !strcmp(t->name, "loom_f32_dot_16"));
  CHECK(loom_sched_intrin_get(NULL, "idot_4") == NULL);
  loom_intrin_set *set = loom_sched_intrins_new();
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_sched_intrin_register(set, "idot_4", idot_desc, idot_impl, &d) ==
        LOOM_OK);
  CHECK(loom_sched_intrin_get(set, "idot_4") != NULL);
  CHECK(loom_sched_intrin_count(set) == loom_sched_intrin_count(NULL) + 1);
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(loom_sched_intrin_register(set, "idot_4", idot_desc, idot_impl, &d) ==
        LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "tensor intrinsic 'idot_4' is already registered");
  CHECK(loom_sched_intrin_register(set, "loom_f32_dot_16", idot_desc,
                                   idot_impl, &d) == LOOM_ERROR);
  /* Description and implementation disagree: float32 against int32. */
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(loom_sched_intrin_register(set, "mixed", t->desc, idot_impl, &d) ==
        LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "must have the same dtype and the same constant shape");
  CHECK(loom_sched_intrin_register(set, "broken", "def (", idot_impl, &d) ==
        LOOM_ERROR);
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(loom_sched_intrin_register(
            set, "rootless",
            HEAD "def f(A: T.Buffer((4,), \"int32\")):\n    A[0] = 1\n",
            idot_impl, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "must have a root block");
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(loom_sched_intrin_register(NULL, "x", idot_desc, idot_impl, &d) ==
        LOOM_ERROR);
  loom_diag_free(&d);

  /* The user intrinsic tensorizes, computes the same, and is unknown to a
   * schedule without the set. */
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, idense);
  const char *script =
      DENSE_LOOPS "l4, l5 = sch.split(loop=l3, factors=[None, 4])\n"
                  "sch.tensorize(l5, \"idot_4\")\n";
  char *err = NULL;
  loom_sched *s = m ? schedule(m, script, set, &err) : NULL;
  CHECK(s != NULL);
  if (err)
    fprintf(stderr, "refused: %s\n", err);
  if (s) {
    check_same(m, loom_sched_module(s));
    loom_sched *c = loom_sched_copy(s);
    CHECK(c && loom_sched_intrins(c) == set);
    loom_sched_free(c);
  }
  loom_sched_free(s);
  free(err);
  s = m ? schedule(m, script, NULL, &err) : NULL;
  CHECK(!s);
  CHECK_CONTAINS(err, "no tensor intrinsic is named 'idot_4'");
  free(err);
  loom_arena_free(a);
  loom_sched_intrins_free(set);
}

/* The C-level wrapper records what the script form does. */
static void test_wrapper(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, dense);
  loom_sched *s = m ? loom_sched_new(m, 1) : NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_sched_rv b;
  const loom_sched_rv *loops, *parts;
  int n;
  loom_tval f[2] = {loom_tval_none(), loom_tval_int(16)};
  bool ok = s && loom_sched_get_block(s, "C", NULL, &b, &d) == LOOM_OK &&
            loom_sched_get_loops(s, b, &loops, &n, &d) == LOOM_OK &&
            loom_sched_split(s, loops[2], f, 2, true, false, &parts, &d) ==
                LOOM_OK;
  CHECK(ok);
  if (ok) {
    loom_sched_rv inner = parts[1];
    CHECK(loom_sched_tensorize(s, inner, "loom_f32_dot_16", true, &d) ==
          LOOM_OK);
    check_same(m, loom_sched_module(s));
    loom_trace t = loom_sched_trace(s);
    loom_buf py;
    loom_buf_init(&py);
    loom_trace_print_py(&t, LOOM_DIALECT_TIR, &py);
    CHECK_CONTAINS(py.data, "sch.tensorize(block_or_loop=l5, "
                            "tensor_intrin=\"loom_f32_dot_16\", "
                            "preserve_unit_iters=True)");
    loom_buf_free(&py);
  }
  loom_diag_free(&d);
  loom_sched_free(s);
  loom_arena_free(a);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  test_allowed(dense, dot_script, dot_expected);
  test_allowed(dense, dot_decomposed_script, NULL);
  test_allowed(matmul, gemm_script, NULL);
  test_refusals();
  test_registry();
  test_wrapper();
  return test_summary("test_tensorize");
}
