/* A group's prim funcs merged into one, as TVM's FuseTIR merges them: the
 * values the group reads from outside become parameters, the last call's
 * result the output, and every value made and read inside a buffer the
 * merged function allocates in its root block. Each call's body is copied
 * in call order with its buffers and variables made anew (a callee called
 * twice in one group defines nothing twice), and buffer and block names
 * that meet are told apart by a suffix (T_add, T_add_1). */
#include "fuse/fuse_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

bool fuse_is_mergeable(const loom_func *f) {
  const loom_stmt *r = f->body;
  if (!r || r->kind != LOOM_STMT_BLOCK_REALIZE || r->u.realize.n_iter_values ||
      r->u.realize.predicate)
    return false;
  const loom_block *b = r->u.realize.block;
  if (b->n_iter_vars || b->init || b->n_match_buffers || b->n_annotations)
    return false;
  if (f->n_params > FUSE_MAX_PARAMS)
    return false;
  for (int i = 0; i < f->n_params; i++) {
    const loom_buffer *p = f->params[i].buffer;
    if (!p || p->n_strides || p->elem_offset || p->n_axis_separators ||
        strcmp(p->scope, "global"))
      return false;
    for (int k = 0; k < p->ndim; k++)
      if (!loom_ir_is_const_int(p->shape[k], &(int64_t){0}))
        return false;
  }
  return true;
}

/* ---- names ----------------------------------------------------------------- */

typedef struct names {
  const char **items;
  int n, cap;
} names;

static bool is_taken(const names *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->items[i], name))
      return true;
  return false;
}

/* base, or base<sep>1, base<sep>2, ... the first not taken; now taken. */
static const char *unique(loom_arena *a, names *s, const char *base, const char *sep) {
  const char *name = base;
  for (int k = 1; name && is_taken(s, name); k++)
    name = loom_arena_printf(a, "%s%s%d", base, sep, k);
  if (!name)
    return NULL;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 16;
    const char **items = realloc(s->items, sizeof *items * (size_t)cap);
    if (!items)
      return NULL;
    s->items = items;
    s->cap = cap;
  }
  s->items[s->n++] = name;
  return name;
}

/* ---- one call's body, remade ------------------------------------------------- */

typedef struct remap {
  loom_arena *a;
  names *buffer_names, *block_names;
  const loom_buffer **old_bufs;
  loom_buffer **new_bufs;
  int n_bufs, cap_bufs;
  /* Parallel arrays, as the mutator takes them: old_vars[i] becomes
   * new_vars[i], whose uses are new_refs[i]. */
  const loom_var **old_vars;
  loom_var **new_vars;
  loom_expr **new_refs;
  int n_vars, cap_vars;
  bool has_failed;
} remap;

/* Room in each of the arrays items[0..n_arrays) for one more than n. */
static bool reserve(void ***items, int n_arrays, int n, int *cap) {
  if (n < *cap)
    return true;
  int c = *cap ? 2 * *cap : 16;
  for (int i = 0; i < n_arrays; i++) {
    void *p = realloc(*items[i], sizeof(void *) * (size_t)c);
    if (!p)
      return false;
    *items[i] = p;
  }
  *cap = c;
  return true;
}

static bool map_var(remap *r, const loom_var *old, loom_var *nv) {
  void **arrays[3] = {(void **)&r->old_vars, (void **)&r->new_vars,
                      (void **)&r->new_refs};
  loom_expr *ref = loom_ir_ref(r->a, nv);
  if (!ref || !reserve(arrays, 3, r->n_vars, &r->cap_vars))
    return false;
  r->old_vars[r->n_vars] = old;
  r->new_vars[r->n_vars] = nv;
  r->new_refs[r->n_vars++] = ref;
  return true;
}

static bool renew_var(remap *r, const loom_var *v) {
  loom_var *nv = loom_arena_dup(r->a, v, sizeof *v);
  return nv && map_var(r, v, nv);
}

static loom_var *var_for(const remap *r, const loom_var *v) {
  for (int i = 0; i < r->n_vars; i++)
    if (r->old_vars[i] == v)
      return r->new_vars[i];
  return (loom_var *)v;
}

static loom_buffer *buffer_for(const remap *r, const loom_buffer *b) {
  for (int i = 0; i < r->n_bufs; i++)
    if (r->old_bufs[i] == b)
      return r->new_bufs[i];
  return (loom_buffer *)b;
}

