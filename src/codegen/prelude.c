/* The text every generated C file starts with: the numeric rules of
 * TensorIR that C does not have built in, written once as small inline
 * functions (the C compiler inlines and vectorizes them). They mirror the
 * reference interpreter (src/interp/numeric.c): floor division,
 * NaN-propagating float min/max, saturating float-to-int casts, float16 and
 * bfloat16 held as float and rounded to nearest even after every operation.
 * (Wrap-around integers are the expressions' business: c_expr.c.) */
#include "codegen/codegen_impl.h"

/* Integer and float helpers C and CUDA share; LOOM_INLINE and the fixed
 * width types come first. */
#define PRELUDE_OPS \
  "/* Floor division and modulo, min and max, shifts modulo the width. */\n"\
  "#define LOOM_SIGNED_OPS(T, N, BITS) \\\n"\
  "  LOOM_INLINE T loom_floordiv_##N(T a, T b) { \\\n"\
  "    if (b == -1) return (T)(0 - (uint64_t)a); \\\n"\
  "    T q = a / b, r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? (T)(q - 1) : q; } \\\n"\
  "  LOOM_INLINE T loom_floormod_##N(T a, T b) { \\\n"\
  "    if (b == -1) return 0; \\\n"\
  "    T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r; } \\\n"\
  "  LOOM_INLINE T loom_truncdiv_##N(T a, T b) { return b == -1 ? (T)(0 - (uint64_t)a) : (T)(a / b); } \\\n"\
  "  LOOM_INLINE T loom_truncmod_##N(T a, T b) { return b == -1 ? 0 : (T)(a % b); } \\\n"\
  "  LOOM_INLINE T loom_min_##N(T a, T b) { return a < b ? a : b; } \\\n"\
  "  LOOM_INLINE T loom_max_##N(T a, T b) { return a > b ? a : b; } \\\n"\
  "  LOOM_INLINE T loom_shl_##N(T a, T b) { return (T)((uint64_t)a << ((uint64_t)b % BITS)); } \\\n"\
  "  LOOM_INLINE T loom_shr_##N(T a, T b) { return (T)(a >> ((uint64_t)b % BITS)); }\n"\
  "#define LOOM_UNSIGNED_OPS(T, N, BITS) \\\n"\
  "  LOOM_INLINE T loom_floordiv_##N(T a, T b) { return (T)(a / b); } \\\n"\
  "  LOOM_INLINE T loom_floormod_##N(T a, T b) { return (T)(a % b); } \\\n"\
  "  LOOM_INLINE T loom_truncdiv_##N(T a, T b) { return (T)(a / b); } \\\n"\
  "  LOOM_INLINE T loom_truncmod_##N(T a, T b) { return (T)(a % b); } \\\n"\
  "  LOOM_INLINE T loom_min_##N(T a, T b) { return a < b ? a : b; } \\\n"\
  "  LOOM_INLINE T loom_max_##N(T a, T b) { return a > b ? a : b; } \\\n"\
  "  LOOM_INLINE T loom_shl_##N(T a, T b) { return (T)((uint64_t)a << ((uint64_t)b % BITS)); } \\\n"\
  "  LOOM_INLINE T loom_shr_##N(T a, T b) { return (T)((uint64_t)a >> ((uint64_t)b % BITS)); }\n"\
  "LOOM_SIGNED_OPS(int8_t, i8, 8)\n"\
  "LOOM_SIGNED_OPS(int16_t, i16, 16)\n"\
  "LOOM_SIGNED_OPS(int32_t, i32, 32)\n"\
  "LOOM_SIGNED_OPS(int64_t, i64, 64)\n"\
  "LOOM_UNSIGNED_OPS(uint8_t, u8, 8)\n"\
  "LOOM_UNSIGNED_OPS(uint16_t, u16, 16)\n"\
  "LOOM_UNSIGNED_OPS(uint32_t, u32, 32)\n"\
  "LOOM_UNSIGNED_OPS(uint64_t, u64, 64)\n"\
  "\n"\
  "/* A NaN operand wins, so a NaN in the data is not dropped by a reduction. */\n"\
  "#define LOOM_FLOAT_OPS(T, N, FLOOR, FMOD) \\\n"\
  "  LOOM_INLINE T loom_min_##N(T a, T b) { return (a < b || a != a) ? a : b; } \\\n"\
  "  LOOM_INLINE T loom_max_##N(T a, T b) { return (a > b || a != a) ? a : b; } \\\n"\
  "  LOOM_INLINE T loom_floordiv_##N(T a, T b) { return FLOOR(a / b); } \\\n"\
  "  LOOM_INLINE T loom_floormod_##N(T a, T b) { return a - FLOOR(a / b) * b; } \\\n"\
  "  LOOM_INLINE T loom_truncmod_##N(T a, T b) { return FMOD(a, b); }\n"\
  "LOOM_FLOAT_OPS(float, f32, floorf, fmodf)\n"\
  "LOOM_FLOAT_OPS(double, f64, floor, fmod)\n"\
  "\n"\
  "/* Float to integer: NaN gives 0, out-of-range values saturate. */\n"\
  "#define LOOM_F2I(T, N, LO, HI) \\\n"\
  "  LOOM_INLINE T loom_f2i_##N(double x) { \\\n"\
  "    if (x != x) return 0; \\\n"\
  "    if (x <= (double)(LO)) return (LO); \\\n"\
  "    if (x >= (double)(HI)) return (HI); \\\n"\
  "    return (T)x; }\n"\
  "LOOM_F2I(int8_t, i8, INT8_MIN, INT8_MAX)\n"\
  "LOOM_F2I(int16_t, i16, INT16_MIN, INT16_MAX)\n"\
  "LOOM_F2I(int32_t, i32, INT32_MIN, INT32_MAX)\n"\
  "LOOM_F2I(uint8_t, u8, 0, UINT8_MAX)\n"\
  "LOOM_F2I(uint16_t, u16, 0, UINT16_MAX)\n"\
  "LOOM_F2I(uint32_t, u32, 0, UINT32_MAX)\n"\
  "LOOM_INLINE int64_t loom_f2i_i64(double x) {\n"\
  "  if (x != x) return 0;\n"\
  "  if (x < -9223372036854775808.0) return INT64_MIN;\n"\
  "  if (x >= 9223372036854775808.0) return INT64_MAX;\n"\
  "  return (int64_t)x;\n"\
  "}\n"\
  "LOOM_INLINE uint64_t loom_f2i_u64(double x) {\n"\
  "  if (x != x || x <= 0) return 0;\n"\
  "  if (x >= 18446744073709551616.0) return UINT64_MAX;\n"\
  "  return (uint64_t)x;\n"\
  "}\n"\
  "LOOM_INLINE int loom_clz(uint64_t x, int bits) {\n"\
  "  int n = 0;\n"\
  "  for (int i = bits - 1; i >= 0 && !((x >> i) & 1); i--) n++;\n"\
  "  return n;\n"\
  "}\n"\
  "LOOM_INLINE int32_t loom_q_multiply_shift(int32_t x, int32_t y, int32_t q, int32_t s) {\n"\
  "  int64_t left = s > 0 ? s : 0, right = s > 0 ? 0 : -(int64_t)s;\n"\
  "  uint64_t prod = ((uint64_t)(int64_t)x << (left & 63)) * (uint64_t)(int64_t)y;\n"\
  "  int64_t total = right + q;\n"\
  "  if (total > 0 && total < 64) prod += (uint64_t)1 << (total - 1);\n"\
  "  int sh = (int)(total & 63);\n"\
  "  return (int32_t)((int64_t)prod < 0 ? ~(~prod >> sh) : prod >> sh);\n"\
  "}\n"

