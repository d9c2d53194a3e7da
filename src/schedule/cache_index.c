/* cache_index: precompute the index expressions a block repeats into
 * buffers `index_var_<k>`, each filled by a block `index_<k>` before the
 * block's nest, the way TVM's cache_index picks them: the largest pure
 * computations of the block's store, counted by occurrence, and those seen
 * fewer than cse_thresh times broken into their direct subexpressions,
 * which inherit the count (TVM's common-subexpression tables). */
#include "schedule/sched_impl.h"

#include <stdio.h>
#include <string.h>

#define MAX_INDEX_VARS 16
#define MAX_VARS 64

/* ---- expression measures -------------------------------------------------------- */

static loom_expr *count_hook(void *ctx, loom_expr *e) {
  (void)e;
  (*(int *)ctx)++;
  return NULL;
}

/* TVM's complexity: the number of nodes. */
static int complexity(loom_arena *a, loom_expr *e) {
  int n = 0;
  loom_ir_rewrite_expr(a, e, count_hook, &n);
  return n;
}

typedef struct purity {
  const loom_block *b;
  bool is_pure;
} purity;

/* A load reads state; calls other than the math intrinsics may have
 * effects; a variable other than the block's iters has no place in the
 * index block. */
static loom_expr *pure_hook(void *ctx, loom_expr *e) {
  purity *w = ctx;
  switch (e->kind) {
  case LOOM_EXPR_LOAD:
  case LOOM_EXPR_LET:
    w->is_pure = false;
    return e;
  case LOOM_EXPR_CALL:
    if (e->u.call.op >= LOOM_OP_CALL_EXTERN &&
        e->u.call.op != LOOM_OP_CALL_PURE_EXTERN)
      w->is_pure = false;
    return NULL;
  case LOOM_EXPR_VAR: {
    bool is_iter = false;
    for (int i = 0; i < w->b->n_iter_vars; i++)
      is_iter |= w->b->iter_vars[i].var == e->u.var;
    if (!is_iter)
      w->is_pure = false;
    return NULL;
  }
  default:
    return NULL;
  }
}

static bool is_leaf(const loom_expr *e) {
  return e->kind == LOOM_EXPR_INT || e->kind == LOOM_EXPR_FLOAT ||
         e->kind == LOOM_EXPR_STR || e->kind == LOOM_EXPR_VAR;
}

static bool is_eligible(loom_arena *a, const loom_block *b, loom_expr *e) {
  if (is_leaf(e) || e->kind == LOOM_EXPR_RAMP ||
      e->kind == LOOM_EXPR_BROADCAST || complexity(a, e) <= 1)
    return false;
  purity w = {b, true};
  loom_ir_rewrite_expr(a, e, pure_hook, &w);
  return w.is_pure;
}

/* ---- the table of computations ------------------------------------------------ */

typedef struct cand {
  loom_expr *e;
  int64_t count;
  int size;
} cand;

typedef struct table {
  loom_arena *a;
  const loom_block *b;
  cand *items;
  int n, cap;
  loom_expr *root; /* the node whose operands a walk is visiting */
  bool is_oom;
} table;

static int find(const table *t, const loom_expr *e) {
  for (int i = 0; i < t->n; i++)
    if (loom_ir_same_expr(t->items[i].e, e))
      return i;
  return -1;
}

/* Adds count to e's entry, or inserts e after every entry at least as
 * large (TVM keeps the table sorted by decreasing size). */
static void add(table *t, loom_expr *e, int64_t count, bool sorted) {
  int at = find(t, e);
  if (at >= 0) {
    t->items[at].count += count;
    return;
  }
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 16;
    cand *items = realloc(t->items, (size_t)cap * sizeof *items);
    if (!items) {
      t->is_oom = true;
      return;
    }
    t->items = items;
    t->cap = cap;
  }
  int size = complexity(t->a, e);
  at = t->n;
  if (sorted)
    for (at = 0; at < t->n && t->items[at].size >= size; at++)
      ;
  memmove(t->items + at + 1, t->items + at,
          (size_t)(t->n - at) * sizeof *t->items);
  t->items[at] = (cand){e, count, size};
  t->n++;
}

