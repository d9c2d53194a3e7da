/* Running networks: a graph function of a module (ir.h, loom_graph) built
 * and run call by call, the tensors it makes along the way planned into a
 * few buffers that later tensors reuse once nothing reads them any more. The
 * interpreter runs the same graph as the oracle `--verify` compares with. */
#ifndef LOOM_NET_H
#define LOOM_NET_H

#include "loom/ir.h"
#include "loom/target.h"

typedef struct loom_net loom_net;

/* Tensors one call may pass, its result aside. */
#define LOOM_NET_MAX_ARGS 64

/* The bytes of a tensor of info t. */
LOOM_API size_t loom_net_bytes(const loom_tensor_info *t);

/* Builds g of m for target t (on a cpu target the C backend compiles every
 * prim func g calls, once each; on cuda the CUDA backend, and the graph
 * runs on the GPU of the calling process) and plans its memory. Fails with
 * d when g does not verify or a function cannot be built (naming it). */
LOOM_API loom_status loom_net_build(const loom_module *m, const loom_graph *g,
                                    const loom_target *t, LOOM_GIVE loom_net **out,
                                    loom_diag *d);
LOOM_API void loom_net_free(LOOM_TAKE loom_net *n);

/* Runs the built graph: params[i] is the data of parameter i and outputs[i]
 * receives output i (dense, row-major, as the values' infos say). Fails
 * with d naming the call whose kernel failed. */
LOOM_API loom_status loom_net_run(loom_net *n, const void *const *params,
                                  void *const *outputs, loom_diag *d);

/* loom_net_run, adding the time each call's kernel took, in milliseconds,
 * to call_ms[k] (g's calls in order). */
LOOM_API loom_status loom_net_profile(loom_net *n, const void *const *params,
                                      void *const *outputs, double *call_ms, loom_diag *d);

/* Parameters first.. of n hold the same data at every run (a model's
 * weights): on a GPU they are uploaded at the first run only. */
LOOM_API void loom_net_keep_params(loom_net *n, int first);

/* What the plan holds: the bytes of its buffers, and what one buffer per
 * tensor would have taken. */
LOOM_API void loom_net_memory(const loom_net *n, size_t *planned, size_t *unplanned);

/* The same graph computed by the reference interpreter, call by call. */
LOOM_API loom_status loom_net_interp(const loom_module *m, const loom_graph *g,
                                     const void *const *params, void *const *outputs,
                                     loom_diag *d);

/* ---- .npy files (src/net/npy.c) ----------------------------------------------
 * NumPy's format, little-endian and C order: read into arena a with its info,
 * or written from data of info t. A file Loom cannot read is an error that
 * says why (a big-endian or Fortran-order array, a dtype it lacks). */
LOOM_API loom_status loom_net_npy_read(const char *path, loom_arena *a,
                                       loom_tensor_info *info, void **data,
                                       loom_diag *d);
LOOM_API loom_status loom_net_npy_write(const char *path, const loom_tensor_info *t,
                                        const void *data, loom_diag *d);

#endif
