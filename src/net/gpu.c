/* A graph on a cuda target: the driver opened in this process at the first
 * run, the planned arena and a copy of each parameter and output in device
 * memory, and each call's host statements (loom_cuda_host) bound to the
 * device addresses of its tensors and run in order on the default stream,
 * so one call's kernels follow the last one's without a wait between. */
#include "net/net_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct net_gpu {
  loom_runtime_cuda *cu;
  loom_runtime_cublas *blas; /* shared by every function's host */
  loom_cuda_host **hosts;    /* per built function */
  int n_hosts;
  uint64_t arena;
  uint64_t *params, *outputs; /* device copies */
  bool is_loaded;             /* the kept parameters are on the device */
};

void net_gpu_free(net_gpu *gpu) {
  if (!gpu)
    return;
  for (int i = 0; i < gpu->n_hosts; i++)
    loom_tune_cuda_host_free(gpu->hosts[i]);
  free(gpu->hosts);
  if (gpu->cu) {
    if (gpu->arena)
      loom_runtime_cuda_free(gpu->cu, gpu->arena);
    loom_runtime_cublas_close(gpu->blas);
    loom_runtime_cuda_close(gpu->cu);
  }
  free(gpu->params);
  free(gpu->outputs);
  free(gpu);
}

/* Device memory of n bytes (at least one: a tensor of no elements still
 * has an address). */
static loom_status alloc(net_gpu *gpu, size_t n, uint64_t *out, loom_diag *d) {
  return loom_runtime_cuda_alloc(gpu->cu, n ? n : 1, out, d);
}

static loom_status start(loom_net *n, loom_diag *d) {
  const loom_graph *g = n->g;
  net_gpu *gpu = calloc(1, sizeof *gpu);
  if (!gpu)
    return LOOM_NOMEM;
  n->gpu = gpu;
  if (!(gpu->hosts = calloc((size_t)n->built.n + 1, sizeof *gpu->hosts)) ||
      !(gpu->params = calloc((size_t)g->n_params + 1, sizeof *gpu->params)) ||
      !(gpu->outputs = calloc((size_t)g->n_outputs + 1, sizeof *gpu->outputs)))
    return LOOM_NOMEM;
  TRY(loom_runtime_cuda_open(&gpu->cu, d));
  for (; gpu->n_hosts < n->built.n; gpu->n_hosts++)
    TRY(loom_tune_cuda_host_new(gpu->cu, n->built.items[gpu->n_hosts].kernel, &gpu->blas,
                                &gpu->hosts[gpu->n_hosts], d));
  if (n->arena_bytes)
    TRY(alloc(gpu, n->arena_bytes, &gpu->arena, d));
  for (int i = 0; i < g->n_params; i++)
    TRY(alloc(gpu, loom_net_bytes(&g->values[i].info), &gpu->params[i], d));
  for (int i = 0; i < g->n_outputs; i++)
    TRY(alloc(gpu, loom_net_bytes(&g->values[g->outputs[i]].info), &gpu->outputs[i], d));
  return LOOM_OK;
}

static uint64_t where(const loom_net *n, int v) {
  net_home h = n->homes[v];
  return h.kind == NET_PARAM ? n->gpu->params[h.index]
         : h.kind == NET_OUTPUT ? n->gpu->outputs[h.index]
                                : n->gpu->arena + h.offset;
}

loom_status net_gpu_run(loom_net *n, const void *const *params, void *const *outputs,
                        double *call_ms, loom_diag *d) {
  const loom_graph *g = n->g;
  if (!n->gpu) {
    loom_status st = start(n, d);
    if (st != LOOM_OK) {
      net_gpu_free(n->gpu);
      n->gpu = NULL;
      return st;
    }
  }
  net_gpu *gpu = n->gpu;
  for (int i = 0; i < g->n_params; i++)
    if (i < n->n_kept_from || !gpu->is_loaded)
      TRY(loom_runtime_cuda_upload(gpu->cu, gpu->params[i], params[i],
                                   loom_net_bytes(&g->values[i].info), d));
  gpu->is_loaded = true;
  uint64_t dev[LOOM_NET_MAX_ARGS + 1];
  const int64_t *shapes[LOOM_NET_MAX_ARGS + 1];
  for (int k = 0; k < g->n_calls; k++) {
    const loom_graph_call *c = &g->calls[k];
    for (int i = 0; i <= c->n_args; i++) {
      int v = net_call_value(c, i);
      dev[i] = where(n, v);
      shapes[i] = n->shapes[v];
    }
    loom_cuda_host *h = gpu->hosts[n->kernel_of[k]];
    double t0 = call_ms ? net_now_ms() : 0;
    loom_status st = loom_tune_cuda_host_bind(h, dev, shapes, NULL, d);
    if (st == LOOM_OK)
      st = loom_tune_cuda_host_call(h, d);
    if (st == LOOM_OK && call_ms)
      st = loom_runtime_cuda_sync(gpu->cu, d);
    if (call_ms)
      call_ms[k] += net_now_ms() - t0;
    if (st != LOOM_OK) {
      char why[512];
      snprintf(why, sizeof why, "%s", d->msg ? d->msg : "out of memory");
      loom_diag_free(d);
      loom_diag_init(d);
      return loom_diag_error(d, g->loc, "graph '%s', call %d (%s): %s", g->name, k, c->func,
                             why);
    }
  }
  TRY(loom_runtime_cuda_sync(gpu->cu, d));
  for (int i = 0; i < g->n_outputs; i++) {
    int v = g->outputs[i];
    TRY(loom_runtime_cuda_download(gpu->cu, outputs[i], where(n, v),
                                   loom_net_bytes(&g->values[v].info), d));
  }
  return LOOM_OK;
}
