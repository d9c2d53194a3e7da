/* What the runtime's files share. */
#ifndef LOOM_NET_IMPL_H
#define LOOM_NET_IMPL_H

#include "loom/net.h"

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

/* Plans g: homes[v] for every value; *arena_bytes gets the arena's size and
 * *unplanned what one buffer per intermediate would take. Fails only when
 * out of memory. */
loom_status net_plan(const loom_graph *g, net_home *homes, size_t *arena_bytes,
                     size_t *unplanned);

#endif
