/* The C backend: prints lowered TensorIR as one self-contained C file.
 *
 * Each function becomes
 *
 *   int32_t SYMBOL(void *const *args, const int64_t *const *shapes);
 *
 * where args[i] is the data pointer of buffer parameter i (dense, row-major,
 * elements of the buffer's dtype: bool as one byte, float16 and bfloat16 as
 * their raw 16 bits) or, for scalar parameter i, a pointer to an int64_t
 * (integers) or a double (floats); shapes[i] is the shape of buffer
 * parameter i, read for its symbolic dimensions. It returns 0, -1 when a
 * T.assert fails, -2 when two parameters disagree on a symbolic dimension,
 * -3 when its memory pool cannot grow, -4 when a library routine it calls
 * cannot be opened, -5 when the library refuses the call.
 * The file also defines loom_set_num_threads(int), which sets the OpenMP
 * thread count of parallel loops. Compile it with LOOM_CODEGEN_CFLAGS, and
 * -fopenmp for parallel loops. */
#ifndef LOOM_CODEGEN_H
#define LOOM_CODEGEN_H

#include "loom/ir.h"
#include "loom/lower.h"

/* Flags the generated code needs from the C compiler, beyond optimization
 * and target flags. */
#define LOOM_CODEGEN_CFLAGS "-std=gnu11 -fno-math-errno -fPIC"

/* The symbol of the function named name in a file from loom_codegen_c_module:
 * "loom_" followed by the name with every character outside [A-Za-z0-9]
 * written as _XX (hex), into buf. Returns buf, or NULL when n is too small. */
LOOM_API char *loom_codegen_c_symbol(const char *name, char *buf, size_t n);

/* What a kernel's return code means, for messages ("a T.assert failed");
 * "unknown" for a code no kernel returns. */
LOOM_API const char *loom_codegen_rc_str(int32_t rc);

/* Lowers every function of m and appends the C file to out. Fails with d on
 * what the C backend cannot express (an extern call, a vector let). */
LOOM_API loom_status loom_codegen_c_module(const loom_module *m, loom_buf *out,
                                           loom_diag *d);
/* The same for n functions given their own symbols (how a tuner batches
 * candidates that are all called "main" into one file). */
LOOM_API loom_status loom_codegen_c_funcs(const loom_func *const *funcs,
                                          const char *const *symbols, int n,
                                          loom_buf *out, loom_diag *d);

/* The CUDA C backend (src/codegen/cuda.c): appends to out the CUDA C file of
 * g's kernels, each `extern "C" __global__` with its parameters in the
 * order of loom_gpu_kernel.params (buffers as element pointers: float16 and
 * bfloat16 as their raw 16 bits, bool as bytes; scalars by value). Compile
 * it with NVRTC (loom_runtime_nvrtc_compile). */
LOOM_API loom_status loom_codegen_cuda(const loom_gpu_func *g, loom_buf *out,
                                       loom_diag *d);

#endif
