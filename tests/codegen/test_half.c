/* float16 in the C backend, bit for bit against the interpreter: every one
 * of the 65536 float16 values widened to float32 and added to another, and
 * float32 values around every float16 boundary (subnormals, rounding ties,
 * overflow, NaN, infinities) narrowed to float16. The generated code
 * converts with branch-free bit arithmetic so that loops vectorize; this is
 * what shows it rounds as the interpreter does. */
#include "loom/script.h"
#include "loom/tune.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

#define N_HALF 65536
#define N_FLOAT 200000

static const char *program =
    "@T.prim_func\n"
    "def main(h: T.Buffer((65536,), \"float16\"), f: T.Buffer((200000,), \"float32\"),\n"
    "         of: T.Buffer((65536,), \"float32\"), oa: T.Buffer((65536,), \"float16\"),\n"
    "         oh: T.Buffer((200000,), \"float16\"), om: T.Buffer((200000,), \"float16\")):\n"
    "    for i in range(65536):\n"
    "        with T.block(\"widen\"):\n"
    "            vi = T.axis.spatial(65536, i)\n"
    "            of[vi] = T.Cast(\"float32\", h[vi])\n"
    "            oa[vi] = h[vi] + h[(vi * 7919 + 13) % 65536]\n"
    "    for i in range(200000):\n"
    "        with T.block(\"narrow\"):\n"
    "            vi = T.axis.spatial(200000, i)\n"
    "            oh[vi] = T.Cast(\"float16\", f[vi])\n"
    "            om[vi] = T.Cast(\"float16\", f[vi]) * T.float16(0.5)\n";

static uint32_t float_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}

/* Float32 inputs: every float near the float16 boundaries (exponents of
 * subnormal halves up past the largest half), both signs, and specials. */
static void fill_floats(float *f) {
  uint64_t x = 88172645463325252u;
  for (int i = 0; i < N_FLOAT; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint32_t exp = 100 + (uint32_t)(x % 46);     /* 2^-27 .. 2^18 */
    uint32_t mant = (uint32_t)(x >> 20) & 0x7fffff;
    if (i % 4 == 1)
      mant = (mant & ~0x1fffu) | 0x1000u;        /* a tie at float16 precision */
    uint32_t u = (uint32_t)(x >> 63) << 31 | exp << 23 | mant;
    memcpy(&f[i], &u, 4);
  }
  const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 65504.0f, 65519.99f,
                           65520.0f, -65520.0f, 6.103515625e-05f, 5.9604645e-08f,
                           2.9802322e-08f, 2.9802326e-08f, 1e30f, -1e-30f};
  memcpy(f, special, sizeof special);
}

static bool same(uint32_t a, uint32_t b, bool is_half) {
  uint32_t exp = is_half ? 0x7c00u : 0x7f800000u, man = is_half ? 0x3ffu : 0x7fffffu;
  bool a_nan = (a & exp) == exp && (a & man), b_nan = (b & exp) == exp && (b & man);
  return a == b || (a_nan && b_nan);
}

int main(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(program, strlen(program), "half.py", a, &m, &d) == LOOM_OK);
  const loom_func *f = m->funcs[0];
  loom_interp_array **args = calloc(6, sizeof *args);
  CHECK(loom_interp_alloc_args(f, NULL, args, &d) == LOOM_OK);
  uint16_t *h = args[0]->data;
  for (int i = 0; i < N_HALF; i++)
    h[i] = (uint16_t)i;
  fill_floats(args[1]->data);

  loom_builder_options bo = {.jobs = 1};
  loom_build_set b;
  CHECK(loom_tune_build(&f, 1, &bo, &b) == LOOM_OK && b.items[0].kernel);
  void *out[6];
  const int64_t *shapes[6];
  for (int i = 0; i < 6; i++) {
    size_t n = (size_t)args[i]->n_elems * (size_t)(args[i]->dtype.bits / 8);
    out[i] = malloc(n);
    memcpy(out[i], args[i]->data, n);
    shapes[i] = args[i]->shape;
  }
  CHECK(((loom_c_kernel)b.items[0].kernel)(out, shapes) == 0);
  CHECK(loom_interp_run(f, args, NULL, &d) == LOOM_OK);

  int bad = 0;
  for (int i = 0; i < N_HALF; i++) {
    uint32_t want = float_bits(((float *)args[2]->data)[i]), got = float_bits(((float *)out[2])[i]);
    if (!same(want, got, false) && bad++ < 5)
      fprintf(stderr, "widen %04x: %08x, interpreter %08x\n", i, got, want);
    uint16_t w = ((uint16_t *)args[3]->data)[i], g = ((uint16_t *)out[3])[i];
    if (!same(w, g, true) && bad++ < 5)
      fprintf(stderr, "add at %d: %04x, interpreter %04x\n", i, g, w);
  }
  for (int k = 4; k < 6; k++)
    for (int i = 0; i < N_FLOAT; i++) {
      uint16_t w = ((uint16_t *)args[k]->data)[i], g = ((uint16_t *)out[k])[i];
      if (!same(w, g, true) && bad++ < 5)
        fprintf(stderr, "narrow %08x: %04x, interpreter %04x\n",
                float_bits(((float *)args[1]->data)[i]), g, w);
    }
  CHECK(bad == 0);

  for (int i = 0; i < 6; i++)
    free(out[i]);
  loom_tune_build_free(&b);
  loom_interp_free_args(f, args);
  free(args);
  loom_diag_free(&d);
  loom_arena_free(a);
  return test_summary("codegen/half");
}