const char codegen_prelude[] =
"#include <dlfcn.h>\n"
"#include <math.h>\n"
"#include <stdbool.h>\n"
"#include <stdint.h>\n"
"#include <stdlib.h>\n"
"#include <string.h>\n"
"#ifdef _OPENMP\n"
"#include <omp.h>\n"
"#endif\n"
"\n"
"#define LOOM_INLINE static inline __attribute__((always_inline, unused))\n"
"\n"
PRELUDE_OPS
"\n"
"\n"
"/* float16 and bfloat16: raw bits in memory, float in arithmetic. The\n"
" * float16 conversions of float values are branch-free bit arithmetic\n"
" * (F. Giesen's round-to-nearest-even method), so that a loop of them\n"
" * vectorizes; the double one, for casts from wider types, rounds once from\n"
" * the double. */\n"
"LOOM_INLINE float loom_f16_load(uint16_t h) {\n"
"  uint32_t o = (uint32_t)(h & 0x7fff) << 13, e = o & 0x0f800000u, u = o + 0x38800000u;\n"
"  float f;\n"
"  memcpy(&f, &u, 4); f -= 6.103515625e-05f; memcpy(&u, &f, 4); /* subnormal */\n"
"  uint32_t is_sub = 0u - (uint32_t)(e == 0), is_inf = 0u - (uint32_t)(e == 0x0f800000u);\n"
"  o = (u & is_sub) | ((o + 0x38000000u + (0x38000000u & is_inf)) & ~is_sub);\n"
"  o |= (uint32_t)(h & 0x8000) << 16;\n"
"  memcpy(&f, &o, 4);\n"
"  return f;\n"
"}\n"
"LOOM_INLINE uint16_t loom_f16_storef(float x) {\n"
"  uint32_t f, u;\n"
"  memcpy(&f, &x, 4);\n"
"  uint32_t sign = f & 0x80000000u;\n"
"  f ^= sign;\n"
"  float a;\n"
"  memcpy(&a, &f, 4); a += 0.5f; memcpy(&u, &a, 4);\n"
"  uint32_t sub = u - 0x3f000000u; /* the addition rounded to the subnormal step */\n"
"  uint32_t nrm = (f + 0xc8000fffu + ((f >> 13) & 1)) >> 13;\n"
"  uint32_t big = f > 0x7f800000u ? 0x7e00u : 0x7c00u;\n"
"  uint32_t is_big = 0u - (uint32_t)(f >= 0x47800000u), is_sub = 0u - (uint32_t)(f < 0x38800000u);\n"
"  uint32_t o = (big & is_big) | (sub & is_sub & ~is_big) | (nrm & ~is_sub & ~is_big);\n"
"  return (uint16_t)(o | (sign >> 16));\n"
"}\n"
"LOOM_INLINE float loom_f16rf(float x) { return loom_f16_load(loom_f16_storef(x)); }\n"
"LOOM_INLINE uint16_t loom_f16_store(double x) {\n"
"  uint16_t s = signbit(x) ? 0x8000 : 0;\n"
"  if (x != x) return (uint16_t)(s | 0x7e00);\n"
"  double a = fabs(x);\n"
"  if (a >= 65520.0) return (uint16_t)(s | 0x7c00);\n"
"  if (a < 6.103515625e-05) return (uint16_t)(s | (uint16_t)nearbyint(a * 16777216.0));\n"
"  int e; frexp(a, &e); e -= 1;\n"
"  double q = nearbyint(ldexp(a, 10 - e));\n"
"  if (q >= 2048.0) { q = 1024.0; e++; }\n"
"  return (uint16_t)(s | (uint16_t)((e + 15) << 10) | (uint16_t)((uint32_t)q - 1024));\n"
"}\n"
"LOOM_INLINE float loom_f16r(double x) { return loom_f16_load(loom_f16_store(x)); }\n"
"LOOM_INLINE float loom_bf16_load(uint16_t h) {\n"
"  uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f;\n"
"}\n"
"LOOM_INLINE uint16_t loom_bf16_store(double x) {\n"
"  float f = (float)x; /* exact unless x needs rounding below float's precision */\n"
"  if (f != f) return (uint16_t)(signbit(x) ? 0xffc0 : 0x7fc0);\n"
"  uint32_t u; memcpy(&u, &f, 4);\n"
"  if ((double)f != x) {\n"
"    /* Round x itself, not its float rounding, so no double rounding. */\n"
"    double a = fabs(x); int e; frexp(a, &e); e -= 1;\n"
"    if (e < -126) e = -126;\n"
"    double q = nearbyint(ldexp(a, 7 - e));\n"
"    float r = (float)ldexp(q, e - 7);\n"
"    if (signbit(x)) r = -r;\n"
"    memcpy(&u, &r, 4);\n"
"    return (uint16_t)(u >> 16);\n"
"  }\n"
"  u += 0x7fffu + ((u >> 16) & 1);\n"
"  return (uint16_t)(u >> 16);\n"
"}\n"
"LOOM_INLINE float loom_bf16r(double x) { return loom_bf16_load(loom_bf16_store(x)); }\n"
"\n"
"#define LOOM_BITS(TO, FROM, x) ({ FROM loom_b_ = (x); TO loom_r_; memcpy(&loom_r_, &loom_b_, sizeof loom_r_); loom_r_; })\n"
"\n"
"/* Heap buffers (over 64 KiB, or of a size known only at run time) are kept\n"
" * in a small pool when freed and handed out again: a kernel's copy of a few\n"
" * MiB would otherwise be mapped, faulted in and unmapped on every call. A\n"
" * block carries its size in a 64-byte header; the pool is emptied when the\n"
" * library is unloaded. */\n"
"#define LOOM_POOL 8\n"
"static struct { char *p; size_t n; } loom_pool[LOOM_POOL];\n"
"static int loom_pool_busy;\n"
"static void loom_pool_lock(void) {\n"
"  while (__atomic_exchange_n(&loom_pool_busy, 1, __ATOMIC_ACQUIRE)) {}\n"
"}\n"
"static void loom_pool_unlock(void) { __atomic_store_n(&loom_pool_busy, 0, __ATOMIC_RELEASE); }\n"
"void *loom_alloc(size_t n) {\n"
"  char *p = NULL;\n"
"  int best = -1;\n"
"  loom_pool_lock();\n"
"  /* The smallest kept block that fits, unless it is over 4 times too big. */\n"
"  for (int i = 0; i < LOOM_POOL; i++)\n"
"    if (loom_pool[i].p && loom_pool[i].n >= n && loom_pool[i].n / 4 <= n &&\n"
"        (best < 0 || loom_pool[i].n < loom_pool[best].n)) best = i;\n"
"  if (best >= 0) { p = loom_pool[best].p; loom_pool[best].p = NULL; }\n"
"  loom_pool_unlock();\n"
"  if (p) return p + 64;\n"
"  if (n > SIZE_MAX - 64 || posix_memalign((void **)&p, 64, n + 64)) return NULL;\n"
"  memcpy(p, &n, sizeof n);\n"
"  return p + 64;\n"
"}\n"
"void loom_free(void *q) {\n"
"  char *p = (char *)q - 64;\n"
"  size_t n;\n"
"  memcpy(&n, p, sizeof n);\n"
"  int slot = 0;\n"
"  loom_pool_lock();\n"
"  /* An empty slot, else the one with the smallest block, if smaller. */\n"
"  for (int i = 0; i < LOOM_POOL && loom_pool[slot].p; i++)\n"
"    if (!loom_pool[i].p || loom_pool[i].n < loom_pool[slot].n) slot = i;\n"
"  char *out = p;\n"
"  if (!loom_pool[slot].p || loom_pool[slot].n < n) {\n"
"    out = loom_pool[slot].p;\n"
"    loom_pool[slot].p = p;\n"
"    loom_pool[slot].n = n;\n"
"  }\n"
"  loom_pool_unlock();\n"
"  free(out);\n"
"}\n"
"__attribute__((destructor)) static void loom_pool_drain(void) {\n"
"  for (int i = 0; i < LOOM_POOL; i++) {\n"
"    free(loom_pool[i].p);\n"
"    loom_pool[i].p = NULL;\n"
"  }\n"
"}\n"
"/* OpenBLAS picks its kernels, when it is loaded, for the core it detects;\n"
" * a CPU newer than the library (Emerald Rapids under 0.3.21) is taken for\n"
" * a Prescott, SSE3 only, and its products run three times slower. Unless\n"
" * the user chose a core, such a load is undone and done again as the core\n"
" * the CPU matches (SkylakeX with AVX-512, Haswell with AVX2 and FMA). */\n"
"static void *loom_open_library(const char *lib) {\n"
"  static const char *const old[] = {\"Prescott\", \"Core2\", \"Penryn\", \"Dunnington\",\n"
"      \"Nehalem\", \"Atom\", \"Katmai\", \"Coppermine\", \"Northwood\", \"Banias\", \"Generic\"};\n"
"  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);\n"
"  void *sym = h && !getenv(\"OPENBLAS_CORETYPE\") ? dlsym(h, \"openblas_get_corename\") : NULL;\n"
"  const char *core = sym ? ((const char *(*)(void))sym)() : NULL;\n"
"  int is_old = 0;\n"
"  for (int i = 0; core && i < (int)(sizeof old / sizeof *old); i++)\n"
"    is_old |= !strcmp(core, old[i]);\n"
"  if (!is_old) return h;\n"
"  __builtin_cpu_init();\n"
"  const char *better = __builtin_cpu_supports(\"avx512f\") && __builtin_cpu_supports(\"avx512bw\") &&\n"
"      __builtin_cpu_supports(\"avx512vl\") && __builtin_cpu_supports(\"avx512dq\") ? \"SkylakeX\"\n"
"      : __builtin_cpu_supports(\"avx2\") && __builtin_cpu_supports(\"fma\") ? \"Haswell\" : NULL;\n"
"  if (!better) return h;\n"
"  setenv(\"OPENBLAS_CORETYPE\", better, 0);\n"
"  dlclose(h);\n"
"  return dlopen(lib, RTLD_NOW | RTLD_LOCAL);\n"
"}\n"
"/* A routine of a library the dispatch pass calls (BLAS; oneDNN for dnnl_*),\n"
" * opened on first use; NULL when no library has it. OpenBLAS's threads\n"
" * spin for about 2^28 cycles after each call unless told otherwise, taking\n"
" * the cores from oneDNN's threads and the kernels' in the calls after it\n"
" * (a network: ResNet-18's convolutions after its Gemm, 10-40 percent slower on\n"
" * 2 cores); unless the user set it, they sleep at once. */\n"
"void *loom_library_symbol(const char *name) {\n"
"  static const char *const blas[] = {\"libopenblas.so.0\", \"libblas.so.3\"};\n"
"  static const char *const dnnl[] = {\"libdnnl.so.2\"};\n"
"  int is_dnnl = !strncmp(name, \"dnnl_\", 5);\n"
"  if (!is_dnnl) setenv(\"OPENBLAS_THREAD_TIMEOUT\", \"4\", 0);\n"
"  const char *const *libs = is_dnnl ? dnnl : blas;\n"
"  for (int i = 0; i < (is_dnnl ? 1 : 2); i++) {\n"
"    void *h = loom_open_library(libs[i]);\n"
"    void *p = h ? dlsym(h, name) : NULL;\n"
"    if (p) return p;\n"
"  }\n"
"  return NULL;\n"
"}\n"
"void loom_set_num_threads(int n) {\n"
"#ifdef _OPENMP\n"
"  if (n > 0) omp_set_num_threads(n);\n"
"#else\n"
"  (void)n;\n"
"#endif\n"
"}\n"
"/* A process forked to measure a kernel starts OpenMP's threads at its\n"
" * first parallel loop, and until the scheduler spreads them they share a\n"
" * core (each waits out the other's time slice): a first call can take\n"
" * 1-20 ms more. Parallel regions until three in a row end within 50 us,\n"
" * for at most 30 ms, leave the threads started and placed. */\n"
"void loom_warm_threads(void) {\n"
"#ifdef _OPENMP\n"
"  double start = omp_get_wtime();\n"
"  for (int calm = 0; calm < 3 && omp_get_wtime() - start < 0.03;) {\n"
"    double t = omp_get_wtime();\n"
"    int n = 0;\n"
"#pragma omp parallel reduction(+ : n)\n"
"    n += omp_get_thread_num() >= 0;\n"
"    calm = n > 0 && omp_get_wtime() - t < 50e-6 ? calm + 1 : 0;\n"
"  }\n"
"#endif\n"
"}\n"
"\n";