/* old is nb in the merged function, its data pointer too. */
static bool map_buffer(remap *r, const loom_buffer *old, loom_buffer *nb) {
  void **arrays[2] = {(void **)&r->old_bufs, (void **)&r->new_bufs};
  if (!reserve(arrays, 2, r->n_bufs, &r->cap_bufs))
    return false;
  r->old_bufs[r->n_bufs] = old;
  r->new_bufs[r->n_bufs++] = nb;
  return map_var(r, old->data, nb->data);
}

/* A copy of b under a name of its own in the merged function. */
static loom_buffer *copy_buffer(loom_arena *a, names *taken, const loom_buffer *b,
                                const char *base) {
  loom_buffer *nb = loom_arena_dup(a, b, sizeof *b);
  const char *name = unique(a, taken, base, "_");
  if (!nb || !name || !(nb->data = loom_arena_dup(a, b->data, sizeof *b->data)))
    return NULL;
  nb->name = name;
  nb->data->name = name;
  return nb;
}

static loom_visit define_var(void *ctx, loom_stmt *s) {
  remap *r = ctx;
  bool ok = true;
  if (s->kind == LOOM_STMT_FOR)
    ok = renew_var(r, s->u.loop.var);
  else if (s->kind == LOOM_STMT_LET)
    ok = renew_var(r, s->u.let.var);
  else if (s->kind == LOOM_STMT_BLOCK_REALIZE)
    for (int i = 0; i < s->u.realize.block->n_iter_vars && ok; i++)
      ok = renew_var(r, s->u.realize.block->iter_vars[i].var);
  if (!ok) {
    r->has_failed = true;
    return LOOM_VISIT_STOP;
  }
  return LOOM_VISIT_GO;
}

static loom_visit define_buffer(void *ctx, loom_buffer *b) {
  remap *r = ctx;
  if (buffer_for(r, b) != b)
    return LOOM_VISIT_GO;
  loom_buffer *nb = copy_buffer(r->a, r->buffer_names, b, b->name);
  if (!nb || !map_buffer(r, b, nb)) {
    r->has_failed = true;
    return LOOM_VISIT_STOP;
  }
  return LOOM_VISIT_GO;
}

static loom_expr *load_post(void *ctx, loom_expr *e) {
  remap *r = ctx;
  if (e->kind != LOOM_EXPR_LOAD)
    return e;
  loom_buffer *nb = buffer_for(r, e->u.load.buffer);
  if (nb == e->u.load.buffer)
    return e;
  loom_expr *c = loom_arena_dup(r->a, e, sizeof *e);
  if (c)
    c->u.load.buffer = nb;
  return c;
}

static loom_stmt *stmt_post(void *ctx, loom_stmt *s) {
  remap *r = ctx;
  loom_stmt *c = loom_arena_dup(r->a, s, sizeof *s);
  if (!c)
    return NULL;
  switch (s->kind) {
  case LOOM_STMT_STORE: c->u.store.buffer = buffer_for(r, s->u.store.buffer); break;
  case LOOM_STMT_FOR: c->u.loop.var = var_for(r, s->u.loop.var); break;
  case LOOM_STMT_LET: c->u.let.var = var_for(r, s->u.let.var); break;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: c->u.alloc.buffer = buffer_for(r, s->u.alloc.buffer); break;
  default: break;
  }
  return c;
}

static loom_buffer_region *regions(remap *r, const loom_buffer_region *rs, int n) {
  loom_buffer_region *out = n ? loom_arena_dup(r->a, rs, sizeof *rs * (size_t)n) : NULL;
  for (int i = 0; out && i < n; i++)
    out[i].buffer = buffer_for(r, rs[i].buffer);
  if (n && !out)
    r->has_failed = true;
  return out;
}

static bool has_twice(const loom_buffer_region *rs, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (rs[i].buffer == rs[j].buffer)
        return true;
  return false;
}

/* The regions of c inferred again when a buffer now appears in two of them
 * (a call that passed one tensor as two arguments): one region per buffer,
 * the hull of the accesses. TVM keeps the first region alone, which misses
 * the other accesses (docs/tvm-differences.md). */