/* The largest eligible computations under the walk's root (not the root
 * itself), each counted once per occurrence. */
typedef struct collect {
  table *t;
  loom_expr *skip;
  loom_expr **out;
  int n, cap;
  int64_t count;
  bool sorted;
} collect;

static loom_expr *collect_hook(void *ctx, loom_expr *e) {
  collect *w = ctx;
  if (e == w->skip)
    return NULL;
  if (is_leaf(e))
    return e;
  if (!is_eligible(w->t->a, w->t->b, e))
    return NULL;
  add(w->t, e, w->count, w->sorted);
  return e;
}

/* ---- the order TVM lists the chosen expressions in ------------------------------ */

typedef struct post {
  loom_arena *a;
  const table *t;
  int64_t thresh;
  loom_expr *cur;
  loom_expr *chosen[MAX_INDEX_VARS];
  int n;
  bool too_many;
} post;

static void post_visit(post *w, loom_expr *e);

static loom_expr *post_hook(void *ctx, loom_expr *e) {
  post *w = ctx;
  if (e == w->cur)
    return NULL;
  post_visit(w, e);
  return e;
}

/* Visits e's operands, then e: the chosen computations e equals, in the
 * order a post-order walk first meets them. */
static void post_visit(post *w, loom_expr *e) {
  loom_expr *saved = w->cur;
  w->cur = e;
  loom_ir_rewrite_expr(w->a, e, post_hook, w);
  w->cur = saved;
  for (int i = 0; i < w->t->n; i++) {
    const cand *c = &w->t->items[i];
    if (c->count < w->thresh || !loom_ir_same_expr(c->e, e))
      continue;
    bool seen = false;
    for (int k = 0; k < w->n; k++)
      seen |= w->chosen[k] == c->e;
    if (seen)
      continue;
    if (w->n == MAX_INDEX_VARS) {
      w->too_many = true;
      continue;
    }
    w->chosen[w->n++] = c->e;
  }
}

/* ---- replacing the chosen expressions ------------------------------------------ */

typedef struct repl {
  loom_expr *what, *by;
} repl;

static loom_expr *repl_hook(void *ctx, loom_expr *e) {
  repl *w = ctx;
  return loom_ir_same_expr(e, w->what) ? w->by : NULL;
}

/* The variables e uses, in the order a post-order walk meets them. */
typedef struct vars_of {
  loom_var *v[MAX_VARS];
  int n;
} vars_of;

static loom_expr *vars_hook(void *ctx, loom_expr *e) {
  vars_of *w = ctx;
  if (e->kind != LOOM_EXPR_VAR)
    return NULL;
  for (int i = 0; i < w->n; i++)
    if (w->v[i] == e->u.var)
      return e;
  if (w->n < MAX_VARS)
    w->v[w->n++] = e->u.var;
  return e;
}

/* ---- the primitive ---------------------------------------------------------------- */

/* The loop above the block whose variable is v, or NULL. */
static const loom_stmt *loop_of(const sched_path *p, int ri, const loom_var *v) {
  for (int k = 0; k < ri; k++)
    if (p->stmts[k]->kind == LOOM_STMT_FOR && p->stmts[k]->u.loop.var == v)
      return p->stmts[k];
  return NULL;
}

/* The block `index_<k>` storing e (over the block's iters its vars name)
 * into a new buffer index_var_<k>, under loops ax<j>. */
