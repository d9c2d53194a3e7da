/* The parameters of prim funcs that always receive a model's weights,
 * listed in "layout_free_buffers" (loom_fuse_mark_constants). */
#include "fuse/fuse_impl.h"

#include <stdlib.h>
#include <string.h>

/* Which parameters of f every call passes a constant: is_const[i]; false
 * when no call reaches f. */
static bool constant_params(const loom_module *m, const loom_func *f, int from,
                            bool *is_const) {
  bool is_called = false;
  for (int i = 0; i < f->n_params; i++)
    is_const[i] = true;
  for (int gi = 0; gi < m->n_graphs; gi++) {
    const loom_graph *g = m->graphs[gi];
    for (int k = 0; k < g->n_calls; k++) {
      const loom_graph_call *c = &g->calls[k];
      if (strcmp(c->func, f->name))
        continue;
      is_called = true;
      for (int i = 0; i < f->n_params; i++)
        is_const[i] &= i < c->n_args && c->args[i] >= from && c->args[i] < g->n_params;
    }
  }
  return is_called;
}

/* f with the positions is_const lists added to its layout_free_buffers;
 * f itself when none is new. */
static loom_func *marked(loom_arena *a, const loom_func *f, const bool *is_const) {
  const loom_value *old = loom_ir_attr_get(f->attrs, f->n_attrs, "layout_free_buffers");
  int n_old = old && old->kind == LOOM_VALUE_LIST ? old->n_items : 0, n = n_old;
  loom_value **items = loom_arena_alloc(a, sizeof *items * (size_t)(n_old + f->n_params + 1));
  if (!items)
    return NULL;
  for (int k = 0; k < n_old; k++)
    items[k] = old->items[k];
  for (int i = 0; i < f->n_params; i++)
    if (is_const[i] && !loom_ir_func_is_layout_free(f, i) &&
        !(items[n++] = loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT32, i))))
      return NULL;
  if (n == n_old)
    return (loom_func *)f;
  loom_value *list = loom_arena_alloc(a, sizeof *list);
  loom_func *nf = loom_arena_dup(a, f, sizeof *f);
  loom_attr *attrs = loom_arena_alloc(a, sizeof *attrs * (size_t)(f->n_attrs + 1));
  if (!list || !nf || !attrs)
    return NULL;
  *list = (loom_value){.kind = LOOM_VALUE_LIST, .items = items, .n_items = n};
  /* In TVM's order: global_symbol, layout_free_buffers, then the rest. */
  int na = 0;
  for (int i = 0; i < f->n_attrs; i++)
    if (!strcmp(f->attrs[i].key, "global_symbol"))
      attrs[na++] = f->attrs[i];
  attrs[na++] = (loom_attr){"layout_free_buffers", list};
  for (int i = 0; i < f->n_attrs; i++)
    if (strcmp(f->attrs[i].key, "global_symbol") &&
        strcmp(f->attrs[i].key, "layout_free_buffers"))
      attrs[na++] = f->attrs[i];
  nf->attrs = attrs;
  nf->n_attrs = na;
  return nf;
}

loom_status loom_fuse_mark_constants(loom_arena *a, const loom_module *m,
                                     int n_constant_from, loom_module **out) {
  loom_module *nm = loom_arena_dup(a, m, sizeof *m);
  loom_func **funcs = loom_arena_alloc(a, sizeof *funcs * (size_t)(m->n_funcs + 1));
  if (!nm || !funcs)
    return LOOM_NOMEM;
  for (int j = 0; j < m->n_funcs; j++) {
    const loom_func *f = m->funcs[j];
    bool *is_const = malloc(sizeof *is_const * (size_t)(f->n_params + 1));
    if (!is_const)
      return LOOM_NOMEM;
    funcs[j] = constant_params(m, f, n_constant_from, is_const) ? marked(a, f, is_const)
                                                                : m->funcs[j];
    free(is_const);
    if (!funcs[j])
      return LOOM_NOMEM;
  }
  nm->funcs = funcs;
  *out = nm;
  return LOOM_OK;
}
