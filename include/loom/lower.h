/* Lowering: from scheduled TensorIR to the flat loop programs the code
 * generators print. The result has no blocks and no vector expressions, and
 * every access goes through a one-dimensional buffer:
 *
 *   - a block becomes its body under LET bindings of its iter vars, guarded
 *     by its predicate; its init runs under the condition that every reduce
 *     iter var is at the start of its domain; its buffers become ALLOCATE
 *     statements; a match_buffer view becomes accesses to the buffer it views;
 *   - A[i, j] becomes A_flat[elem_offset + i * stride0 + j * stride1], with
 *     row-major strides where the buffer declares none; the flat buffer keeps
 *     the data variable of the buffer it flattens;
 *   - a statement holding vector expressions (T.Ramp, T.Broadcast, vector
 *     loads and arithmetic) becomes a vectorized loop over its lanes, which
 *     the C compiler turns back into vector code;
 *   - integer index arithmetic is simplified under the loop ranges;
 *   - before all that, each allocation moves down to the lowest loop or
 *     block holding its uses (where every iteration writes what it reads)
 *     and shrinks to the region they touch there, its indices offset by the
 *     region's minimum: a cache tile under the tile loops becomes a small
 *     array a code generator can keep on the stack or in registers.
 *
 * Parameter buffers keep their declared shapes in the function's params: a
 * code generator binds the shape variables of a parameter (those that are
 * not scalar parameters themselves) from the array it is given. Layout
 * variables nobody defines (a fresh elem_offset, symbolic strides) are bound
 * by LET at the top of their scope, to 0 and to row-major strides, as the
 * interpreter does: arrays are passed compact. */
#ifndef LOOM_LOWER_H
#define LOOM_LOWER_H

#include "loom/ir.h"

/* ---- passes ----------------------------------------------------------------
 * Lowering is an ordered list of passes, each from a module to a module.
 * Loom's own, by name (loom_lower_pass_named):
 *
 *   "flatten"    allocations placed and compacted, then blocks removed and
 *                buffers flattened (the first three points above);
 *   "flatten-in-place"  the same, every allocation left where and as large
 *                as the program declares it;
 *   "scalarize"  statements holding vectors turned into loops over lanes.
 *
 * The C backend runs flatten then scalarize (loom_lower_func). Another
 * backend runs its own list: these passes with its own between or after
 * them (a host/device split, thread synchronization), each a struct like
 * these with a context of its own. */
typedef struct loom_lower_pass {
  const char *name;
  loom_status (*run)(const void *ctx, loom_arena *a, const loom_module *in,
                     LOOM_GIVE loom_module **out, loom_diag *d);
  const void *ctx;
} loom_lower_pass;

/* One of Loom's passes; NULL for an unknown name. */
LOOM_API const loom_lower_pass *loom_lower_pass_named(const char *name);

/* Runs passes[0..n) in order on m, in arena a; *out is m itself when n is
 * 0. Stops at the first pass that fails, whose d then says why. */
LOOM_API loom_status loom_lower_module(loom_arena *a, const loom_module *m,
                                       const loom_lower_pass *const *passes,
                                       int n, LOOM_GIVE loom_module **out,
                                       loom_diag *d);

/* ---- one function, as the C backend lowers it ------------------------------ */

/* Lowers f into new nodes in arena a (sharing nothing mutable with f).
 * Fails with d, located at the statement, on what the lowered form cannot
 * express: a match_buffer view with more dimensions than its region, a
 * vector of more lanes than LOOM_LOWER_MAX_LANES, a vector condition. */
LOOM_API loom_status loom_lower_func(loom_arena *a, const loom_func *f,
                                     LOOM_GIVE loom_func **out, loom_diag *d);

/* keep_allocations: leave every allocation where and as large as the
 * program declares it (for comparison; the default places and compacts). */
typedef struct loom_lower_options {
  bool keep_allocations;
} loom_lower_options;

/* loom_lower_func with options (NULL: the defaults). */
LOOM_API loom_status loom_lower_func_with(loom_arena *a, const loom_func *f,
                                          const loom_lower_options *opts,
                                          LOOM_GIVE loom_func **out,
                                          loom_diag *d);

#define LOOM_LOWER_MAX_LANES 64

/* ---- GPU kernels (src/lower/gpu.c, gpu_sync.c) -----------------------------
 * A function scheduled for a GPU (loops bound to blockIdx.* and threadIdx.*)
 * lowers to a host function and the kernels it launches. After the passes
 * above, each outermost thread-bound loop nest becomes a kernel; a statement
 * outside every such nest that touches memory becomes a kernel of one
 * thread (TensorIR's meaning is sequential: it runs once). Serial loops,
 * lets, assertions, conditions and global allocations around the kernels
 * stay on the host.
 *
 * In a kernel each bound loop becomes a LET of its variable to its start
 * plus the axis index (axes[k]); vthread loops stay serial loops. All loops
 * bound to one axis must have one extent (the launch extent). A store to
 * global or shared memory outside the loops of some axis the kernel uses is
 * made by the threads whose index on that axis is 0, so it happens once,
 * as the program says. __syncthreads() is placed where threads of a block
 * may read shared memory others wrote, or write what others still read
 * (gpu_sync.c). */
