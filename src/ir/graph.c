/* Graph functions: the checks a graph must pass against the module's prim
 * funcs, and comparing two graphs. */
#include "loom/ir.h"

#include <stdio.h>
#include <string.h>

const loom_graph *loom_ir_module_find_graph(const loom_module *m, const char *name) {
  for (int i = 0; i < m->n_graphs; i++)
    if (!strcmp(m->graphs[i]->name, name))
      return m->graphs[i];
  return NULL;
}

void loom_ir_tensor_info_str(const loom_tensor_info *t, char *buf, size_t n) {
  char dt[LOOM_DTYPE_STRLEN];
  size_t k = (size_t)snprintf(buf, n, "%s(", loom_dtype_str(t->dtype, dt));
  for (int i = 0; i < t->ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)t->shape[i]);
  if (k < n)
    snprintf(buf + k, n - k, ")");
}

bool loom_ir_tensor_info_equal(const loom_tensor_info *a, const loom_tensor_info *b) {
  if (!loom_dtype_eq(a->dtype, b->dtype) || a->ndim != b->ndim)
    return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i])
      return false;
  return true;
}

/* Whether buffer parameter b holds tensors of info t: the same dtype, and
 * a constant shape equal to t's. */
static bool param_holds(const loom_buffer *b, const loom_tensor_info *t) {
  if (!loom_dtype_eq(b->dtype, t->dtype) || b->ndim != t->ndim)
    return false;
  for (int i = 0; i < b->ndim; i++) {
    int64_t e;
    if (!loom_ir_is_const_int(b->shape[i], &e) || e != t->shape[i])
      return false;
  }
  return true;
}

/* A buffer parameter as a tensor info prints: "float32(1, ?)". */
static void buffer_str(const loom_buffer *b, char *buf, size_t n) {
  char dt[LOOM_DTYPE_STRLEN];
  size_t k = (size_t)snprintf(buf, n, "%s(", loom_dtype_str(b->dtype, dt));
  for (int i = 0; i < b->ndim && k < n; i++) {
    int64_t e;
    k += loom_ir_is_const_int(b->shape[i], &e)
             ? (size_t)snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)e)
             : (size_t)snprintf(buf + k, n - k, i ? ", ?" : "?");
  }
  if (k < n)
    snprintf(buf + k, n - k, ")");
}

static loom_status check_call(const loom_module *m, const loom_graph *g, int k,
                              loom_diag *d) {
  const loom_graph_call *c = &g->calls[k];
  loom_loc at = c->loc.line ? c->loc : g->loc;
  const loom_func *f = loom_ir_module_find(m, c->func);
  if (!f)
    return loom_diag_error(d, at, "graph '%s': call %d names '%s', which is not a "
                           "prim func of the module", g->name, k, c->func);
  if (f->n_params != c->n_args + 1)
    return loom_diag_error(d, at, "graph '%s': call %d passes %d tensors to '%s', "
                           "which takes %d and its result", g->name, k, c->n_args,
                           c->func, f->n_params - 1);
  if (c->out != g->n_params + k)
    return loom_diag_error(d, at, "graph '%s': call %d does not define value %d",
                           g->name, k, g->n_params + k);
  for (int i = 0; i <= c->n_args; i++) {
    int v = i < c->n_args ? c->args[i] : c->out;
    if (v < 0 || v >= g->n_values || (i < c->n_args && v >= c->out))
      return loom_diag_error(d, at, "graph '%s': call %d reads a value not "
                             "defined before it", g->name, k);
    const loom_buffer *b = f->params[i].buffer;
    const loom_tensor_info *t = &g->values[v].info;
    if (!b)
      return loom_diag_error(d, at, "graph '%s': '%s' takes a scalar as parameter %d; "
                             "a graph passes tensors", g->name, c->func, i + 1);
    if (!param_holds(b, t)) {
      char got[160], want[160], ord[16];
      snprintf(ord, sizeof ord, "%d", i + 1);
      loom_ir_tensor_info_str(t, got, sizeof got);
      buffer_str(b, want, sizeof want);
      return loom_diag_error(d, at, "graph '%s': %s%s of '%s' is %s, but its parameter "
                             "'%s' is %s", g->name, i < c->n_args ? "argument " : "the result",
                             i < c->n_args ? ord : "", c->func, got, b->name, want);
    }
  }
  return LOOM_OK;
}

loom_status loom_ir_verify_graph(const loom_module *m, const loom_graph *g, loom_diag *d) {
  if (g->n_params < 0 || g->n_values != g->n_params + g->n_calls)
    return loom_diag_error(d, g->loc, "graph '%s' has %d values for %d parameters and %d "
                           "calls", g->name, g->n_values, g->n_params, g->n_calls);
  for (int k = 0; k < g->n_calls; k++)
    TRY(check_call(m, g, k, d));
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] < 0 || g->outputs[i] >= g->n_values)
      return loom_diag_error(d, g->loc, "graph '%s' returns a value it does not define",
                             g->name);
  if (g->n_outputs == 0)
    return loom_diag_error(d, g->loc, "graph '%s' returns nothing", g->name);
  return LOOM_OK;
}

bool loom_ir_equal_graph(const loom_graph *a, const loom_graph *b, char *why, size_t n) {
#define DIFFER(...) (snprintf(why, n, __VA_ARGS__), false)
  if (strcmp(a->name, b->name))
    return DIFFER("graph '%s' vs '%s'", a->name, b->name);
  if (a->n_params != b->n_params || a->n_values != b->n_values || a->n_calls != b->n_calls ||
      a->n_outputs != b->n_outputs)
    return DIFFER("graph '%s': %d parameters and %d calls vs %d and %d", a->name,
                  a->n_params, a->n_calls, b->n_params, b->n_calls);
  for (int i = 0; i < a->n_values; i++)
    if (!loom_ir_tensor_info_equal(&a->values[i].info, &b->values[i].info))
      return DIFFER("graph '%s': value %d ('%s' vs '%s') differs in shape or dtype",
                    a->name, i, a->values[i].name, b->values[i].name);
  for (int k = 0; k < a->n_calls; k++) {
    const loom_graph_call *x = &a->calls[k], *y = &b->calls[k];
    bool same = !strcmp(x->func, y->func) && x->n_args == y->n_args && x->out == y->out;
    for (int i = 0; same && i < x->n_args; i++)
      same = x->args[i] == y->args[i];
    if (!same)
      return DIFFER("graph '%s': call %d ('%s' vs '%s') differs", a->name, k, x->func,
                    y->func);
  }
  for (int i = 0; i < a->n_outputs; i++)
    if (a->outputs[i] != b->outputs[i])
      return DIFFER("graph '%s': output %d differs", a->name, i);
  return true;
#undef DIFFER
}