static bool join_regions(remap *r, loom_block *c) {
  bool reads = has_twice(c->reads, c->n_reads), writes = has_twice(c->writes, c->n_writes);
  if (!reads && !writes)
    return true;
  int n = 0;
  loom_buffer **outer = loom_arena_alloc(r->a, sizeof *outer * (size_t)(c->n_reads + c->n_writes + 1));
  for (int i = 0; outer && i < c->n_reads + c->n_writes; i++) {
    loom_buffer *b = i < c->n_reads ? c->reads[i].buffer : c->writes[i - c->n_reads].buffer;
    int k = 0;
    while (k < n && outer[k] != b)
      k++;
    if (k == n)
      outer[n++] = b;
  }
  loom_diag d;
  loom_diag_init(&d);
  bool ok = outer && loom_ir_infer_block_regions(r->a, c, reads, writes, outer, n, &d) == LOOM_OK;
  loom_diag_free(&d);
  return ok;
}

static loom_block *block_post(void *ctx, const loom_block *old, loom_block *b) {
  remap *r = ctx;
  loom_block *c = loom_arena_dup(r->a, b, sizeof *b);
  if (!c || !(c->name = unique(r->a, r->block_names, old->name, "")))
    return NULL;
  c->reads = regions(r, b->reads, b->n_reads);
  c->writes = regions(r, b->writes, b->n_writes);
  if (b->n_iter_vars &&
      !(c->iter_vars = loom_arena_dup(r->a, b->iter_vars,
                                      sizeof *b->iter_vars * (size_t)b->n_iter_vars)))
    return NULL;
  for (int i = 0; i < b->n_iter_vars; i++)
    c->iter_vars[i].var = var_for(r, b->iter_vars[i].var);
  if (b->n_alloc_buffers &&
      !(c->alloc_buffers = loom_arena_dup(r->a, b->alloc_buffers,
                                          sizeof *b->alloc_buffers * (size_t)b->n_alloc_buffers)))
    return NULL;
  for (int i = 0; i < b->n_alloc_buffers; i++)
    c->alloc_buffers[i] = buffer_for(r, b->alloc_buffers[i]);
  if (b->n_match_buffers &&
      !(c->match_buffers = loom_arena_dup(r->a, b->match_buffers,
                                          sizeof *b->match_buffers * (size_t)b->n_match_buffers)))
    return NULL;
  for (int i = 0; i < b->n_match_buffers; i++) {
    c->match_buffers[i].buffer = buffer_for(r, b->match_buffers[i].buffer);
    c->match_buffers[i].source.buffer = buffer_for(r, b->match_buffers[i].source.buffer);
  }
  return r->has_failed || !join_regions(r, c) ? NULL : c;
}

/* The body of f's root block with f's parameters made params[i] and
 * everything it defines made anew; the root's own buffers, anew, are
 * appended to allocs. */
static loom_stmt *remake(remap *r, const loom_func *f, loom_buffer *const *params,
                         loom_buffer **allocs, int *n_allocs) {
  r->n_bufs = r->n_vars = 0;
  for (int i = 0; i < f->n_params; i++)
    if (!map_buffer(r, f->params[i].buffer, params[i]))
      return NULL;
  const loom_block *root = f->body->u.realize.block;
  loom_ir_visitor v = {.stmt_pre = define_var, .buffer = define_buffer, .ctx = r};
  for (int i = 0; i < root->n_alloc_buffers && !r->has_failed; i++)
    define_buffer(r, root->alloc_buffers[i]);
  loom_ir_visit_stmt(&v, root->body);
  if (r->has_failed)
    return NULL;
  for (int i = 0; i < root->n_alloc_buffers; i++)
    allocs[(*n_allocs)++] = buffer_for(r, root->alloc_buffers[i]);
  loom_ir_mutator m = {.vars = r->old_vars, .values = r->new_refs,
                       .n_vars = r->n_vars, .expr_post = load_post,
                       .stmt_post = stmt_post, .block_post = block_post, .ctx = r};
  loom_stmt *s = loom_ir_mutate_stmt(r->a, &m, root->body);
  return r->has_failed ? NULL : s;
}

/* ---- the group ------------------------------------------------------------------ */

typedef struct merger {
  loom_arena *a;
  const loom_module *m;
  const loom_graph *g;
  const int *calls;
  int n;
  names buffer_names, block_names;
  remap r;
  int *ext;              /* values read from outside, in order of first use */
  int n_ext;
  loom_buffer **ext_buf; /* their parameters */
  loom_buffer **made;    /* made[j]: call j's result (the output for the last) */
} merger;

/* The member that makes value v; -1 when v comes from outside. */
static int maker(const merger *g, int v) {
  for (int j = 0; j < g->n; j++)
    if (g->g->calls[g->calls[j]].out == v)
      return j;
  return -1;
}