/* CUDA device code: NVRTC has no C library headers, so the fixed width
 * types and their limits are spelled out; float16 and bfloat16 convert
 * with the CUDA headers' round-to-nearest-even intrinsics. */
const char codegen_cuda_prelude[] =
"#include <cuda_fp16.h>\n"
"#include <cuda_bf16.h>\n"
"typedef signed char int8_t;\n"
"typedef short int16_t;\n"
"typedef int int32_t;\n"
"typedef long long int64_t;\n"
"typedef unsigned char uint8_t;\n"
"typedef unsigned short uint16_t;\n"
"typedef unsigned int uint32_t;\n"
"typedef unsigned long long uint64_t;\n"
"#define INT8_MIN (-128)\n"
"#define INT8_MAX 127\n"
"#define INT16_MIN (-32768)\n"
"#define INT16_MAX 32767\n"
"#define INT32_MIN (-2147483647 - 1)\n"
"#define INT32_MAX 2147483647\n"
"#define INT64_MIN (-9223372036854775807LL - 1)\n"
"#define INT64_MAX 9223372036854775807LL\n"
"#define UINT8_MAX 255\n"
"#define UINT16_MAX 65535\n"
"#define UINT32_MAX 4294967295u\n"
"#define UINT64_MAX 18446744073709551615ull\n"
"#define INT64_C(x) x##LL\n"
"#define UINT64_C(x) x##ULL\n"
"#define NAN __int_as_float(0x7fc00000)\n"
"#define INFINITY __int_as_float(0x7f800000)\n"
"#define LOOM_INLINE __device__ __forceinline__ /* inline: no unused warnings */\n"
"template <class TO, class FROM> __device__ __forceinline__ TO loom_bits(FROM x) {\n"
"  TO r; memcpy(&r, &x, sizeof r); return r;\n"
"}\n"
"#define LOOM_BITS(TO, FROM, x) loom_bits<TO, FROM>(x)\n"
"\n"
PRELUDE_OPS
"\n"
"LOOM_INLINE float loom_f16_load(uint16_t h) { return __half2float(__ushort_as_half(h)); }\n"
"LOOM_INLINE uint16_t loom_f16_storef(float x) { return __half_as_ushort(__float2half_rn(x)); }\n"
"LOOM_INLINE uint16_t loom_f16_store(double x) { return __half_as_ushort(__double2half(x)); }\n"
"LOOM_INLINE float loom_f16rf(float x) { return loom_f16_load(loom_f16_storef(x)); }\n"
"LOOM_INLINE float loom_f16r(double x) { return loom_f16_load(loom_f16_store(x)); }\n"
"LOOM_INLINE float loom_bf16_load(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }\n"
"LOOM_INLINE uint16_t loom_bf16_store(double x) {\n"
"  return __bfloat16_as_ushort(__double2bfloat16(x));\n"
"}\n"
"LOOM_INLINE float loom_bf16r(double x) { return loom_bf16_load(loom_bf16_store(x)); }\n"
"\n";
