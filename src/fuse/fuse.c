/* The fusion pass over a module: each graph function partitioned
 * (partition.c), each group of two or more calls merged (merge.c) into a
 * function named after its callees (fused_conv2d_batch_norm_relu, as TVM
 * names them; equal merged functions are one), and the graph rewritten to
 * call it. Callees that no call reaches any more leave the module. */
#include "fuse/fuse_impl.h"
#include "loom/net.h"

#include <stdlib.h>
#include <string.h>

typedef struct pass {
  loom_arena *a;
  const loom_module *m;
  loom_func **funcs; /* m's, then the merged ones */
  int n_funcs, cap_funcs;
  int n_old;         /* m's functions: funcs[0..n_old) */
  uint64_t *hashes;  /* of the merged ones, anonymous: hashes[k - n_old] */
  loom_buf *explain;
  loom_diag *d;
} pass;

static bool has_func(const pass *p, const char *name) {
  for (int i = 0; i < p->n_funcs; i++)
    if (!strcmp(p->funcs[i]->name, name))
      return true;
  return false;
}

/* "fused_" and the callees' names, then a counter when the module has the
 * name already. */
static const char *fused_name(pass *p, const loom_graph *g, const int *calls, int n) {
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_puts(&b, "fused");
  for (int j = 0; j < n; j++) {
    loom_buf_putc(&b, '_');
    loom_buf_puts(&b, g->calls[calls[j]].func);
  }
  char *base = loom_buf_take(&b);
  const char *name = base ? loom_arena_strdup(p->a, base) : NULL;
  for (int k = 1; name && has_func(p, name); k++)
    name = loom_arena_printf(p->a, "%s%d", base, k);
  free(base);
  return name;
}

static loom_status add_func(pass *p, loom_func *f, uint64_t hash) {
  if (p->n_funcs == p->cap_funcs) {
    int cap = 2 * p->cap_funcs + 8;
    loom_func **fs = realloc(p->funcs, sizeof *fs * (size_t)cap);
    uint64_t *hs = realloc(p->hashes, sizeof *hs * (size_t)cap);
    if (fs)
      p->funcs = fs;
    if (hs)
      p->hashes = hs;
    if (!fs || !hs)
      return LOOM_NOMEM;
    p->cap_funcs = cap;
  }
  p->hashes[p->n_funcs - p->n_old] = hash;
  p->funcs[p->n_funcs++] = f;
  return LOOM_OK;
}

static void explain_group(pass *p, const loom_func *f, const loom_graph *g,
                          const int *calls, int n) {
  if (!p->explain)
    return;
  loom_buf_printf(p->explain, "%s:", f->name);
  for (int j = 0; j < n; j++) {
    const loom_func *c = loom_ir_module_find(p->m, g->calls[calls[j]].func);
    loom_buf_printf(p->explain, "%s %s (%s)", j ? "," : "", g->calls[calls[j]].func,
                    loom_fuse_kind_name(loom_fuse_kind_of(c)));
  }
  loom_buf_putc(p->explain, '\n');
}

/* The function computing the group calls[0..n): a merged one made before
 * when equal, else a new one. */
static loom_status group_func(pass *p, const loom_graph *g, const int *calls, int n,
                              const char **name) {
  const char *fresh = fused_name(p, g, calls, n);
  loom_func *f, *anon;
  if (!fresh)
    return LOOM_NOMEM;
  TRY(fuse_merge(p->a, p->m, g, calls, n, fresh, &f, p->d));
  if (!(anon = loom_ir_func_anonymous(p->a, f)))
    return LOOM_NOMEM;
  uint64_t h = loom_ir_hash_func(anon);
  for (int k = p->n_old; k < p->n_funcs; k++) {
    if (p->hashes[k - p->n_old] != h)
      continue;
    loom_func *other = loom_ir_func_anonymous(p->a, p->funcs[k]);
    if (!other)
      return LOOM_NOMEM;
    if (loom_ir_equal_func(other, anon, NULL)) {
      *name = p->funcs[k]->name;
      return LOOM_OK;
    }
  }
  TRY(add_func(p, f, h));
  explain_group(p, f, g, calls, n);
  *name = f->name;
  return LOOM_OK;
}