static loom_stmt *index_stage(loom_arena *a, const sched_path *p, int ri,
                              int k, loom_expr *e, const char *scope,
                              loom_buffer **out, const char **why) {
  const loom_stmt *r = p->stmts[ri];
  const loom_block *b = r->u.realize.block;
  vars_of vs = {.n = 0};
  loom_ir_rewrite_expr(a, e, vars_hook, &vs);
  int n = vs.n;
  loom_expr **shape = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *shape);
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *vals);
  loom_expr **idx = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *idx);
  loom_range *pt = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *pt);
  const loom_stmt **loops = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *loops);
  loom_var **ax = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *ax);
  const loom_var **from = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *from);
  if (!shape || !iters || !vals || !idx || !pt || !loops || !ax || !from)
    return NULL;
  for (int j = 0; j < n; j++) {
    /* The iter's binding must be a loop of its own, from 0. */
    const loom_expr *bind = NULL;
    for (int i = 0; i < b->n_iter_vars; i++)
      if (b->iter_vars[i].var == vs.v[j])
        bind = r->u.realize.iter_values[i];
    int64_t mn;
    loops[j] = bind && bind->kind == LOOM_EXPR_VAR
                   ? loop_of(p, ri, bind->u.var)
                   : NULL;
    for (int i = 0; i < j && loops[j]; i++)
      if (loops[i] == loops[j])
        loops[j] = NULL;
    if (!loops[j] || !loom_ir_is_const_int(loops[j]->u.loop.min, &mn) ||
        mn != 0) {
      *why = "an iter it uses is not bound to a loop of its own from 0";
      return NULL;
    }
    loom_expr *ext = loops[j]->u.loop.extent;
    char nm[32];
    snprintf(nm, sizeof nm, "ax%d", j);
    ax[j] = loom_ir_var(a, nm, loops[j]->u.loop.var->dtype);
    snprintf(nm, sizeof nm, "v%d", j);
    loom_var *v = loom_ir_var(a, nm, vs.v[j]->dtype);
    loom_expr *zero = loom_ir_int(a, vs.v[j]->dtype, 0);
    if (!ax[j] || !v || !zero)
      return NULL;
    shape[j] = ext;
    iters[j] = (loom_iter_var){v, {zero, ext}, LOOM_ITER_SPATIAL};
    vals[j] = loom_ir_ref(a, ax[j]);
    idx[j] = loom_ir_ref(a, v);
    pt[j] = (loom_range){idx[j], loom_ir_int(a, v->dtype, 1)};
    from[j] = vs.v[j];
    if (!vals[j] || !idx[j] || !pt[j].extent)
      return NULL;
  }
  char name[32];
  snprintf(name, sizeof name, "index_var_%d", k);
  loom_buffer *buf = loom_ir_buffer(a, name, e->dtype, shape, n);
  if (!buf)
    return NULL;
  buf->scope = loom_arena_strdup(a, scope);
  buf->data->scope = buf->scope;
  if (n == 1) { /* TVM gives the buffer an explicit unit stride */
    buf->strides = loom_arena_alloc(a, sizeof *buf->strides);
    if (!buf->strides || !(buf->strides[0] = loom_ir_int(a, LOOM_INT32, 1)))
      return NULL;
    buf->n_strides = 1;
  }
  sched_map m = {.vars = from, .values = idx, .n = n};
  loom_expr *value = sched_subst_expr(a, e, &m);
  snprintf(name, sizeof name, "index_%d", k);
  loom_block *nb = loom_ir_block(a, name);
  loom_buffer_region *wr = loom_arena_alloc(a, sizeof *wr);
  loom_stmt *store = loom_ir_stmt(a, LOOM_STMT_STORE, r->loc);
  loom_stmt *realize = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, r->loc);
  if (!buf->scope || !value || !nb || !wr || !store || !realize)
    return NULL;
  store->u.store.buffer = buf;
  store->u.store.value = value;
  store->u.store.indices = idx;
  store->u.store.n_indices = n;
  *wr = (loom_buffer_region){buf, pt, n};
  nb->iter_vars = iters;
  nb->n_iter_vars = n;
  nb->writes = wr;
  nb->n_writes = 1;
  nb->body = store;
  realize->u.realize.block = nb;
  realize->u.realize.iter_values = vals;
  realize->u.realize.n_iter_values = n;
  loom_stmt *nest = realize;
  for (int j = n - 1; j >= 0; j--) {
    loom_stmt *l = loom_ir_stmt(a, LOOM_STMT_FOR, r->loc);
    if (!l || !(l->u.loop.min = loom_ir_int(a, ax[j]->dtype, 0)))
      return NULL;
    l->u.loop.var = ax[j];
    l->u.loop.extent = shape[j];
    l->u.loop.kind = LOOM_FOR_SERIAL;
    l->u.loop.body = nest;
    nest = l;
  }
  *out = buf;
  return nest;
}

