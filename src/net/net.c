/* Building and running a graph: the prim funcs it calls built once each by
 * the target's backend (loom_tune_build: the C backend for a cpu, CUDA C
 * and NVRTC for cuda), then called in order on the caller's tensors and
 * the planned arena (on a GPU, gpu.c: device copies of them). */
#include "net/net_impl.h"

#include "loom/codegen.h"
#include "loom/tune.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void loom_net_free(loom_net *n) {
  if (!n)
    return;
  if (n->built.items)
    loom_tune_build_free(&n->built);
  net_gpu_free(n->gpu);
  free(n->kernel_of);
  free(n->homes);
  free(n->arena);
  free(n->shapes);
  free(n);
}

/* The distinct prim funcs g calls, and for each call its index among them. */
static loom_status callees(const loom_module *m, const loom_graph *g, const loom_func **funcs,
                           int *n_funcs, int *kernel_of) {
  int n = 0;
  for (int k = 0; k < g->n_calls; k++) {
    const loom_func *f = loom_ir_module_find(m, g->calls[k].func);
    int j = 0;
    while (j < n && funcs[j] != f)
      j++;
    if (j == n)
      funcs[n++] = f;
    kernel_of[k] = j;
  }
  *n_funcs = n;
  return LOOM_OK;
}

loom_status loom_net_build(const loom_module *m, const loom_graph *g, const loom_target *t,
                           loom_net **out, loom_diag *d) {
  *out = NULL;
  TRY(loom_ir_verify_graph(m, g, d));
  for (int k = 0; k < g->n_calls; k++)
    if (g->calls[k].n_args > LOOM_NET_MAX_ARGS)
      return loom_diag_error(d, g->loc, "call %d of '%s' passes %d tensors; at most %d", k,
                             g->name, g->calls[k].n_args, LOOM_NET_MAX_ARGS);
  loom_net *n = calloc(1, sizeof *n);
  const loom_func **funcs = malloc(sizeof *funcs * (size_t)(g->n_calls + 1));
  if (!n || !funcs || !(n->kernel_of = malloc(sizeof *n->kernel_of * (size_t)(g->n_calls + 1))) ||
      !(n->homes = malloc(sizeof *n->homes * (size_t)(g->n_values + 1))) ||
      !(n->shapes = malloc(sizeof *n->shapes * (size_t)(g->n_values + 1)))) {
    free(funcs);
    loom_net_free(n);
    return loom_diag_error(d, g->loc, "out of memory building graph '%s'", g->name);
  }
  n->g = g;
  n->is_cuda = t->kind == LOOM_TARGET_CUDA;
  n->n_kept_from = g->n_params;
  for (int v = 0; v < g->n_values; v++)
    n->shapes[v] = g->values[v].info.shape;
  int n_funcs = 0;
  loom_status st = callees(m, g, funcs, &n_funcs, n->kernel_of);
  if (st == LOOM_OK)
    st = net_plan(g, n->homes, &n->arena_bytes, &n->unplanned);
  /* 64-byte aligned, as the plan's offsets are; on a GPU the arena is
   * device memory (gpu.c). */
  if (st == LOOM_OK && n->arena_bytes && !n->is_cuda &&
      !(n->arena = aligned_alloc(64, (n->arena_bytes + 63) / 64 * 64)))
    st = LOOM_NOMEM;
  loom_builder_options o = {.target = t};
  if (st == LOOM_OK)
    st = loom_tune_build(funcs, n_funcs, &o, &n->built);
  for (int i = 0; st == LOOM_OK && i < n_funcs; i++)
    if (!n->built.items[i].kernel)
      st = loom_diag_error(d, funcs[i]->loc, "'%s' cannot be built: %s", funcs[i]->name,
                           n->built.items[i].error ? n->built.items[i].error : "?");
  free(funcs);
  if (st != LOOM_OK) {
    if (!d->has_error)
      loom_diag_error(d, g->loc, "out of memory building graph '%s'", g->name);
    loom_net_free(n);
    return st;
  }
  *out = n;
  return LOOM_OK;
}

void loom_net_memory(const loom_net *n, size_t *planned, size_t *unplanned) {
  *planned = n->arena_bytes;
  *unplanned = n->unplanned;
}

static void *where(loom_net *n, int v, const void *const *params, void *const *outputs) {
  net_home h = n->homes[v];
  return h.kind == NET_PARAM ? (void *)params[h.index]
         : h.kind == NET_OUTPUT ? outputs[h.index]
                                : n->arena + h.offset;
}

double net_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Runs the calls in order; when call_ms is not NULL, adds each call's time
 * to call_ms[k]. */
static loom_status run_calls(loom_net *n, const void *const *params, void *const *outputs,
                             double *call_ms, loom_diag *d) {
  const loom_graph *g = n->g;
  void *args[LOOM_NET_MAX_ARGS + 1];
  const int64_t *shapes[LOOM_NET_MAX_ARGS + 1];
  for (int k = 0; k < g->n_calls; k++) {
    const loom_graph_call *c = &g->calls[k];
    for (int i = 0; i <= c->n_args; i++) {
      int v = net_call_value(c, i);
      args[i] = where(n, v, params, outputs);
      shapes[i] = n->shapes[v];
    }
    loom_c_kernel kernel = (loom_c_kernel)n->built.items[n->kernel_of[k]].kernel;
    double start = call_ms ? net_now_ms() : 0;
    int32_t rc = kernel(args, shapes);
    if (call_ms)
      call_ms[k] += net_now_ms() - start;
    if (rc)
      return loom_diag_error(d, g->loc, "graph '%s', call %d (%s): %s (code %d)", g->name, k,
                             c->func, loom_codegen_rc_str(rc), (int)rc);
  }
  /* Outputs that are parameters, or that another output holds already (a
   * value returned twice). */
  for (int i = 0; i < g->n_outputs; i++) {
    int v = g->outputs[i];
    const void *from = where(n, v, params, outputs);
    if (from != outputs[i])
      memcpy(outputs[i], from, loom_net_bytes(&g->values[v].info));
  }
  return LOOM_OK;
}

loom_status loom_net_run(loom_net *n, const void *const *params, void *const *outputs,
                         loom_diag *d) {
  return n->is_cuda ? net_gpu_run(n, params, outputs, NULL, d)
                    : run_calls(n, params, outputs, NULL, d);
}

loom_status loom_net_profile(loom_net *n, const void *const *params, void *const *outputs,
                             double *call_ms, loom_diag *d) {
  return n->is_cuda ? net_gpu_run(n, params, outputs, call_ms, d)
                    : run_calls(n, params, outputs, call_ms, d);
}

void loom_net_keep_params(loom_net *n, int first) {
  if (first >= 0 && first < n->n_kept_from)
    n->n_kept_from = first;
}
