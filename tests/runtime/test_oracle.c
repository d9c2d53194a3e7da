/* The runtime against the reference interpreter: the same TensorIR program
 * run by the interpreter and as a hand-written C kernel on the same filled
 * runtime arrays (float16 and int8 inputs, a float32 reduction) must agree.
 * This is the check the C backend's tests build on: arrays are laid out as
 * the interpreter lays them out, and the interpreter reads them in place
 * through loom_runtime_array_view. */
#include "loom/runtime.h"
#include "loom/script.h"
#include "rt_util.h"
#include "test.h"

static const char *program =
    "@T.prim_func\n"
    "def main(A: T.Buffer((8, 12), \"float16\"), B: T.Buffer((12,), \"int8\"),\n"
    "         C: T.Buffer((8,), \"float32\")):\n"
    "    for i, k in T.grid(8, 12):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            with T.init():\n"
    "                C[vi] = T.float32(0.0)\n"
    "            C[vi] = C[vi] + T.Cast(\"float32\", A[vi, vk]) * T.Cast(\"float32\", B[vk])\n";

/* The same computation in C; float16 is decoded from its bits by hand so the
 * kernel needs no compiler support for the type. */
static const char *kernel =
    "#include <stdint.h>\n"
    "#include <math.h>\n"
    "static float h2f(uint16_t h) {\n"
    "  int e = (h >> 10) & 31, m = h & 1023;\n"
    "  float v = e == 0 ? ldexpf((float)m, -24)\n"
    "          : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);\n"
    "  return h >> 15 ? -v : v;\n"
    "}\n"
    "int32_t main_kernel(void **args) {\n"
    "  const uint16_t *A = args[0];\n"
    "  const int8_t *B = args[1];\n"
    "  float *C = args[2];\n"
    "  for (int i = 0; i < 8; i++) {\n"
    "    C[i] = 0.0f;\n"
    "    for (int k = 0; k < 12; k++) C[i] = C[i] + h2f(A[i * 12 + k]) * (float)B[k];\n"
    "  }\n"
    "  return 0;\n"
    "}\n";

int main(void) {
  loom_arena *arena = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(program, strlen(program), "oracle.py", arena, &m, &d) == LOOM_OK);
  loom_runtime_lib *lib = compile_src(kernel, false);
  test_kernel k =
      lib ? (test_kernel)loom_runtime_lib_symbol(lib, "main_kernel") : NULL;
  CHECK(k != NULL);
  int64_t sa[2] = {8, 12}, sb[1] = {12}, sc[1] = {8};
  loom_runtime_array *A = loom_runtime_array_new(LOOM_DTYPE(LOOM_DT_FLOAT, 16, 1), sa, 2, 0);
  loom_runtime_array *B = loom_runtime_array_new(LOOM_DTYPE(LOOM_DT_INT, 8, 1), sb, 1, 0);
  loom_runtime_array *C_kernel = loom_runtime_array_new(LOOM_FLOAT32, sc, 1, 0);
  loom_runtime_array *C_interp = loom_runtime_array_new(LOOM_FLOAT32, sc, 1, 0);
  CHECK(A && B && C_kernel && C_interp);
  for (uint64_t seed = 1; m && k && A && B && C_kernel && C_interp && seed <= 5; seed++) {
    loom_runtime_array_fill(A, seed);
    loom_runtime_array_fill(B, seed + 100);
    loom_runtime_array_fill(C_kernel, seed + 200); /* garbage the init replaces */
    loom_runtime_array_fill(C_interp, seed + 300);
    void *args[3] = {A->data, B->data, C_kernel->data};
    CHECK(k(args) == 0);
    loom_interp_array va = loom_runtime_array_view(A);
    loom_interp_array vb = loom_runtime_array_view(B);
    loom_interp_array vc = loom_runtime_array_view(C_interp);
    loom_interp_array *iargs[3] = {&va, &vb, &vc};
    CHECK(loom_interp_run(m->funcs[0], iargs, NULL, &d) == LOOM_OK);
    loom_interp_array got = loom_runtime_array_view(C_kernel);
    char *why = NULL;
    CHECK(loom_interp_compare(&got, &vc, 1e-6, 1e-6, &why));
    if (why)
      fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, why);
    free(why);
    /* Not a vacuous agreement: the sums are not all zero. */
    const float *c = C_kernel->data;
    int nonzero = 0;
    for (int i = 0; i < 8; i++)
      nonzero += c[i] != 0;
    CHECK(nonzero >= 4);
  }
  loom_runtime_array_free(A);
  loom_runtime_array_free(B);
  loom_runtime_array_free(C_kernel);
  loom_runtime_array_free(C_interp);
  loom_runtime_lib_free(lib);
  loom_diag_free(&d);
  loom_arena_free(arena);
  return test_summary("runtime_oracle");
}
