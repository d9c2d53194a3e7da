/* What the runtime's files share. */
#ifndef LOOM_NET_IMPL_H
#define LOOM_NET_IMPL_H

#include "loom/net.h"
#include "loom/tune.h"

/* Where each value of a graph lives while it runs: a parameter in the
 * caller's memory, an output in the caller's, every other value at an
 * offset of one arena, shared with values whose lives do not overlap. */
typedef enum {
  NET_PARAM,  /* index: the parameter */
  NET_OUTPUT, /* index: the output */
  NET_ARENA,  /* offset: into the arena */
} net_home_kind;

typedef struct net_home {
  net_home_kind kind;
  int index;
  size_t offset;
} net_home;

typedef struct net_gpu net_gpu;

struct loom_net {
  const loom_graph *g;
  loom_build_set built;
  int *kernel_of;   /* per call: its item in built */
  net_home *homes;  /* per value */
  char *arena;      /* NULL on a GPU: the device's (gpu) */
  size_t arena_bytes, unplanned;
  const int64_t **shapes; /* per value */
  bool is_cuda;
  int n_kept_from;  /* parameters from this one on hold the same data every run */
  net_gpu *gpu;     /* made at the first run on a GPU */
};

/* Plans g: homes[v] for every value; *arena_bytes gets the arena's size and
 * *unplanned what one buffer per intermediate would take. Fails only when
 * out of memory. */
loom_status net_plan(const loom_graph *g, net_home *homes, size_t *arena_bytes,
                     size_t *unplanned);

/* The value a call passes as argument i: its arguments in order, then its
 * result (i == n_args), as a prim func takes them. */
static inline int net_call_value(const loom_graph_call *c, int i) {
  return i < c->n_args ? c->args[i] : c->out;
}

/* A monotonic clock in milliseconds, for --profile's times. */
double net_now_ms(void);

/* ---- gpu.c: a graph on a cuda target --------------------------------------
 * At the first run the driver is opened in this process (never forked
 * after), each function's module loaded, the arena and a device copy of
 * every parameter and output allocated. Each run uploads the parameters
 * (those from n_kept_from on only at the first), runs every call's host
 * statements in order, waits, and downloads the outputs; call_ms (when
 * not NULL) gets each call's time, waited for alone. */
loom_status net_gpu_run(loom_net *n, const void *const *params, void *const *outputs,
                        double *call_ms, loom_diag *d);
void net_gpu_free(net_gpu *gpu);

#endif
