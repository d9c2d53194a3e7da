/* Memory planning: the values a graph makes are placed in one arena, each
 * at an offset no value alive at the same time overlaps. A value is alive
 * from the call that makes it to the last call that reads it. Values are
 * placed in the order they are made, each at the lowest offset free over
 * its whole life (first fit over the values already placed whose lives
 * overlap its own), so a tensor reuses the space of one that is dead. */
#include "net/net_impl.h"

#include <stdlib.h>

#define ALIGN 64

size_t loom_net_bytes(const loom_tensor_info *t) {
  size_t n = (size_t)(t->dtype.bits + 7) / 8 * t->dtype.lanes;
  for (int i = 0; i < t->ndim; i++)
    n *= (size_t)t->shape[i];
  return n;
}

typedef struct placed {
  size_t lo, hi;   /* [lo, hi) in the arena */
  int first, last; /* the calls of its life */
} placed;

static int by_lo(const void *x, const void *y) {
  const placed *a = *(const placed *const *)x, *b = *(const placed *const *)y;
  return a->lo < b->lo ? -1 : a->lo > b->lo;
}

loom_status net_plan(const loom_graph *g, net_home *homes, size_t *arena_bytes,
                     size_t *unplanned) {
  int n = g->n_values;
  int *last = malloc(sizeof *last * (size_t)(n + 1));
  placed *p = calloc((size_t)n + 1, sizeof *p);
  placed **live = malloc(sizeof *live * (size_t)(n + 1));
  if (!last || !p || !live) {
    free(last);
    free(p);
    free(live);
    return LOOM_NOMEM;
  }
  for (int v = 0; v < n; v++) {
    last[v] = v - g->n_params; /* a value nothing reads dies where it is made */
    homes[v] = (net_home){NET_PARAM, v, 0};
  }
  for (int k = 0; k < g->n_calls; k++)
    for (int i = 0; i < g->calls[k].n_args; i++)
      last[g->calls[k].args[i]] = k;
  for (int i = 0; i < g->n_outputs; i++)
    homes[g->outputs[i]] = (net_home){NET_OUTPUT, i, 0};
  /* An output that is a parameter is copied, not planned. */
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] < g->n_params)
      homes[g->outputs[i]] = (net_home){NET_PARAM, g->outputs[i], 0};
  size_t top = 0, sum = 0;
  int n_placed = 0;
  for (int k = 0; k < g->n_calls; k++) {
    int v = g->calls[k].out;
    if (homes[v].kind == NET_OUTPUT)
      continue;
    size_t size = (loom_net_bytes(&g->values[v].info) + ALIGN - 1) / ALIGN * ALIGN;
    sum += size;
    int n_live = 0;
    for (int j = 0; j < n_placed; j++)
      if (p[j].last >= k && p[j].first <= last[v])
        live[n_live++] = &p[j];
    qsort(live, (size_t)n_live, sizeof *live, by_lo);
    size_t at = 0;
    for (int j = 0; j < n_live; j++) {
      if (live[j]->lo >= at + size)
        break;
      if (live[j]->hi > at)
        at = live[j]->hi;
    }
    p[n_placed++] = (placed){at, at + size, k, last[v]};
    homes[v] = (net_home){NET_ARENA, 0, at};
    if (at + size > top)
      top = at + size;
  }
  *arena_bytes = top;
  *unplanned = sum;
  free(last);
  free(p);
  free(live);
  return LOOM_OK;
}
