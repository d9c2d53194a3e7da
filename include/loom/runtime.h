/* The host runtime generated kernels run on: aligned arrays with deterministic
 * contents, compiling C source into a loaded shared object, timing calls, and
 * running code in a child process so that a kernel that crashes or hangs is
 * reported instead of taking the caller down. Nothing here keeps state of its
 * own between calls; every call can be made from parallel workers on their
 * own objects. */
#ifndef LOOM_RUNTIME_H
#define LOOM_RUNTIME_H

#include "loom/interp.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- arrays ----------------------------------------------------------------
 * Dense row-major host arrays laid out as the interpreter lays out its own:
 * each element takes the dtype's width in bytes (bool and types narrower than
 * a byte take one byte; float16 and bfloat16 are their raw 16 bits). The data
 * is 64-byte aligned and zero-filled. LOOM_RUNTIME_SHARED puts it in a
 * MAP_SHARED|MAP_ANONYMOUS mapping (page-aligned), so what a forked child
 * writes is seen by the parent. The array owns shape and data. */
typedef struct loom_runtime_array {
  loom_dtype dtype; /* scalar (lanes == 1) int, uint, float, bfloat or bool */
  int ndim;
  int64_t *shape;
  int64_t n_elems;
  size_t n_bytes;   /* n_elems times the element width */
  void *data;       /* never NULL, even when n_elems == 0 */
  unsigned flags;   /* LOOM_RUNTIME_* flags it was made with */
} loom_runtime_array;

enum { LOOM_RUNTIME_SHARED = 1 };

/* A zero-filled array; NULL when the dtype has no storage (handle, void,
 * vector lanes), a dimension is negative, the size overflows 2^40 bytes, or
 * memory runs out. */
LOOM_API LOOM_GIVE loom_runtime_array *
loom_runtime_array_new(loom_dtype t, const int64_t *shape, int ndim,
                       unsigned flags);
LOOM_API void loom_runtime_array_free(LOOM_TAKE loom_runtime_array *a);

/* Fills with deterministic data drawn from a loom_rng seeded with seed:
 * floats uniform in [-1, 1) rounded to the dtype, signed ints in [-8, 8),
 * unsigned in [0, 16) (uint1 in [0, 2)), bool 0/1. The bytes are exactly
 * those loom_interp_fill_random writes from a generator seeded the same way,
 * so a compiled kernel and the interpreter can start from the same inputs. */
LOOM_API void loom_runtime_array_fill(loom_runtime_array *a, uint64_t seed);

/* A view of a as an interpreter array (borrowing shape and data; never free
 * it), for loom_interp_compare and loom_interp_run on the same bytes. */
LOOM_API loom_interp_array
loom_runtime_array_view(LOOM_KEEP loom_runtime_array *a);

/* ---- compiling ----------------------------------------------------------- */

typedef struct loom_runtime_cc_options {
  const char *cc;     /* NULL: $CC, else "cc"; split on blanks ("ccache gcc") */
  const char *flags;  /* NULL: "-O3 -march=native"; split on blanks */
  bool openmp;        /* add -fopenmp */
  const char *tmpdir; /* where the private directory goes; NULL: $TMPDIR,
                         else /tmp */
  double timeout_ms;  /* 0: no limit; past it the compiler and everything it
                         started are killed and the compile fails */
} loom_runtime_cc_options;

/* A loaded shared object; its symbols stay valid until it is freed. */
typedef struct loom_runtime_lib loom_runtime_lib;

/* Compiles src[0..len) as C into a shared object and loads it. The source
 * goes into a private directory (mkdtemp), the compiler runs without a shell
 * (posix_spawn, in a process group of its own, stdin from /dev/null, its
 * output captured), the result is dlopen()ed RTLD_NOW|RTLD_LOCAL, and the
 * files and the directory are removed whatever the outcome. opt may be NULL
 * for the defaults. On a compile failure returns LOOM_ERROR with a diagnostic
 * whose notes carry the first lines of the compiler's output; LOOM_ERROR too
 * for a compiler that cannot be started or times out and for a library that
 * does not load. *out is NULL on failure. compile_ms (may be NULL) gets the
 * wall time of the whole operation, failed or not. Safe to call from several
 * threads at once. */
LOOM_API loom_status loom_runtime_compile(const char *src, size_t len,
                                          const loom_runtime_cc_options *opt,
                                          LOOM_GIVE loom_runtime_lib **out,
                                          double *compile_ms, loom_diag *d);