static const loom_func *callee(const merger *g, int j) {
  return loom_ir_module_find(g->m, g->g->calls[g->calls[j]].func);
}

/* name as an identifier: every character outside [A-Za-z0-9_] an
 * underscore (ONNX's "input.1" is input_1), as graph values print. */
static const char *identifier(loom_arena *a, const char *name) {
  char *s = loom_arena_strdup(a, name);
  for (char *c = s; c && *c; c++)
    if (!isalnum((unsigned char)*c) && *c != '_')
      *c = '_';
  return s;
}

/* The parameters, named after the graph's values, and the result of each
 * call, after the callee's result with "_intermediate", as TVM names
 * them. */
static loom_status make_buffers(merger *g) {
  for (int j = 0; j < g->n; j++) {
    const loom_graph_call *c = &g->g->calls[g->calls[j]];
    const loom_func *f = callee(g, j);
    if (!f || f->n_params != c->n_args + 1)
      return LOOM_ERROR;
    for (int i = 0; i < c->n_args; i++) {
      int v = c->args[i], k = 0;
      while (k < g->n_ext && g->ext[k] != v)
        k++;
      if (k < g->n_ext || maker(g, v) >= 0)
        continue;
      const char *name = identifier(g->a, g->g->values[v].name);
      g->ext[g->n_ext] = v;
      if (!name || !(g->ext_buf[g->n_ext++] = copy_buffer(g->a, &g->buffer_names,
                                                           f->params[i].buffer, name)))
        return LOOM_NOMEM;
    }
  }
  for (int j = 0; j < g->n; j++) {
    const loom_buffer *res = callee(g, j)->params[g->g->calls[g->calls[j]].n_args].buffer;
    const char *name = loom_arena_printf(g->a, "%s_intermediate", res->name);
    if (!name || !(g->made[j] = copy_buffer(g->a, &g->buffer_names, res, name)))
      return LOOM_NOMEM;
  }
  return LOOM_OK;
}

/* Call j's parameters in the merged function. */
static void member_params(const merger *g, int j, loom_buffer **params) {
  const loom_graph_call *c = &g->g->calls[g->calls[j]];
  for (int i = 0; i < c->n_args; i++) {
    int at = maker(g, c->args[i]), k = 0;
    while (at < 0 && g->ext[k] != c->args[i])
      k++;
    params[i] = at >= 0 ? g->made[at] : g->ext_buf[k];
  }
  params[c->n_args] = g->made[j];
}

static loom_status add_stmts(loom_stmt ***items, int *n, int *cap, loom_stmt *s) {
  int k = s->kind == LOOM_STMT_SEQ ? s->u.seq.n_stmts : 1;
  loom_stmt **from = s->kind == LOOM_STMT_SEQ ? s->u.seq.stmts : &s;
  if (*n + k > *cap) {
    int c = 2 * (*n + k);
    loom_stmt **p = realloc(*items, sizeof *p * (size_t)c);
    if (!p)
      return LOOM_NOMEM;
    *items = p;
    *cap = c;
  }
  memcpy(*items + *n, from, sizeof *from * (size_t)k);
  *n += k;
  return LOOM_OK;
}

/* The merged function's root: each call's own buffers, then its result
 * (the last call's aside), over the calls' bodies in order. */
static loom_status make_root(merger *g, loom_stmt **out) {
  int n_allocs = g->n - 1, n_stmts = 0, cap = 0;
  for (int j = 0; j < g->n; j++)
    n_allocs += callee(g, j)->body->u.realize.block->n_alloc_buffers;
  loom_buffer **allocs = loom_arena_alloc(g->a, sizeof *allocs * (size_t)(n_allocs + 1));
  loom_stmt **stmts = NULL;
  loom_buffer *params[FUSE_MAX_PARAMS];
  if (!allocs)
    return LOOM_NOMEM;
  n_allocs = 0;
  loom_status st = LOOM_OK;
  for (int j = 0; j < g->n && st == LOOM_OK; j++) {
    member_params(g, j, params);
    loom_stmt *s = remake(&g->r, callee(g, j), params, allocs, &n_allocs);
    st = s ? add_stmts(&stmts, &n_stmts, &cap, s) : LOOM_NOMEM;
    if (j < g->n - 1)
      allocs[n_allocs++] = g->made[j];
  }
  loom_block *root = loom_ir_block(g->a, "root");
  loom_stmt *realize = loom_ir_stmt(g->a, LOOM_STMT_BLOCK_REALIZE, (loom_loc){0});
  loom_stmt *seq = loom_ir_stmt(g->a, LOOM_STMT_SEQ, (loom_loc){0});
  if (st == LOOM_OK && (!root || !realize || !seq ||
                        !(seq->u.seq.stmts = loom_arena_dup(g->a, stmts, sizeof *stmts * (size_t)n_stmts))))
    st = LOOM_NOMEM;
  free(stmts);
  if (st != LOOM_OK)
    return st;
  seq->u.seq.n_stmts = n_stmts;
  root->alloc_buffers = allocs;
  root->n_alloc_buffers = n_allocs;
  root->body = seq;
  realize->u.realize.block = root;
  *out = realize;
  return LOOM_OK;
}

