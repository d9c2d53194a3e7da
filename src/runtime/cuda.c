/* The CUDA driver, opened at run time: Loom builds and runs where there is
 * no CUDA, and says so when asked for a GPU. Only the driver API is used
 * (no runtime library): a primary context on one device, device memory,
 * modules loaded from cubins, launches, and events for timing. */
#include "loom/runtime.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

enum { CU_DEVICE_ATTRIBUTE_MAJOR = 75, CU_DEVICE_ATTRIBUTE_MINOR = 76,
       CU_DEVICE_ATTRIBUTE_L2_SIZE = 38,
       CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED = 8 };

/* The driver functions Loom calls, with the versioned names libcuda
 * exports them under. */
#define CUDA_FUNCS(X)                                                          \
  X(cuInit, "cuInit", CUresult, (unsigned))                                    \
  X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                   \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int *, int, CUdevice)) \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char *, int, CUdevice))     \
  X(cuPrimaryRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext *, CUdevice)) \
  X(cuPrimaryRelease, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice))   \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                 \
  X(cuCtxSynchronize, "cuCtxSynchronize", CUresult, (void))                    \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))            \
  X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                        \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr, const void *, size_t)) \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void *, CUdeviceptr, size_t))  \
  X(cuMemsetD8, "cuMemsetD8_v2", CUresult, (CUdeviceptr, unsigned char, size_t)) \
  X(cuModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule *, const void *)) \
  X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                    \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction *, CUmodule, const char *)) \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction, int, int)) \
  X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))                                    \
  X(cuEventCreate, "cuEventCreate", CUresult, (CUevent *, unsigned))           \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))                  \
  X(cuEventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))             \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent))             \
  X(cuEventElapsedTime, "cuEventElapsedTime", CUresult, (float *, CUevent, CUevent)) \
  X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult, const char **))

struct loom_runtime_cuda {
  void *lib;
#define X(field, sym, ret, args) ret(*field) args;
  CUDA_FUNCS(X)
#undef X
  CUdevice dev;
  CUcontext ctx;
  int sm;
  int64_t l2_bytes;
  char name[128];
};

#define MODULE_FUNCS 64

struct loom_runtime_cuda_module {
  loom_runtime_cuda *cu;
  CUmodule mod;
  const char *names[MODULE_FUNCS]; /* functions looked up so far */
  CUfunction funcs[MODULE_FUNCS];
  int n_funcs;
};

static const char *const lib_names[] = {"libcuda.so.1", "libcuda.so"};

static loom_status cu_error(loom_runtime_cuda *cu, CUresult r, const char *what,
                            loom_diag *d) {
  const char *s = NULL;
  if (cu && cu->cuGetErrorString)
    cu->cuGetErrorString(r, &s);
  return loom_diag_error(d, (loom_loc){0}, "CUDA: %s failed: %s (error %d)", what,
                         s ? s : "unknown error", r);
}

#define CU(call, what)                                                         \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != 0)                                                               \
      return cu_error(cu, r_, what, d);                                        \
  } while (0)

loom_status loom_runtime_cuda_open(loom_runtime_cuda **out, loom_diag *d) {
  *out = NULL;
  loom_runtime_cuda *cu = calloc(1, sizeof *cu);
  if (!cu)
    return LOOM_NOMEM;
  for (size_t i = 0; i < sizeof lib_names / sizeof *lib_names && !cu->lib; i++)
    cu->lib = dlopen(lib_names[i], RTLD_NOW | RTLD_LOCAL);
  if (!cu->lib) {
    free(cu);
    return loom_diag_error(d, (loom_loc){0}, "no GPU here: the CUDA driver "
                           "(libcuda.so.1) is not installed");
  }
  bool is_whole = true;
#define X(field, sym, ret, args) \
  is_whole &= (*(void **)&cu->field = dlsym(cu->lib, sym)) != NULL;
  CUDA_FUNCS(X)
#undef X
  loom_status st = LOOM_OK;
  CUresult r;
  if (!is_whole)
    st = loom_diag_error(d, (loom_loc){0}, "the CUDA driver lacks functions Loom "
                         "needs; it is older than CUDA 11");
  else if ((r = cu->cuInit(0)) != 0)
    st = r == 100 ? loom_diag_error(d, (loom_loc){0}, "no GPU here: the CUDA driver "
                                    "finds no device")
                  : cu_error(cu, r, "cuInit", d);
  else if ((r = cu->cuDeviceGet(&cu->dev, 0)) != 0)
    st = cu_error(cu, r, "cuDeviceGet", d);
  else if ((r = cu->cuPrimaryRetain(&cu->ctx, cu->dev)) != 0)
    st = cu_error(cu, r, "cuDevicePrimaryCtxRetain", d);
  else if ((r = cu->cuCtxSetCurrent(cu->ctx)) != 0)
    st = cu_error(cu, r, "cuCtxSetCurrent", d);
  if (st != LOOM_OK) {
    if (cu->ctx)
      cu->cuPrimaryRelease(cu->dev);
    dlclose(cu->lib);
    free(cu);
    return st;
  }
  int major = 0, minor = 0, l2 = 0;
  cu->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_MAJOR, cu->dev);
  cu->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_MINOR, cu->dev);
  cu->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_SIZE, cu->dev);
  cu->cuDeviceGetName(cu->name, sizeof cu->name, cu->dev);
  cu->sm = major * 10 + minor;
  cu->l2_bytes = l2;
  *out = cu;
  return LOOM_OK;
}