/* The address of an exported symbol, or NULL if absent. */
LOOM_API void *loom_runtime_lib_symbol(loom_runtime_lib *lib, const char *name);
LOOM_API void loom_runtime_lib_free(LOOM_TAKE loom_runtime_lib *lib);

/* ---- CUDA C to cubins (src/runtime/nvrtc.c) ---------------------------------
 * NVRTC is opened at run time: $LOOM_NVRTC (the library's path) when set,
 * else libnvrtc.so.13, .12 or libnvrtc.so on the loader's path, else the
 * CUDA toolkit's (/usr/local/cuda/lib64). The CUDA headers kernels include
 * (cuda_fp16.h, cuda_bf16.h) come from $LOOM_CUDA_INCLUDE, else the include
 * folder beside the library (LIB/../include), where both the toolkit and
 * the nvidia-cuda-runtime wheel keep them. No GPU is needed to compile. */
typedef struct loom_runtime_nvrtc loom_runtime_nvrtc;

/* Opens NVRTC; LOOM_ERROR, saying where it looked, when it is not there. */
LOOM_API loom_status loom_runtime_nvrtc_open(LOOM_GIVE loom_runtime_nvrtc **out,
                                             loom_diag *d);
LOOM_API void loom_runtime_nvrtc_close(LOOM_TAKE loom_runtime_nvrtc *nv);
/* The opened library's path and its version, for messages. */
LOOM_API const char *loom_runtime_nvrtc_path(const loom_runtime_nvrtc *nv);
LOOM_API void loom_runtime_nvrtc_version(const loom_runtime_nvrtc *nv,
                                         int *major, int *minor);

/* A compiled module, and what ptxas said of it. */
typedef struct loom_runtime_cubin {
  void *data;           /* heap: an ELF image for cuModuleLoadData */
  size_t size;
  char *log;            /* heap: NVRTC's and ptxas's messages */
  int max_registers;    /* the most any kernel in it uses per thread */
  int64_t spill_bytes;  /* spill stores and loads, summed over its kernels */
} loom_runtime_cubin;

/* Compiles the CUDA C src (named name in messages) to a cubin for compute
 * capability sm (80: sm_80). A compile error is LOOM_ERROR with NVRTC's log
 * in d's notes; LOOM_NOMEM when memory runs out. Safe to call from several
 * threads at once. */
LOOM_API loom_status loom_runtime_nvrtc_compile(loom_runtime_nvrtc *nv,
                                                const char *src,
                                                const char *name, int sm,
                                                loom_runtime_cubin *out,
                                                loom_diag *d);
LOOM_API void loom_runtime_cubin_free(loom_runtime_cubin *c);
/* The same compile in a child process. NVRTC leaves state behind in the
 * process that compiles (seen with NVRTC 13 on an H200): a process forked
 * from it afterwards cannot initialize the CUDA driver. A program that runs
 * kernels in children (the runner) compiles this way; a crash in NVRTC is
 * then a diagnostic too. */
LOOM_API loom_status loom_runtime_nvrtc_compile_apart(loom_runtime_nvrtc *nv,
                                                      const char *src,
                                                      const char *name, int sm,
                                                      loom_runtime_cubin *out,
                                                      loom_diag *d);
/* loom_runtime_nvrtc_compile_apart through a cache of cubins on disk
 * (src/runtime/nvrtc_cache.c): $LOOM_CUBIN_CACHE, else
 * $XDG_CACHE_HOME/loom/cubin, else ~/.cache/loom/cubin, keyed by the
 * source, the architecture and NVRTC's version; LOOM_CUBIN_CACHE="" turns
 * it off. A cached cubin's log says it came from the cache. */
LOOM_API loom_status loom_runtime_nvrtc_compile_cached(loom_runtime_nvrtc *nv,
                                                       const char *src,
                                                       const char *name, int sm,
                                                       loom_runtime_cubin *out,
                                                       loom_diag *d);


/* ---- timing ----------------------------------------------------------------
 * warmup calls first; then repeat measurements, each running the call number
 * times and dividing. number == 0 picks it so that one measurement lasts at
 * least min_repeat_ms. flush_cache writes over a buffer twice the size of
 * the largest cache (at most 1 GiB) before each measurement, so each starts
 * cold; the buffer is allocated per loom_runtime_time call. */
typedef struct loom_runtime_timer_config {
  int warmup;
  int repeat;
  int number;
  double min_repeat_ms;
  bool flush_cache;
} loom_runtime_timer_config;

/* Per-call times in milliseconds over the measurements. stddev is the sample
 * standard deviation (0 for one measurement). */