/* tir.noalias when every callee has it; nothing else (no global_symbol:
 * the merged function is private; no layout_free_buffers), as TVM makes
 * it. */
static loom_status make_attrs(merger *g, loom_func *f) {
  bool is_noalias = true;
  for (int j = 0; j < g->n; j++) {
    const loom_value *v = loom_ir_attr_get(callee(g, j)->attrs, callee(g, j)->n_attrs,
                                           "tir.noalias");
    int64_t on;
    is_noalias &= v && v->kind == LOOM_VALUE_EXPR && loom_ir_is_const_int(v->expr, &on) && on;
  }
  f->attrs = loom_arena_alloc(g->a, sizeof *f->attrs);
  if (!f->attrs)
    return LOOM_NOMEM;
  f->n_attrs = 0;
  if (is_noalias)
    f->attrs[f->n_attrs++] = (loom_attr){
        "tir.noalias", loom_ir_value_expr(g->a, loom_ir_int(g->a, LOOM_BOOL, 1))};
  for (int i = 0; i < f->n_attrs; i++)
    if (!f->attrs[i].value)
      return LOOM_NOMEM;
  return LOOM_OK;
}

static loom_status make_func(merger *g, const char *name, loom_func **out) {
  TRY(make_buffers(g));
  loom_func *f = loom_ir_func(g->a, name);
  loom_param *params = loom_arena_alloc(g->a, sizeof *params * (size_t)(g->n_ext + 1));
  if (!f || !params)
    return LOOM_NOMEM;
  for (int k = 0; k <= g->n_ext; k++) {
    params[k].buffer = k < g->n_ext ? g->ext_buf[k] : g->made[g->n - 1];
    if (!(params[k].var = loom_ir_var(g->a, params[k].buffer->name, LOOM_HANDLE)))
      return LOOM_NOMEM;
  }
  f->params = params;
  f->n_params = g->n_ext + 1;
  f->ret_type = LOOM_VOID;
  TRY(make_root(g, &f->body));
  TRY(make_attrs(g, f));
  *out = f;
  return LOOM_OK;
}

loom_status fuse_merge(loom_arena *a, const loom_module *m, const loom_graph *g,
                       const int *calls, int n, const char *name,
                       loom_func **out, loom_diag *d) {
  merger mg = {.a = a, .m = m, .g = g, .calls = calls, .n = n};
  mg.r = (remap){.a = a, .buffer_names = &mg.buffer_names, .block_names = &mg.block_names};
  int n_args = 0;
  for (int j = 0; j < n; j++)
    n_args += g->calls[calls[j]].n_args;
  mg.ext = malloc(sizeof *mg.ext * (size_t)(n_args + 1));
  mg.ext_buf = malloc(sizeof *mg.ext_buf * (size_t)(n_args + 1));
  mg.made = malloc(sizeof *mg.made * (size_t)n);
  loom_status st = mg.ext && mg.ext_buf && mg.made ? make_func(&mg, name, out) : LOOM_NOMEM;
  if (st == LOOM_ERROR)
    st = loom_diag_error(d, g->calls[calls[n - 1]].loc,
                         "cannot fuse the calls ending with %s: a callee does not "
                         "take the call's tensors (internal)", g->calls[calls[n - 1]].func);
  else if (st == LOOM_OK)
    st = loom_ir_verify_func(*out, d);
  free(mg.ext);
  free(mg.ext_buf);
  free(mg.made);
  free(mg.buffer_names.items);
  free(mg.block_names.items);
  free(mg.r.old_bufs);
  free(mg.r.new_bufs);
  free(mg.r.old_vars);
  free(mg.r.new_vars);
  free(mg.r.new_refs);
  return st;
}