void loom_runtime_cuda_close(loom_runtime_cuda *cu) {
  if (!cu)
    return;
  cu->cuCtxSynchronize();
  cu->cuPrimaryRelease(cu->dev);
  /* The library stays loaded: its threads may outlive the context. */
  free(cu);
}

int loom_runtime_cuda_sm(const loom_runtime_cuda *cu) { return cu->sm; }
const char *loom_runtime_cuda_name(const loom_runtime_cuda *cu) { return cu->name; }

loom_status loom_runtime_cuda_alloc(loom_runtime_cuda *cu, size_t n,
                                    uint64_t *ptr, loom_diag *d) {
  CUdeviceptr p = 0;
  CUresult r = cu->cuMemAlloc(&p, n ? n : 1);
  if (r == 2) /* CUDA_ERROR_OUT_OF_MEMORY */
    return loom_diag_error(d, (loom_loc){0}, "the GPU is out of memory: %zu bytes "
                           "asked for", n);
  CU(r, "cuMemAlloc");
  *ptr = p;
  return LOOM_OK;
}

void loom_runtime_cuda_free(loom_runtime_cuda *cu, uint64_t ptr) {
  if (ptr)
    cu->cuMemFree(ptr);
}

loom_status loom_runtime_cuda_upload(loom_runtime_cuda *cu, uint64_t dst,
                                     const void *src, size_t n, loom_diag *d) {
  if (n)
    CU(cu->cuMemcpyHtoD(dst, src, n), "copying to the GPU");
  return LOOM_OK;
}

loom_status loom_runtime_cuda_download(loom_runtime_cuda *cu, void *dst,
                                       uint64_t src, size_t n, loom_diag *d) {
  if (n)
    CU(cu->cuMemcpyDtoH(dst, src, n), "copying from the GPU");
  return LOOM_OK;
}

loom_status loom_runtime_cuda_sync(loom_runtime_cuda *cu, loom_diag *d) {
  CU(cu->cuCtxSynchronize(), "running a kernel");
  return LOOM_OK;
}

loom_status loom_runtime_cuda_load(loom_runtime_cuda *cu, const void *image,
                                   loom_runtime_cuda_module **out, loom_diag *d) {
  loom_runtime_cuda_module *m = calloc(1, sizeof *m);
  if (!m)
    return LOOM_NOMEM;
  CUresult r = cu->cuModuleLoadData(&m->mod, image);
  if (r != 0) {
    free(m);
    return cu_error(cu, r, "loading the cubin", d);
  }
  m->cu = cu;
  *out = m;
  return LOOM_OK;
}

void loom_runtime_cuda_unload(loom_runtime_cuda_module *m) {
  if (!m)
    return;
  m->cu->cuModuleUnload(m->mod);
  free(m);
}