typedef struct loom_runtime_timing {
  double median_ms, mean_ms, min_ms, max_ms, stddev_ms;
  int repeat, number;
} loom_runtime_timing;

/* warmup 1, repeat 5, number 0, min_repeat_ms 10, no flush. */
LOOM_API loom_runtime_timer_config loom_runtime_timer_default(void);

/* Times call(ctx) on CLOCK_MONOTONIC. cfg may be NULL for the defaults. A
 * call returning nonzero stops timing with LOOM_ERROR naming the value; an
 * invalid configuration is LOOM_ERROR too, LOOM_NOMEM when the flush buffer
 * cannot be had. */
LOOM_API loom_status loom_runtime_time(int (*call)(void *ctx), void *ctx,
                                       const loom_runtime_timer_config *cfg,
                                       loom_runtime_timing *out, loom_diag *d);

/* The statistics of repeat per-call times (sorted in place), each the mean
 * of number calls. */
LOOM_API void loom_runtime_timing_of(double *per_call, int repeat, int number,
                                     loom_runtime_timing *out);

/* Size in bytes of the largest cache level, read from sysconf or
 * /sys/devices/system/cpu; 64 MiB when neither tells. */
LOOM_API size_t loom_runtime_cache_bytes(void);

/* ---- the CUDA driver (src/runtime/cuda.c) ----------------------------------
 * libcuda is opened at run time; without it, or without a device, open
 * fails saying "no GPU here". One primary context on device 0, made current
 * in the calling thread. A kernel that faults leaves the context unusable:
 * run kernels under test in a child process (loom_runtime_run_child),
 * opening the driver there, never in the parent before a fork. */
typedef struct loom_runtime_cuda loom_runtime_cuda;
typedef struct loom_runtime_cuda_module loom_runtime_cuda_module;

LOOM_API loom_status loom_runtime_cuda_open(LOOM_GIVE loom_runtime_cuda **out,
                                            loom_diag *d);
LOOM_API void loom_runtime_cuda_close(LOOM_TAKE loom_runtime_cuda *cu);
/* The device's compute capability (90 for sm_90) and name. */
LOOM_API int loom_runtime_cuda_sm(const loom_runtime_cuda *cu);
LOOM_API const char *loom_runtime_cuda_name(const loom_runtime_cuda *cu);

/* Device memory, as the address the kernels take. Out of memory is a
 * diagnostic saying how much was asked for. */
LOOM_API loom_status loom_runtime_cuda_alloc(loom_runtime_cuda *cu, size_t n,
                                             uint64_t *ptr, loom_diag *d);
LOOM_API void loom_runtime_cuda_free(loom_runtime_cuda *cu, uint64_t ptr);
LOOM_API loom_status loom_runtime_cuda_upload(loom_runtime_cuda *cu,
                                              uint64_t dst, const void *src,
                                              size_t n, loom_diag *d);
LOOM_API loom_status loom_runtime_cuda_download(loom_runtime_cuda *cu,
                                                void *dst, uint64_t src,
                                                size_t n, loom_diag *d);
/* Waits for every launch; a kernel's fault surfaces here. */
LOOM_API loom_status loom_runtime_cuda_sync(loom_runtime_cuda *cu,
                                            loom_diag *d);

/* A cubin (loom_runtime_cubin.data) loaded for launching. */
LOOM_API loom_status loom_runtime_cuda_load(loom_runtime_cuda *cu,
                                            const void *image,
                                            LOOM_GIVE loom_runtime_cuda_module **out,
                                            loom_diag *d);
LOOM_API void loom_runtime_cuda_unload(LOOM_TAKE loom_runtime_cuda_module *m);
/* Launches kernel name of m (asynchronously) with params[i] pointing at
 * the value of its parameter i. Dynamic shared memory over 48 KiB is
 * asked for with the opt-in attribute first. */
LOOM_API loom_status loom_runtime_cuda_launch(loom_runtime_cuda_module *m,
                                              const char *name,
                                              const int64_t grid[3],
                                              const int block[3],
                                              int dynamic_shared, void **params,
                                              loom_diag *d);

/* Times call(ctx) with CUDA events: cfg's warmup calls, then cfg->repeat
 * measurements of cfg->number calls (at least 1 each; number 0 is read as
 * 1), each after the L2 cache is overwritten when cfg->flush_cache (as
 * MetaSchedule's GPU runner does). */