loom_status sched_apply_cache_index(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  table t = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_status st = LOOM_OK;
  const char *scope = sched_attr_str(c, 0, "");
  int64_t thresh = sched_attr_int(c, 1, -1);
  int ri = p.n - 1;
  loom_stmt *r = p.stmts[ri];
  const loom_block *b = r->u.realize.block;
  int sc = sched_scope_index(&p, ri);
  if (sc < 0) {
    st = sched_fail(c, "block '%s' is the root block", b->name);
    goto out;
  }
  if (thresh < 0) {
    st = sched_fail(c, "cse_thresh must not be negative");
    goto out;
  }
  if (!sched_is_storage_scope(scope)) {
    st = sched_fail(c, "\"%s\" is not a storage scope", scope);
    goto out;
  }
  /* An init stays as it is: TVM caches the indices of the body alone. */
  if (b->body->kind != LOOM_STMT_STORE) {
    st = sched_fail(c, "the body of block '%s' is not a single store", b->name);
    goto out;
  }
  loom_stmt *store = b->body;

  /* The table: the largest computations of the store, then those seen
   * fewer than thresh times broken down, largest first. */
  t.a = a;
  t.b = b;
  collect w = {&t, NULL, NULL, 0, 0, 1, false};
  loom_ir_rewrite_expr(a, store->u.store.value, collect_hook, &w);
  for (int i = 0; i < store->u.store.n_indices; i++)
    loom_ir_rewrite_expr(a, store->u.store.indices[i], collect_hook, &w);
  for (int i = 1; i < t.n; i++) { /* stable, by decreasing size */
    cand x = t.items[i];
    int k = i;
    while (k > 0 && t.items[k - 1].size < x.size) {
      t.items[k] = t.items[k - 1];
      k--;
    }
    t.items[k] = x;
  }
  for (int i = 0; i < t.n && !t.is_oom; i++) {
    if (t.items[i].count >= thresh)
      continue;
    collect d = {&t, t.items[i].e, NULL, 0, 0, t.items[i].count, true};
    loom_ir_rewrite_expr(a, t.items[i].e, collect_hook, &d);
  }
  if (t.is_oom) {
    st = sched_nomem(c);
    goto out;
  }
  post pw = {.a = a, .t = &t, .thresh = thresh};
  post_visit(&pw, store->u.store.value);
  if (pw.too_many) {
    st = sched_fail(c, "block '%s' repeats more than %d index computations",
                    b->name, MAX_INDEX_VARS);
    goto out;
  }
  int n = pw.n;
  for (int i = 1; i < n; i++) { /* stable, by decreasing size */
    loom_expr *x = pw.chosen[i];
    int sx = complexity(a, x), k = i;
    while (k > 0 && complexity(a, pw.chosen[k - 1]) < sx) {
      pw.chosen[k] = pw.chosen[k - 1];
      k--;
    }
    pw.chosen[k] = x;
  }
  if (n == 0)
    goto out; /* nothing repeats: the program stays as it is */

  /* The stages, and the store with each expression replaced by its load. */
  loom_stmt *stages[MAX_INDEX_VARS];
  loom_buffer *bufs[MAX_INDEX_VARS];
  loom_expr *value = store->u.store.value;
  loom_expr **sidx = loom_arena_dup(
      a, store->u.store.indices,
      (size_t)(store->u.store.n_indices + 1) * sizeof *sidx);
  if (!sidx) {
    st = sched_nomem(c);
    goto out;
  }
  for (int k = 0; k < n; k++) {
    const char *why = NULL;
    stages[k] = index_stage(a, &p, ri, k, pw.chosen[k], scope, &bufs[k], &why);
    if (!stages[k]) {
      st = why ? sched_fail(c, "cannot cache an index of block '%s': %s",
                            b->name, why)
               : sched_nomem(c);
      goto out;
    }
    vars_of vs = {.n = 0};
    loom_ir_rewrite_expr(a, pw.chosen[k], vars_hook, &vs);
    loom_expr *at[MAX_VARS];
    for (int j = 0; j < vs.n; j++)
      if (!(at[j] = loom_ir_ref(a, vs.v[j]))) {
        st = sched_nomem(c);
        goto out;
      }
    repl rw = {pw.chosen[k], loom_ir_load(a, bufs[k], at, vs.n)};
    if (!rw.by || !(value = loom_ir_rewrite_expr(a, value, repl_hook, &rw))) {
      st = sched_nomem(c);
      goto out;
    }
    for (int i = 0; i < store->u.store.n_indices; i++)
      if (!(sidx[i] = loom_ir_rewrite_expr(a, sidx[i], repl_hook, &rw))) {
        st = sched_nomem(c);
        goto out;
      }
  }
  loom_stmt *ns = loom_arena_dup(a, store, sizeof *ns);
  loom_block *nb = loom_arena_dup(a, b, sizeof *nb);
  loom_stmt *nr = loom_arena_dup(a, r, sizeof *nr);
  if (!ns || !nb || !nr) {
    st = sched_nomem(c);
    goto out;
  }
  ns->u.store.value = value;
  ns->u.store.indices = sidx;
  nb->body = ns;
  nr->u.realize.block = nb;
  /* Up to the top of the scope's body, then the stages go before the
   * statement that holds the block. */
  int ti = p.stmts[sc + 1]->kind == LOOM_STMT_SEQ ? sc + 2 : sc + 1;
  loom_stmt *cur = nr;
  for (int k = ri - 1; cur && k >= ti; k--)
    cur = sched_with_child(a, p.stmts[k], p.stmts[k + 1], cur);
  const loom_stmt *sr = p.stmts[sc];
  const loom_block *sb = sr->u.realize.block;
  loom_stmt *body = sb->body;
  bool is_seq = body->kind == LOOM_STMT_SEQ;
  int n_old = is_seq ? body->u.seq.n_stmts : 1;
  loom_stmt **items = loom_arena_alloc(a, (size_t)(n_old + n) * sizeof *items);
  loom_stmt *seq = loom_ir_stmt(a, LOOM_STMT_SEQ, body->loc);
  loom_buffer **allocs = loom_arena_alloc(
      a, (size_t)(sb->n_alloc_buffers + n) * sizeof *allocs);
  loom_block *nsb = loom_arena_dup(a, sb, sizeof *nsb);
  loom_stmt *nsr = loom_arena_dup(a, sr, sizeof *nsr);
  if (!cur || !items || !seq || !allocs || !nsb || !nsr) {
    st = sched_nomem(c);
    goto out;
  }
  int m = 0;
  for (int i = 0; i < n_old; i++) {
    loom_stmt *x = is_seq ? body->u.seq.stmts[i] : body;
    if (x == p.stmts[ti]) {
      for (int k = 0; k < n; k++)
        items[m++] = stages[k];
      x = cur;
    }
    items[m++] = x;
  }
  seq->u.seq.stmts = items;
  seq->u.seq.n_stmts = m;
  for (int i = 0; i < sb->n_alloc_buffers; i++)
    allocs[i] = sb->alloc_buffers[i];
  for (int k = 0; k < n; k++)
    allocs[sb->n_alloc_buffers + k] = bufs[k];
  nsb->body = seq;
  nsb->alloc_buffers = allocs;
  nsb->n_alloc_buffers = sb->n_alloc_buffers + n;
  nsr->u.realize.block = nsb;
  if (!(c->mod = sched_replace(a, c->mod, &p, sc, nsr))) {
    st = sched_nomem(c);
    goto out;
  }
  for (int k = 0; k < n && st == LOOM_OK; k++) {
    const loom_stmt *x = stages[k];
    while (x->kind == LOOM_STMT_FOR)
      x = x->u.loop.body;
    st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = p.func,
                                      .block = x->u.realize.block->name});
  }
out:
  free(t.items);
  sched_path_free(&p);
  return st;
}