static loom_status function(loom_runtime_cuda_module *m, const char *name,
                            CUfunction *out, loom_diag *d) {
  loom_runtime_cuda *cu = m->cu;
  for (int i = 0; i < m->n_funcs; i++)
    if (m->names[i] == name || !strcmp(m->names[i], name)) {
      *out = m->funcs[i];
      return LOOM_OK;
    }
  CUfunction f;
  CU(cu->cuModuleGetFunction(&f, m->mod, name), "finding a kernel in the cubin");
  if (m->n_funcs < MODULE_FUNCS) {
    m->names[m->n_funcs] = name;
    m->funcs[m->n_funcs++] = f;
  }
  *out = f;
  return LOOM_OK;
}

loom_status loom_runtime_cuda_launch(loom_runtime_cuda_module *m, const char *name,
                                     const int64_t grid[3], const int block[3],
                                     int dynamic_shared, void **params,
                                     loom_diag *d) {
  loom_runtime_cuda *cu = m->cu;
  CUfunction f = NULL;
  TRY(function(m, name, &f, d));
  for (int i = 0; i < 3; i++)
    if (grid[i] < 1 || grid[i] > (i ? 65535 : 2147483647))
      return loom_diag_error(d, (loom_loc){0}, "kernel %s: grid dimension %d is "
                             "%lld, outside [1, %d]", name, i, (long long)grid[i],
                             i ? 65535 : 2147483647);
  if (dynamic_shared > 48 * 1024)
    CU(cu->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED, dynamic_shared),
       "asking for dynamic shared memory");
  CU(cu->cuLaunchKernel(f, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2],
                        (unsigned)block[0], (unsigned)block[1], (unsigned)block[2],
                        (unsigned)dynamic_shared, NULL, params, NULL),
     "launching a kernel");
  return LOOM_OK;
}

/* Each measurement: the L2 cache overwritten (when asked), then `number`
 * calls between two events. */
loom_status loom_runtime_cuda_time(loom_runtime_cuda *cu,
                                   loom_status (*call)(void *ctx, loom_diag *d),
                                   void *ctx, const loom_runtime_timer_config *cfg,
                                   loom_runtime_timing *out, loom_diag *d) {
  loom_runtime_timer_config c = cfg ? *cfg : loom_runtime_timer_default();
  if (c.repeat < 1)
    c.repeat = 1;
  if (c.number < 1)
    c.number = 1;
  double *ms = calloc((size_t)c.repeat, sizeof *ms);
  if (!ms)
    return LOOM_NOMEM;
  CUdeviceptr flush = 0;
  size_t flush_n = (size_t)(cu->l2_bytes > 0 ? 2 * cu->l2_bytes : 128 << 20);
  CUevent start = NULL, stop = NULL;
  loom_status st = LOOM_OK;
  CUresult r = 0;
  if (c.flush_cache && (r = cu->cuMemAlloc(&flush, flush_n)) != 0)
    st = cu_error(cu, r, "allocating the L2 flush buffer", d);
  if (st == LOOM_OK && ((r = cu->cuEventCreate(&start, 0)) != 0 ||
                        (r = cu->cuEventCreate(&stop, 0)) != 0))
    st = cu_error(cu, r, "cuEventCreate", d);
  for (int i = 0; i < c.warmup && st == LOOM_OK; i++)
    st = call(ctx, d);
  for (int k = 0; k < c.repeat && st == LOOM_OK; k++) {
    if (flush && (r = cu->cuMemsetD8(flush, (unsigned char)k, flush_n)) != 0) {
      st = cu_error(cu, r, "flushing the L2 cache", d);
      break;
    }
    if ((r = cu->cuEventRecord(start, NULL)) != 0) {
      st = cu_error(cu, r, "cuEventRecord", d);
      break;
    }
    for (int i = 0; i < c.number && st == LOOM_OK; i++)
      st = call(ctx, d);
    float e = 0;
    if (st == LOOM_OK && ((r = cu->cuEventRecord(stop, NULL)) != 0 ||
                          (r = cu->cuEventSynchronize(stop)) != 0 ||
                          (r = cu->cuEventElapsedTime(&e, start, stop)) != 0))
      st = cu_error(cu, r, "running a kernel", d);
    ms[k] = (double)e / c.number;
  }
  if (st == LOOM_OK)
    loom_runtime_timing_of(ms, c.repeat, c.number, out);
  if (start)
    cu->cuEventDestroy(start);
  if (stop)
    cu->cuEventDestroy(stop);
  if (flush)
    cu->cuMemFree(flush);
  free(ms);
  return st;
}
