/* The grouping of a graph's calls, as TVM's FuseOps makes it.
 *
 * Each call is a node; an edge runs from a call to each call that reads
 * its value, with the reader's kind. A call whose value the graph returns
 * is referred to from outside: nothing after it is its dominator. The
 * post-dominator tree is built from the last call back (each node's parent
 * is the least common ancestor of its readers, and the node remembers the
 * highest kind on the way there). Then, in call order, each node is fused
 * into its post-dominator when every node on every path between them
 * allows it:
 *
 * - a product or pooling (OUT_EWISE), when the way to its dominator is
 *   elementwise and the nodes between are broadcast at most (first pass);
 * - an elementwise or broadcast node, into an injective node or a
 *   reduction, through injective nodes (the last may already hold a
 *   product);
 * - an injective node, through injective nodes, second pass, so that
 *   products take their epilogues first.
 *
 * Groups merge in a union-find; a group's kind is raised only by the
 * product it takes in (its anchor). Calls are in an order where every
 * value is made before it is read, which is the order the walk needs. */
#include "fuse/fuse_impl.h"

#include <stdlib.h>
#include <string.h>

/* Nodes fused into one function at most, as TVM's max_fuse_depth. */
#define MAX_FUSE_DEPTH 256

typedef struct edge {
  int to;
  loom_fuse_kind kind;
} edge;

typedef struct node {
  loom_fuse_kind kind;
  bool is_extern; /* its value leaves the graph */
  edge *out;
  int n_out;
  /* the post-dominator tree */
  int parent; /* -1: none */
  int depth;
  loom_fuse_kind dom_kind;
  /* the groups */
  int group; /* union-find parent; itself at a root */
  loom_fuse_kind group_kind;
  bool has_anchor;
  int n_members;
} node;

typedef struct part {
  node *nodes;
  int n;
  unsigned char *seen;
} part;

static loom_fuse_kind max_kind(loom_fuse_kind a, loom_fuse_kind b) {
  return a > b ? a : b;
}

static int find(part *p, int k) {
  while (p->nodes[k].group != k) {
    p->nodes[k].group = p->nodes[p->nodes[k].group].group;
    k = p->nodes[k].group;
  }
  return k;
}

/* The least common ancestor of a and b in the tree, raising *kind by every
 * node passed; -1 when they have none. */
static int common(part *p, int a, int b, loom_fuse_kind *kind) {
  while (a != b) {
    if (a < 0 || b < 0)
      return -1;
    node *x = &p->nodes[a], *y = &p->nodes[b];
    if (x->depth < y->depth) {
      *kind = max_kind(*kind, y->dom_kind);
      b = y->parent;
    } else if (y->depth < x->depth) {
      *kind = max_kind(*kind, x->dom_kind);
      a = x->parent;
    } else {
      *kind = max_kind(*kind, max_kind(x->dom_kind, y->dom_kind));
      a = x->parent;
      b = y->parent;
    }
  }
  return a;
}

static void build_tree(part *p) {
  for (int k = p->n - 1; k >= 0; k--) {
    node *x = &p->nodes[k];
    x->parent = -1;
    x->depth = 1;
    x->dom_kind = LOOM_FUSE_OPAQUE;
    if (x->is_extern || !x->n_out)
      continue;
    loom_fuse_kind kind = x->out[0].kind;
    int at = x->out[0].to;
    for (int i = 1; i < x->n_out && at >= 0; i++) {
      at = common(p, at, x->out[i].to, &kind);
      kind = max_kind(kind, x->out[i].kind);
    }
    x->parent = at;
    x->depth = at >= 0 ? p->nodes[at].depth + 1 : 1;
    x->dom_kind = kind;
  }
}

typedef bool (*path_ok)(loom_fuse_kind kind, bool is_sink);

static bool check_from(part *p, int k, int sink, path_ok ok) {
  if (p->seen[k])
    return true;
  p->seen[k] = 1;
  if (!ok(p->nodes[find(p, k)].group_kind, k == sink))
    return false;
  if (k == sink)
    return true;
  for (int i = 0; i < p->nodes[k].n_out; i++)
    if (!check_from(p, p->nodes[k].out[i].to, sink, ok))
      return false;
  return true;
}

/* Does every node on every path from src to sink (src aside) pass ok? */
static bool check_path(part *p, int src, int sink, path_ok ok) {
  memset(p->seen, 0, (size_t)p->n);
  for (int i = 0; i < p->nodes[src].n_out; i++)
    if (!check_from(p, p->nodes[src].out[i].to, sink, ok))
      return false;
  return true;
}

static void merge(part *p, int child, int parent) {
  child = find(p, child);
  parent = find(p, parent);
  if (child == parent)
    return;
  node *c = &p->nodes[child], *t = &p->nodes[parent];
  t->n_members += c->n_members;
  c->group = parent;
  if (c->has_anchor) {
    t->has_anchor = true;
    t->group_kind = max_kind(c->group_kind, t->group_kind);
  }
}