LOOM_API loom_status loom_runtime_cuda_time(
    loom_runtime_cuda *cu, loom_status (*call)(void *ctx, loom_diag *d),
    void *ctx, const loom_runtime_timer_config *cfg, loom_runtime_timing *out,
    loom_diag *d);

/* ---- cuBLAS (src/runtime/cublas.c) ------------------------------------------
 * libcublas is opened at run time, as the driver is: $LOOM_CUBLAS, else
 * libcublas.so.13, .12, .11 or libcublas.so on the loader's path or in
 * /usr/local/cuda/lib64. Its calls run on the current context's default
 * stream, where the kernels run and the events time them; open it after
 * loom_runtime_cuda_open, in the same thread. */
typedef struct loom_runtime_cublas loom_runtime_cublas;

LOOM_API loom_status loom_runtime_cublas_open(LOOM_GIVE loom_runtime_cublas **out,
                                              loom_diag *d);
LOOM_API void loom_runtime_cublas_close(LOOM_TAKE loom_runtime_cublas *b);

/* C (=|+=) op(A) op(B) over row-major device arrays, for each of batch
 * products (A and C batched, B too when is_b_batched), factors of dtype ab
 * and a result of dtype c: float32 or float64 throughout, float16 or
 * bfloat16 into float32 (accumulated in float32), float16 into float16
 * (accumulated in float16, as the program's own adds are). */
typedef struct loom_runtime_gemm {
  uint64_t a, b, c;
  loom_dtype ab, c_dtype;
  bool trans_a, trans_b; /* A stored [k, m], B stored [n, k] */
  int64_t m, n, k, batch;
  bool is_b_batched;
  bool is_accumulating;  /* C += A B; else C = A B */
} loom_runtime_gemm;

LOOM_API loom_status loom_runtime_cublas_gemm(loom_runtime_cublas *b,
                                              const loom_runtime_gemm *g, loom_diag *d);

/* ---- isolation -------------------------------------------------------------
 * loom_runtime_run_child forks; the child, in a process group of its own with
 * stdin from /dev/null and default handlers for the crash signals, runs
 * fn(ctx) and leaves with _exit (no stdio buffers inherited from the parent
 * are flushed): status 0 when fn returned 0, fn's value when in 1..255, 255
 * otherwise. On Linux the child also dies with the parent. The parent waits
 * at most timeout_ms (0: no limit), kills the child's whole process group
 * with SIGKILL when the time is up (and after the child ended, to take any
 * process it left behind), reaps the child and reports. Results travel back
 * through loom_runtime_shared_alloc memory or LOOM_RUNTIME_SHARED arrays.
 * The child holds only the forking thread: once the caller has run an OpenMP
 * parallel region itself, a child entering one waits for workers that do not
 * exist and times out, so OpenMP kernels are run only in children. */
typedef enum {
  LOOM_RUNTIME_CHILD_OK,     /* exited with status 0 */
  LOOM_RUNTIME_CHILD_EXIT,   /* exited with a nonzero status */
  LOOM_RUNTIME_CHILD_SIGNAL, /* killed by a signal (a crash) */
  LOOM_RUNTIME_CHILD_TIMEOUT /* ran past the limit and was killed */
} loom_runtime_child_kind;

typedef struct loom_runtime_child_result {
  loom_runtime_child_kind kind;
  int exit_code;     /* for EXIT */
  int signal;        /* for SIGNAL */
  double ms;         /* wall time from fork until the child was seen to end */
  double timeout_ms; /* the limit it ran under */
  int pid;           /* the child's process id; already reaped */
} loom_runtime_child_result;

/* LOOM_ERROR only when the child cannot be made or waited for (fork, pipe,
 * waitid failing); whatever the child does is reported in out. */
LOOM_API loom_status loom_runtime_run_child(int (*fn)(void *ctx), void *ctx,
                                            double timeout_ms,
                                            loom_runtime_child_result *out,
                                            loom_diag *d);

/* n zeroed bytes in a MAP_SHARED|MAP_ANONYMOUS mapping, seen by parent and
 * children alike; NULL on failure. Free with the same n. */
LOOM_API LOOM_GIVE void *loom_runtime_shared_alloc(size_t n);
LOOM_API void loom_runtime_shared_free(LOOM_TAKE void *p, size_t n);

/* Writes "ok", "exited with 3", "killed by signal 11 (SIGSEGV)" or
 * "timed out after 2000 ms" into buf (n bytes) and returns buf. */
LOOM_API const char *
loom_runtime_child_describe(const loom_runtime_child_result *r, char *buf,
                            size_t n);

#endif
