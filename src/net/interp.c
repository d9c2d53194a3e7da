/* The oracle for a graph: each call's prim func run by the reference
 * interpreter on arrays of its own, one array per value. */
#include "net/net_impl.h"

#include "loom/interp.h"

#include <stdlib.h>
#include <string.h>

static void free_all(loom_interp_array **vals, int n) {
  for (int i = 0; i < n; i++)
    loom_interp_array_free(vals[i]);
  free(vals);
}

loom_status loom_net_interp(const loom_module *m, const loom_graph *g,
                            const void *const *params, void *const *outputs, loom_diag *d) {
  TRY(loom_ir_verify_graph(m, g, d));
  loom_interp_array **vals = calloc((size_t)g->n_values + 1, sizeof *vals);
  loom_interp_array **args = calloc(LOOM_NET_MAX_ARGS + 1, sizeof *args);
  loom_status st = vals && args ? LOOM_OK : LOOM_NOMEM;
  for (int v = 0; v < g->n_values && st == LOOM_OK; v++) {
    const loom_tensor_info *t = &g->values[v].info;
    if (!(vals[v] = loom_interp_array_new(t->dtype, t->shape, t->ndim)))
      st = LOOM_NOMEM;
    else if (v < g->n_params)
      memcpy(vals[v]->data, params[v], loom_net_bytes(t));
  }
  for (int k = 0; k < g->n_calls && st == LOOM_OK; k++) {
    const loom_graph_call *c = &g->calls[k];
    if (c->n_args > LOOM_NET_MAX_ARGS) {
      st = loom_diag_error(d, g->loc, "call %d of '%s' passes %d tensors; at most %d", k,
                           g->name, c->n_args, LOOM_NET_MAX_ARGS);
      break;
    }
    for (int i = 0; i < c->n_args; i++)
      args[i] = vals[c->args[i]];
    args[c->n_args] = vals[c->out];
    st = loom_interp_run(loom_ir_module_find(m, c->func), args, NULL, d);
  }
  for (int i = 0; i < g->n_outputs && st == LOOM_OK; i++)
    memcpy(outputs[i], vals[g->outputs[i]]->data,
           loom_net_bytes(&g->values[g->outputs[i]].info));
  if (st == LOOM_NOMEM && !d->has_error)
    loom_diag_error(d, g->loc, "out of memory interpreting graph '%s'", g->name);
  if (vals)
    free_all(vals, g->n_values);
  free(args);
  return st;
}