static void commit_from(part *p, int k, int sink, int target) {
  if (k == sink || p->seen[k])
    return;
  p->seen[k] = 1;
  merge(p, k, target);
  for (int i = 0; i < p->nodes[k].n_out; i++)
    commit_from(p, p->nodes[k].out[i].to, sink, target);
}

/* Every node on the paths from src to sink joins sink's group. */
static void commit(part *p, int src, int sink) {
  memset(p->seen, 0, (size_t)p->n);
  commit_from(p, src, sink, sink);
}

/* The nodes src's and sink's groups would hold together, and those between. */
static int count_with(part *p, int src, int sink) {
  return p->nodes[find(p, src)].n_members + p->nodes[find(p, sink)].n_members;
}

static bool upto_broadcast(loom_fuse_kind k, bool is_sink) {
  (void)is_sink;
  return k <= LOOM_FUSE_BROADCAST;
}

static bool into_anchor(loom_fuse_kind k, bool is_sink) {
  if (!is_sink)
    return k <= LOOM_FUSE_INJECTIVE;
  return k <= LOOM_FUSE_INJECTIVE || k == LOOM_FUSE_REDUCE || k == LOOM_FUSE_OUT_EWISE;
}

static bool upto_injective(loom_fuse_kind k, bool is_sink) {
  (void)is_sink;
  return k <= LOOM_FUSE_INJECTIVE;
}

static void run_phase(part *p, int phase) {
  for (int k = 0; k < p->n; k++) {
    node *x = &p->nodes[k];
    /* A node's own entry: its kind as first grouped, raised when it
     * became a group root that took in a product. */
    loom_fuse_kind kind = x->group_kind;
    int dom = x->parent;
    if (kind == LOOM_FUSE_OPAQUE || dom < 0)
      continue;
    if (find(p, k) == find(p, dom))
      continue;
    if (count_with(p, k, dom) > MAX_FUSE_DEPTH)
      continue;
    if (kind == LOOM_FUSE_OUT_EWISE) {
      if (phase == 0 && x->dom_kind == LOOM_FUSE_ELEMWISE &&
          check_path(p, k, dom, upto_broadcast))
        commit(p, k, dom);
    } else if (kind <= LOOM_FUSE_BROADCAST) {
      if ((x->dom_kind <= LOOM_FUSE_INJECTIVE || x->dom_kind == LOOM_FUSE_REDUCE) &&
          check_path(p, k, dom, into_anchor))
        commit(p, k, dom);
    } else if (kind == LOOM_FUSE_INJECTIVE) {
      if (phase == 1 && check_path(p, k, dom, upto_injective))
        commit(p, k, dom);
    }
  }
}

static loom_status add_edge(node *x, int to, loom_fuse_kind kind) {
  edge *e = realloc(x->out, sizeof *e * (size_t)(x->n_out + 1));
  if (!e)
    return LOOM_NOMEM;
  e[x->n_out++] = (edge){to, kind};
  x->out = e;
  return LOOM_OK;
}

loom_status loom_fuse_partition(const loom_module *m, const loom_graph *g,
                                int *group) {
  part p = {calloc((size_t)g->n_calls + 1, sizeof *p.nodes), g->n_calls,
            calloc((size_t)g->n_calls + 1, 1)};
  loom_status st = p.nodes && p.seen ? LOOM_OK : LOOM_NOMEM;
  for (int k = 0; k < p.n && st == LOOM_OK; k++) {
    const loom_func *f = loom_ir_module_find(m, g->calls[k].func);
    node *x = &p.nodes[k];
    x->kind = f && fuse_is_mergeable(f) ? loom_fuse_kind_of(f) : LOOM_FUSE_OPAQUE;
    x->group = k;
    x->group_kind = x->kind;
    x->has_anchor = x->kind == LOOM_FUSE_OUT_EWISE;
    x->n_members = 1;
  }
  for (int k = 0; k < p.n && st == LOOM_OK; k++) {
    const loom_graph_call *c = &g->calls[k];
    for (int i = 0; i < c->n_args && st == LOOM_OK; i++) {
      int from = c->args[i] - g->n_params;
      if (from >= 0 && from < k)
        st = add_edge(&p.nodes[from], k, p.nodes[k].kind);
    }
  }
  for (int i = 0; i < g->n_outputs && st == LOOM_OK; i++) {
    int from = g->outputs[i] - g->n_params;
    if (from >= 0 && from < p.n)
      p.nodes[from].is_extern = true;
  }
  if (st == LOOM_OK) {
    build_tree(&p);
    run_phase(&p, 0);
    run_phase(&p, 1);
    for (int k = 0; k < p.n; k++)
      group[k] = k;
    for (int k = 0; k < p.n; k++) {
      int r = find(&p, k);
      if (group[r] < k)
        group[r] = k;
    }
    for (int k = 0; k < p.n; k++)
      group[k] = group[find(&p, k)];
  }
  for (int k = 0; p.nodes && k < p.n; k++)
    free(p.nodes[k].out);
  free(p.nodes);
  free(p.seen);
  return st;
}