enum {
  LOOM_GPU_BLOCK_X, LOOM_GPU_BLOCK_Y, LOOM_GPU_BLOCK_Z,
  LOOM_GPU_THREAD_X, LOOM_GPU_THREAD_Y, LOOM_GPU_THREAD_Z,
  LOOM_GPU_AXES
};

/* "blockIdx.x" ... "threadIdx.z", by axis. */
LOOM_API const char *loom_lower_gpu_axis_name(int axis);

typedef struct loom_gpu_kernel {
  const char *name;             /* its symbol: "main_kernel0" */
  loom_stmt *body;              /* flat; the axis variables are free */
  loom_var *axes[LOOM_GPU_AXES];    /* NULL: the axis is not used (extent 1) */
  loom_expr *extents[LOOM_GPU_AXES];/* in the host's variables; NULL: 1 */
  /* What the body uses from outside, in this order: data pointers of
   * global buffers (handles), then integer and float scalars. */
  loom_var **params;
  int n_params;
  int64_t shared_bytes;         /* shared memory of a block, in all */
  /* Shared memory past the target's static 48 KiB, or any "shared.dyn"
   * buffer, makes every shared buffer of the kernel a slice of its dynamic
   * shared memory: the launch asks for dynamic_shared bytes (with the
   * opt-in attribute past 48 KiB), and buffer shared_vars[i] (its data
   * variable) starts shared_offsets[i] bytes in. 0 and none otherwise. */
  int64_t dynamic_shared;
  const loom_var **shared_vars;
  int64_t *shared_offsets;
  int n_shared;
  int threads;                  /* per block: the product of threadIdx extents */
  loom_loc loc;
} loom_gpu_kernel;

/* host: f's parameters, its body the host statements, where
 * T.evaluate(T.call_extern("void", "loom.launch", K)) launches kernels[K]. */
typedef struct loom_gpu_func {
  loom_func *host;
  loom_gpu_kernel *kernels;
  int n_kernels;
} loom_gpu_func;

/* The callee name of a launch in a host body. */
#define LOOM_GPU_LAUNCH "loom.launch"

/* The callee name of a product by cuBLAS in a host body: a nest the
 * dispatch pass marked "cublas_gemm" becomes
 *   T.call_extern("loom.cublas_gemm", AB_DTYPE, C_DTYPE, "NN"|"NT"|"TN"|"TT",
 *                 A.data, B.data, C.data, m, n, k, batch, b_batched, beta)
 * (include/loom/dispatch.h has the meaning of each). */
#define LOOM_GPU_CUBLAS "loom.cublas_gemm"

/* Such a call read back: the factors' and the result's dtypes, how A and
 * B are stored, the buffers' data (expressions of the host's variables)
 * and the product's extents. */
typedef struct loom_gpu_cublas {
  loom_dtype ab, c;
  bool trans_a, trans_b;           /* A stored [k, m], B stored [n, k] */
  const loom_expr *a, *b, *c_data; /* the buffers' data */
  int64_t m, n, k, batch;
  bool is_b_batched;
  bool is_accumulating;            /* beta 1: C += A B */
} loom_gpu_cublas;

/* Whether e is a LOOM_GPU_CUBLAS call, as the lowering writes it, with
 * *out describing it. */
LOOM_API bool loom_lower_gpu_cublas_read(const loom_expr *e, loom_gpu_cublas *out);

/* Whether the GPU lowering can split block b's reduction across threads:
 * its init and update are out = init; out = op(out, x), op one of + * min
 * max, x not reading out. What a rule asks before binding a reduce loop. */
LOOM_API bool loom_lower_gpu_can_reduce(const loom_block *b);

/* Lowers f for GPU target t into arena a. Fails with d, located at the
 * loop or block, on a kernel the target cannot run: threads per block, a
 * grid dimension or static shared memory past t's limits, one axis bound
 * with two extents, a thread extent that is not a constant. A buffer
 * allocated outside every kernel is global memory the host allocates,
 * whatever its scope: it outlives the kernels that use it. */
struct loom_target;
LOOM_API loom_status loom_lower_gpu(loom_arena *a, const loom_func *f,
                                    const struct loom_target *t,
                                    loom_gpu_func *out, loom_diag *d);

#endif
