/* The interpreter on CUDA's warp matrix (wmma) calls: the 256^3 float16
 * matmul tensorized by bench/gpu/matmul_wmma.sched.py against the plain
 * program, a hand-written 32 x 32 program over fragment buffers against the
 * plain matmul, and the refusals of bad calls. */
#include "interp/prog.h"
#include "interp_compare.h"
#include "program.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static const char *root;

static char *read_text(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  char *text = NULL;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_read_file(path, &text, &len, &d) != LOOM_OK)
    fprintf(stderr, "%s: %s\n", path, d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return text;
}

/* Runs f and g on the inputs of seed and compares C (parameter 2). */
static void check_same_c(const loom_func *f, const loom_func *g, uint64_t seed,
                         const char *label) {
  loom_interp_array *x[8] = {0}, *y[8] = {0};
  bool is_ran = interp_run_random(f, seed, x) && interp_run_random(g, seed, y);
  CHECK(is_ran);
  if (is_ran) {
    char *why = NULL;
    CHECK(loom_interp_compare(y[2], x[2], 1e-5, 0, &why));
    if (why)
      fprintf(stderr, "%s: C differs %s\n", label, why);
    free(why);
  }
  loom_interp_free_args(f, x);
  loom_interp_free_args(g, y);
}

static void test_bench_matmul(void) {
  char *big = read_text("bench/gpu/matmul_f16.py");
  char *script = read_text("bench/gpu/matmul_wmma.sched.py");
  char *text = big ? program_replace(big, "4096", "256") : NULL;
  loom_arena *a = loom_arena_new();
  loom_module *m = text ? program_read(a, text) : NULL;
  loom_sched *s = m && script ? program_schedule(m, 1, script, "matmul_wmma")
                              : NULL;
  CHECK(s != NULL);
  if (s) {
    const loom_func *g = loom_sched_module(s)->funcs[0];
    loom_buf b;
    loom_buf_init(&b);
    loom_script_print_func(g, NULL, &b);
    CHECK_CONTAINS(b.data, "T.tvm_mma_sync(");
    CHECK_CONTAINS(b.data, "T.tvm_load_matrix_sync(");
    loom_buf_free(&b);
    check_same_c(m->funcs[0], g, 3, "matmul_wmma");
  }
  loom_sched_free(s);
  loom_arena_free(a);
  free(text);
  free(big);
  free(script);
}

/* C = A B over 16 x 16 x 16 tiles of fragments, B read column-major from
 * its transpose BT. LOAD_B's layout and FILL's index are holes for the
 * refusal tests. */
#define WMMA_PROGRAM(LOAD_B_LAYOUT, FILL_INDEX)                               \
  "# from tvm.script import tir as T\n"                                      \
  "@T.prim_func\n"                                                           \
  "def main(A: T.Buffer((32, 32), \"float16\"), BT: T.Buffer((32, 32), "    \
  "\"float16\"), C: T.Buffer((32, 32), \"float32\")):\n"                     \
  "    Af = T.alloc_buffer((32, 32), \"float16\", scope=\"wmma.matrix_a\")\n" \
  "    Bf = T.alloc_buffer((32, 32), \"float16\", scope=\"wmma.matrix_b\")\n" \
  "    Cf = T.alloc_buffer((32, 32), scope=\"wmma.accumulator\")\n"          \
  "    for i, j in T.grid(2, 2):\n"                                          \
  "        T.tvm_fill_fragment(Cf.data, 16, 16, 16, " FILL_INDEX ", "        \
  "T.float32(0))\n"                                                          \
  "        for k in range(2):\n"                                             \
  "            T.tvm_load_matrix_sync(Af.data, 16, 16, 16, i * 2 + k, "      \
  "T.tvm_access_ptr(T.type_annotation(\"float16\"), A.data, "                \
  "i * 512 + k * 16, 512, 1), 32, \"row_major\")\n"                          \
  "            T.tvm_load_matrix_sync(Bf.data, 16, 16, 16, k * 2 + j, "      \
  "T.tvm_access_ptr(T.type_annotation(\"float16\"), BT.data, "               \
  "j * 512 + k * 16, 512, 1), 32, \"" LOAD_B_LAYOUT "\")\n"                  \
  "            T.tvm_mma_sync(Cf.data, i * 2 + j, Af.data, i * 2 + k, "      \
  "Bf.data, k * 2 + j, Cf.data, i * 2 + j)\n"                                \
  "        T.tvm_store_matrix_sync(Cf.data, 16, 16, 16, i * 2 + j, "         \
  "T.tvm_access_ptr(T.type_annotation(\"float32\"), C.data, "                \
  "i * 512 + j * 16, 512, 2), 32, \"row_major\")\n"

static const char plain_program[] =
    "# from tvm.script import tir as T\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((32, 32), \"float16\"), BT: T.Buffer((32, 32), "
    "\"float16\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "    for i, j, k in T.grid(32, 32, 32):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + T.Cast(\"float32\", A[vi, vk]) * "
    "T.Cast(\"float32\", BT[vj, vk])\n";

static void test_hand_written(void) {
  prog p, q;
  CHECK(prog_load(&p, WMMA_PROGRAM("col_major", "i * 2 + j")));
  CHECK(prog_load(&q, plain_program));
  if (p.f && q.f)
    for (uint64_t seed = 1; seed <= 2; seed++)
      check_same_c(q.f, p.f, seed, "hand-written wmma");
  prog_free(&p);
  prog_free(&q);
}

/* Loads text and runs it, expecting it refused with msg. */
static void check_refused(const char *text, const char *msg) {
  prog p;
  CHECK(prog_load(&p, text));
  loom_diag d;
  CHECK(p.f && prog_run(&p, &d) == LOOM_ERROR);
  if (p.f) {
    CHECK_CONTAINS(d.msg, msg);
    loom_diag_free(&d);
  }
  prog_free(&p);
}

static void test_refusals(void) {
  check_refused(WMMA_PROGRAM("diagonal", "i * 2 + j"),
                "T.tvm_load_matrix_sync: layout \"diagonal\" is neither "
                "\"row_major\" nor \"col_major\"");
  check_refused(WMMA_PROGRAM("col_major", "i * 2 + j + 1"),
                "T.tvm_fill_fragment: fragment 4 of 'Cf' lies outside its "
                "storage, which holds 4 fragments of 256 elements");
  check_refused(WMMA_PROGRAM("col_major", "i * 2 + j - 1"),
                "fragment -1 of 'Cf' lies outside its storage");
  /* A buffer of another scope, and an access pointer used as a value. */
  check_refused(
      "# from tvm.script import tir as T\n"
      "@T.prim_func\n"
      "def main(C: T.Buffer((16, 16), \"float32\")):\n"
      "    T.tvm_fill_fragment(C.data, 16, 16, 16, 0, T.float32(0))\n",
      "T.tvm_fill_fragment: buffer 'C' has scope \"global\", expected a wmma "
      "fragment scope");
  check_refused(
      "# from tvm.script import tir as T\n"
      "@T.prim_func\n"
      "def main(C: T.Buffer((16, 16), \"float32\")):\n"
      "    T.evaluate(T.tvm_access_ptr(T.type_annotation(\"float32\"), C.data, "
      "0, 256, 1))\n",
      "T.tvm_access_ptr is not supported by the interpreter");
}

int main(int argc, char **argv) {
  root = argc > 1 ? argv[1] : ".";
  test_bench_matmul();
  test_hand_written();
  test_refusals();
  return test_summary("interp wmma");
}