/* The tensors the group reads from outside, in order of first use: as
 * merge.c makes the merged function's parameters. */
static int outside_args(const loom_graph *g, const int *calls, int n, int *args) {
  int k = 0;
  for (int j = 0; j < n; j++) {
    const loom_graph_call *c = &g->calls[calls[j]];
    for (int i = 0; i < c->n_args; i++) {
      int v = c->args[i], at = 0;
      bool is_inside = false;
      for (int t = 0; t < n; t++)
        is_inside |= g->calls[calls[t]].out == v;
      while (at < k && args[at] != v)
        at++;
      if (!is_inside && at == k)
        args[k++] = v;
    }
  }
  return k;
}

typedef struct rewrite {
  pass *p;
  const loom_graph *g;
  int *map;              /* old value -> new value; -1: none yet */
  loom_graph_call *calls;
  loom_graph_value *values;
  int n_calls;
} rewrite;

/* Appends call c (its arguments old values) to the new graph. */
static loom_status emit(rewrite *w, loom_graph_call c) {
  int *args = loom_arena_alloc(w->p->a, sizeof *args * (size_t)(c.n_args + 1));
  if (!args)
    return LOOM_NOMEM;
  for (int i = 0; i < c.n_args; i++)
    args[i] = w->map[c.args[i]];
  int v = w->g->n_params + w->n_calls;
  w->values[v] = w->g->values[c.out];
  w->map[c.out] = v;
  c.args = args;
  c.out = v;
  w->calls[w->n_calls++] = c;
  return LOOM_OK;
}

/* Is a tensor a member other than the last makes read outside the group
 * or returned? The grouping never makes such a group; a merged function
 * has one result, so it is kept from one all the same. */
static bool escapes(const loom_graph *g, const int *members, int n) {
  for (int j = 0; j < n - 1; j++) {
    int v = g->calls[members[j]].out;
    for (int i = 0; i < g->n_outputs; i++)
      if (g->outputs[i] == v)
        return true;
    for (int k = 0; k < g->n_calls; k++) {
      bool is_member = false;
      for (int t = 0; t < n; t++)
        is_member |= members[t] == k;
      for (int i = 0; !is_member && i < g->calls[k].n_args; i++)
        if (g->calls[k].args[i] == v)
          return true;
    }
  }
  return false;
}

/* Emits the group members[0..n) as one call of its merged function, or
 * its calls as they are when the merged function would take more tensors
 * than a call may pass or a tensor made inside escapes. */
static loom_status emit_group(rewrite *w, const int *members, int n, int *args) {
  const loom_graph *g = w->g;
  loom_graph_call c = g->calls[members[n - 1]];
  int n_args = n > 1 ? outside_args(g, members, n, args) : 0;
  if (n == 1 || n_args > LOOM_NET_MAX_ARGS || escapes(g, members, n)) {
    for (int j = 0; j < n; j++)
      TRY(emit(w, g->calls[members[j]]));
    return LOOM_OK;
  }
  TRY(group_func(w->p, g, members, n, &c.func));
  c.args = args;
  c.n_args = n_args;
  return emit(w, c);
}

