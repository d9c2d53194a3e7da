/* cuBLAS, opened at run time as the driver is (cuda.c): the products the
 * dispatch pass gives it on a cuda target. Row-major products are asked of
 * column-major cuBLAS as their transposes, C^T = B^T A^T, which read the
 * same memory without a copy. */
#include "loom/runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;
typedef struct cublasContext *cublasHandle_t;

/* cuBLAS's enumerations (cublas_api.h, library_types.h), the values the
 * library takes. */
enum { OP_N = 0, OP_T = 1 };
enum { R_32F = 0, R_64F = 1, R_16F = 2, R_16BF = 14 };
enum { COMPUTE_16F = 64, COMPUTE_32F = 68, COMPUTE_64F = 70 };
enum { GEMM_DEFAULT = -1 };

#define CUBLAS_FUNCS(X)                                                          \
  X(create, "cublasCreate_v2", cublasStatus_t, (cublasHandle_t *))               \
  X(destroy, "cublasDestroy_v2", cublasStatus_t, (cublasHandle_t))               \
  X(status_string, "cublasGetStatusString", const char *, (cublasStatus_t))      \
  X(gemm, "cublasGemmStridedBatchedEx", cublasStatus_t,                          \
    (cublasHandle_t, int, int, int, int, int, const void *, const void *, int, int, \
     long long, const void *, int, int, long long, const void *, void *, int, int, \
     long long, int, int, int))

struct loom_runtime_cublas {
  void *lib;
#define X(field, sym, ret, args) ret(*field) args;
  CUBLAS_FUNCS(X)
#undef X
  cublasHandle_t handle;
};

static const char *const lib_names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
                                        "libcublas.so", "/usr/local/cuda/lib64/libcublas.so"};

loom_status loom_runtime_cublas_open(loom_runtime_cublas **out, loom_diag *d) {
  *out = NULL;
  loom_runtime_cublas *b = calloc(1, sizeof *b);
  if (!b)
    return LOOM_NOMEM;
  const char *env = getenv("LOOM_CUBLAS");
  if (env && *env)
    b->lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
  for (size_t i = 0; !(env && *env) && i < sizeof lib_names / sizeof *lib_names && !b->lib; i++)
    b->lib = dlopen(lib_names[i], RTLD_NOW | RTLD_LOCAL);
  if (!b->lib) {
    free(b);
    return loom_diag_error(d, (loom_loc){0}, "cuBLAS is not installed here (%s not found); "
                           "install the CUDA toolkit's libcublas, or set LOOM_CUBLAS to its "
                           "path, or leave the dispatch pass out of the pipeline",
                           env && *env ? env : "libcublas.so");
  }
  bool is_whole = true;
#define X(field, sym, ret, args) \
  is_whole &= (*(void **)&b->field = dlsym(b->lib, sym)) != NULL;
  CUBLAS_FUNCS(X)
#undef X
  cublasStatus_t r = 0;
  if (!is_whole || (r = b->create(&b->handle)) != 0) {
    loom_status st = is_whole ? loom_diag_error(d, (loom_loc){0}, "cuBLAS: cublasCreate failed: "
                                                "%s (status %d)", b->status_string(r), r)
                              : loom_diag_error(d, (loom_loc){0}, "the cuBLAS found lacks "
                                                "functions Loom needs; it is older than CUDA 11");
    dlclose(b->lib);
    free(b);
    return st;
  }
  *out = b;
  return LOOM_OK;
}

void loom_runtime_cublas_close(loom_runtime_cublas *b) {
  if (!b)
    return;
  b->destroy(b->handle);
  dlclose(b->lib);
  free(b);
}

/* cuBLAS's name of dtype t; -1 when it has none here. */
static int data_type(loom_dtype t) {
  if (t.lanes != 1 || t.bits == 0)
    return -1;
  if (t.code == LOOM_DT_BFLOAT && t.bits == 16)
    return R_16BF;
  if (t.code != LOOM_DT_FLOAT)
    return -1;
  return t.bits == 16 ? R_16F : t.bits == 32 ? R_32F : t.bits == 64 ? R_64F : -1;
}

loom_status loom_runtime_cublas_gemm(loom_runtime_cublas *b, const loom_runtime_gemm *g,
                                     loom_diag *d) {
  int ab = data_type(g->ab), c = data_type(g->c_dtype);
  if (ab < 0 || c < 0 || (ab != c && c != R_32F) || (ab == R_16BF && c != R_32F))
    return loom_diag_error(d, (loom_loc){0}, "cuBLAS has no product of these dtypes here");
  if (g->m > 2147483647 || g->n > 2147483647 || g->k > 2147483647 || g->batch > 2147483647)
    return loom_diag_error(d, (loom_loc){0}, "a product past cuBLAS's int extents");
  /* The scaling factors in the compute type: float16's accumulates in
   * float16 (its bits 0x3c00 are 1.0), float64's in float64, the rest in
   * float32. */
  float f1 = 1, fb = g->is_accumulating ? 1 : 0;
  double d1 = 1, db = fb;
  uint16_t h1 = 0x3c00, hb = g->is_accumulating ? 0x3c00 : 0;
  const void *alpha = &f1, *beta = &fb;
  int compute = COMPUTE_32F;
  if (c == R_64F) {
    alpha = &d1, beta = &db, compute = COMPUTE_64F;
  } else if (c == R_16F) {
    alpha = &h1, beta = &hb, compute = COMPUTE_16F;
  }
  int m = (int)g->m, n = (int)g->n, k = (int)g->k;
  long long sa = (long long)g->m * g->k, sb = g->is_b_batched ? (long long)g->k * g->n : 0,
            sc = (long long)g->m * g->n;
  /* C^T[n, m] = op(B)^T op(A)^T, column-major: B's memory first. */
  cublasStatus_t r = b->gemm(b->handle, g->trans_b ? OP_T : OP_N, g->trans_a ? OP_T : OP_N,
                             n, m, k, alpha, (const void *)(uintptr_t)g->b, ab,
                             g->trans_b ? k : n, sb, (const void *)(uintptr_t)g->a, ab,
                             g->trans_a ? m : k, sa, beta, (void *)(uintptr_t)g->c, c, n, sc,
                             (int)g->batch, compute, GEMM_DEFAULT);
  if (r != 0)
    return loom_diag_error(d, (loom_loc){0}, "cuBLAS: cublasGemmStridedBatchedEx failed: %s "
                           "(status %d)", b->status_string(r), r);
  return LOOM_OK;
}