/* g with each group one call. */
static loom_status fuse_graph(pass *p, const loom_graph *g, loom_graph **out) {
  int n = g->n_calls;
  int *group = malloc(sizeof *group * (size_t)(n + 1));
  int *members = malloc(sizeof *members * (size_t)(n + 1));
  int *map = malloc(sizeof *map * (size_t)(g->n_values + 1));
  int *args = malloc(sizeof *args * (size_t)(g->n_values + 1));
  loom_graph *ng = loom_arena_dup(p->a, g, sizeof *g);
  rewrite w = {p, g, map, loom_arena_alloc(p->a, sizeof *w.calls * (size_t)(n + 1)),
               loom_arena_alloc(p->a, sizeof *w.values * (size_t)(g->n_values + 1)), 0};
  int *outputs = loom_arena_alloc(p->a, sizeof *outputs * (size_t)(g->n_outputs + 1));
  loom_status st = group && members && map && args && ng && w.calls && w.values && outputs
                       ? loom_fuse_partition(p->m, g, group)
                       : LOOM_NOMEM;
  for (int v = 0; st == LOOM_OK && v < g->n_values; v++) {
    map[v] = v < g->n_params ? v : -1;
    if (v < g->n_params)
      w.values[v] = g->values[v];
  }
  for (int k = 0; k < n && st == LOOM_OK; k++) {
    if (group[k] != k)
      continue; /* emitted with the last call of its group */
    int n_members = 0;
    for (int j = 0; j <= k; j++)
      if (group[j] == k)
        members[n_members++] = j;
    st = emit_group(&w, members, n_members, args);
  }
  for (int i = 0; i < g->n_outputs && st == LOOM_OK; i++)
    outputs[i] = map[g->outputs[i]];
  if (st == LOOM_OK) {
    ng->values = w.values;
    ng->n_values = g->n_params + w.n_calls;
    ng->calls = w.calls;
    ng->n_calls = w.n_calls;
    ng->outputs = outputs;
    *out = ng;
  }
  free(group);
  free(members);
  free(map);
  free(args);
  return st;
}

static bool is_called(loom_graph *const *gs, int n, const char *name) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < gs[i]->n_calls; k++)
      if (!strcmp(gs[i]->calls[k].func, name))
        return true;
  return false;
}

static bool is_listed(loom_func *const *fs, int n, const loom_func *f) {
  for (int i = 0; i < n; i++)
    if (fs[i] == f)
      return true;
  return false;
}

/* The functions the new graphs call, in the order of their first calls,
 * then those no graph called before, in m's order. */
static int order_funcs(const pass *p, loom_graph *const *graphs, loom_func **out) {
  const loom_module *m = p->m;
  int n = 0;
  for (int i = 0; i < m->n_graphs; i++)
    for (int k = 0; k < graphs[i]->n_calls; k++)
      for (int j = 0; j < p->n_funcs; j++)
        if (!strcmp(p->funcs[j]->name, graphs[i]->calls[k].func) &&
            !is_listed(out, n, p->funcs[j]))
          out[n++] = p->funcs[j];
  for (int j = 0; j < p->n_old; j++)
    if (!is_called(m->graphs, m->n_graphs, p->funcs[j]->name))
      out[n++] = p->funcs[j];
  return n;
}

loom_status loom_fuse_module(loom_arena *a, const loom_module *m, loom_module **out,
                             loom_buf *explain, loom_diag *d) {
  pass p = {.a = a, .m = m, .explain = explain, .d = d};
  loom_module *nm = loom_arena_dup(a, m, sizeof *m);
  loom_graph **graphs = loom_arena_alloc(a, sizeof *graphs * (size_t)(m->n_graphs + 1));
  loom_status st = nm && graphs ? LOOM_OK : LOOM_NOMEM;
  for (int i = 0; i < m->n_funcs && st == LOOM_OK; i++)
    st = add_func(&p, m->funcs[i], 0);
  p.n_old = p.n_funcs;
  for (int i = 0; i < m->n_graphs && st == LOOM_OK; i++)
    st = fuse_graph(&p, m->graphs[i], &graphs[i]);
  loom_func **funcs = loom_arena_alloc(a, sizeof *funcs * (size_t)(p.n_funcs + 1));
  if (st == LOOM_OK && !funcs)
    st = LOOM_NOMEM;
  if (st == LOOM_OK && p.n_funcs == p.n_old) {
    *out = (loom_module *)m; /* nothing fused: the module as it was */
  } else if (st == LOOM_OK) {
    nm->funcs = funcs;
    nm->n_funcs = order_funcs(&p, graphs, funcs);
    nm->graphs = graphs;
    for (int i = 0; i < nm->n_graphs && st == LOOM_OK; i++)
      st = loom_ir_verify_graph(nm, nm->graphs[i], d);
    *out = nm;
  }
  free(p.funcs);
  free(p.hashes);
  return st;
}
