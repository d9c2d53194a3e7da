/* Finding blocks and loops again after a rewrite, and rebuilding the chain of
 * ancestors above a replaced statement. A block is found by its name, a loop
 * by its loop variable; both survive every rewrite that keeps them. */
#include "schedule/sched_impl.h"

#include <stdint.h>
#include <string.h>

void sched_path_free(sched_path *p) {
  free(p->stmts);
  memset(p, 0, sizeof *p);
}

bool sched_path_push(sched_path *p, loom_stmt *s) {
  if (p->n == p->cap) {
    int cap = p->cap ? 2 * p->cap : 32;
    loom_stmt **a = realloc(p->stmts, (size_t)cap * sizeof *a);
    if (!a)
      return false;
    p->stmts = a;
    p->cap = cap;
  }
  p->stmts[p->n++] = s;
  return true;
}

typedef struct kids {
  const loom_stmt *parent;
  loom_stmt **out;
  int n, max;
} kids;

/* The parent is entered; each child is taken and passed over. */
static loom_visit take_kid(void *ctx, loom_stmt *s) {
  kids *k = ctx;
  if (s == k->parent)
    return LOOM_VISIT_GO;
  k->out[k->n++] = s;
  return k->n < k->max ? LOOM_VISIT_SKIP : LOOM_VISIT_STOP;
}

int sched_children(const loom_stmt *s, loom_stmt **out, int max) {
  kids k = {s, out, 0, max};
  loom_ir_visitor v = {.stmt_pre = take_kid, .ctx = &k};
  if (max > 0)
    loom_ir_visit_stmt(&v, s);
  return k.n;
}

/* Depth-first search in program order; the path holds the ancestors of the
 * statement being visited, and of the match when the search stops there.
 * Recursion depth is the IR's nesting depth. */
typedef bool (*match_fn)(const loom_stmt *s, const void *key);

typedef struct search {
  match_fn match;
  const void *key;
  sched_path *p;
  int *count;     /* NULL: stop at the first match */
  bool is_found;
  bool has_failed;
} search;

static loom_visit search_pre(void *ctx, loom_stmt *s) {
  search *q = ctx;
  if (!sched_path_push(q->p, s)) {
    q->has_failed = true;
    return LOOM_VISIT_STOP;
  }
  if (!q->match(s, q->key))
    return LOOM_VISIT_GO;
  if (!q->count) {
    q->is_found = true;
    return LOOM_VISIT_STOP;
  }
  (*q->count)++;
  return LOOM_VISIT_GO;
}

static loom_visit search_post(void *ctx, loom_stmt *s) {
  ((search *)ctx)->p->n--;
  return LOOM_VISIT_GO;
}

/* 1 when found (the path ends at the match), 0 when not, -1 when out of
 * memory. */
static int search_for(loom_stmt *s, match_fn match, const void *key,
                      sched_path *p, int *count) {
  search q = {match, key, p, count, false, false};
  loom_ir_visitor v = {.stmt_pre = search_pre, .stmt_post = search_post,
                       .ctx = &q};
  loom_ir_visit_stmt(&v, s);
  return q.has_failed ? -1 : q.is_found;
}

static bool match_block(const loom_stmt *s, const void *key) {
  return s->kind == LOOM_STMT_BLOCK_REALIZE && s->u.realize.block->name &&
         !strcmp(s->u.realize.block->name, key);
}

static bool match_loop(const loom_stmt *s, const void *key) {
  return s->kind == LOOM_STMT_FOR && s->u.loop.var == key;
}

static bool find(const loom_func *f, match_fn m, const void *key,
                 sched_path *p) {
  p->n = 0;
  if (!f->body)
    return false;
  int r = search_for(f->body, m, key, p, NULL);
  if (r <= 0) {
    p->n = 0;
    return false;
  }
  return true;
}

bool sched_find_block(const loom_func *f, const char *name, sched_path *p) {
  return find(f, match_block, name, p);
}

bool sched_find_loop(const loom_func *f, const loom_var *v, sched_path *p) {
  return find(f, match_loop, v, p);
}

int sched_count_blocks(const loom_func *f, const char *name) {
  sched_path p = {0};
  int count = 0;
  if (f->body)
    search_for(f->body, match_block, name, &p, &count);
  sched_path_free(&p);
  return count;
}

int sched_scope_index(const sched_path *p, int depth) {
  for (int i = depth - 1; i >= 0; i--)
    if (p->stmts[i]->kind == LOOM_STMT_BLOCK_REALIZE)
      return i;
  return -1;
}

/* ---- rebuilding ------------------------------------------------------------- */

static loom_stmt *copy_stmt(loom_arena *a, const loom_stmt *s) {
  loom_stmt *c = loom_arena_alloc(a, sizeof *c);
  if (c)
    *c = *s;
  return c;
}

loom_stmt *sched_with_child(loom_arena *a, const loom_stmt *parent,
                            const loom_stmt *old, loom_stmt *new_child) {
  loom_stmt *c = copy_stmt(a, parent);
  if (!c)
    return NULL;
  switch (parent->kind) {
  case LOOM_STMT_FOR:
    if (parent->u.loop.body != old || !new_child)
      return NULL;
    c->u.loop.body = new_child;
    return c;
  case LOOM_STMT_BLOCK_REALIZE: {
    loom_block *b = loom_arena_alloc(a, sizeof *b);
    if (!b || !new_child)
      return NULL;
    *b = *parent->u.realize.block;
    if (b->body == old)
      b->body = new_child;
    else if (b->init == old)
      b->init = new_child;
    else
      return NULL;
    c->u.realize.block = b;
    return c;
  }
  case LOOM_STMT_SEQ: {
    int n = parent->u.seq.n_stmts;
    loom_stmt **items = loom_arena_alloc(a, (size_t)n * sizeof *items);
    if (!items)
      return NULL;
    int k = 0;
    bool found = false;
    for (int i = 0; i < n; i++) {
      if (parent->u.seq.stmts[i] == old && !found) {
        found = true;
        if (new_child)
          items[k++] = new_child;
      } else
        items[k++] = parent->u.seq.stmts[i];
    }
    if (!found)
      return NULL;
    if (k == 1)
      return items[0];
    c->u.seq.stmts = items;
    c->u.seq.n_stmts = k;
    return c;
  }
  case LOOM_STMT_IF:
    if (!new_child)
      return NULL;
    if (parent->u.if_.then_case == old)
      c->u.if_.then_case = new_child;
    else if (parent->u.if_.else_case == old)
      c->u.if_.else_case = new_child;
    else
      return NULL;
    return c;
  case LOOM_STMT_LET:
    if (parent->u.let.body != old || !new_child)
      return NULL;
    c->u.let.body = new_child;
    return c;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    if (parent->u.alloc.body != old || !new_child)
      return NULL;
    c->u.alloc.body = new_child;
    return c;
  case LOOM_STMT_ATTR:
    if (parent->u.attr.body != old || !new_child)
      return NULL;
    c->u.attr.body = new_child;
    return c;
  case LOOM_STMT_ASSERT:
    if (parent->u.assert_.body != old || !new_child)
      return NULL;
    c->u.assert_.body = new_child;
    return c;
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE: /* no child statements */
  case LOOM_STMT_COUNT_: break;
  }
  return NULL;
}

const loom_module *sched_replace(loom_arena *a, const loom_module *m,
                                 const sched_path *p, int depth,
                                 loom_stmt *s_new) {
  loom_stmt *cur = s_new;
  for (int i = depth; i > 0; i--) {
    cur = sched_with_child(a, p->stmts[i - 1], p->stmts[i], cur);
    if (!cur)
      return NULL;
  }
  loom_func *f = loom_arena_alloc(a, sizeof *f);
  loom_module *nm = loom_arena_alloc(a, sizeof *nm);
  loom_func **funcs =
      loom_arena_alloc(a, (size_t)(m->n_funcs ? m->n_funcs : 1) * sizeof *funcs);
  if (!f || !nm || !funcs || !cur)
    return NULL;
  *f = *m->funcs[p->func];
  f->body = cur;
  *nm = *m;
  for (int i = 0; i < m->n_funcs; i++)
    funcs[i] = m->funcs[i];
  funcs[p->func] = f;
  nm->funcs = funcs;
  return nm;
}

loom_arith_ctx *sched_arith_for_path(const sched_path *p, int depth) {
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  if (!ctx)
    return NULL;
  for (int i = 0; i < depth && i < p->n; i++)
    if (p->stmts[i]->kind == LOOM_STMT_FOR)
      sched_arith_bind_loop(ctx, p->stmts[i]);
  return ctx;
}

/* The type of a buffer's default offset: its shape's; a scalar buffer's
 * is int64 in TVM. */
static loom_dtype offset_type(const loom_buffer *b) {
  return b->ndim ? b->shape[0]->dtype : LOOM_INT64;
}

bool sched_keep_offset_type(loom_arena *a, const loom_buffer *old, loom_buffer *nb) {
  loom_dtype old_index = offset_type(old), new_index = offset_type(nb);
  if (old->elem_offset || loom_dtype_eq(old_index, new_index))
    return true;
  return (nb->elem_offset = loom_ir_int(a, old_index, 0)) != NULL;
}

bool sched_has_predicate(const loom_stmt *r) {
  int64_t t;
  return r->u.realize.predicate && !(loom_ir_is_const_int(r->u.realize.predicate, &t) && t);
}

loom_expr *sched_conjuncts_without(loom_arena *a, loom_expr *pred,
                                   const loom_var *const *vars, int n, bool *oom) {
  if (!pred)
    return NULL;
  if (pred->kind == LOOM_EXPR_AND) {
    loom_expr *x = sched_conjuncts_without(a, pred->u.bin.a, vars, n, oom);
    loom_expr *y = sched_conjuncts_without(a, pred->u.bin.b, vars, n, oom);
    if (!x || !y)
      return x ? x : y;
    loom_expr *e = loom_ir_binary(a, LOOM_EXPR_AND, x, y);
    *oom |= !e;
    return e;
  }
  for (int k = 0; k < n; k++)
    if (sched_expr_uses(pred, vars[k]))
      return NULL;
  int64_t t;
  return loom_ir_is_const_int(pred, &t) && t ? NULL : pred;
}

void sched_arith_bind_loop(loom_arith_ctx *ctx, const loom_stmt *loop) {
  sched_arith_bind_range(ctx, loop->u.loop.var, loop->u.loop.min,
                         loop->u.loop.extent);
}

void sched_arith_bind_range(loom_arith_ctx *ctx, const loom_var *v,
                            const loom_expr *min, const loom_expr *extent) {
  int64_t mn, ext;
  if (!min || !extent || !loom_ir_is_const_int(min, &mn))
    return;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_ir_is_const_int(extent, &ext)) {
    if (ext > 0)
      loom_arith_bind(ctx, v, mn, mn + ext - 1, &d);
  } else if (mn >= 0) {
    /* A symbolic extent fits its type: the variable is at least min and
     * below the type's largest value, which sets it apart from unbound
     * symbols (normalize.c orders a sum's terms by it). */
    loom_arith_bind(ctx, v, mn, SCHED_SYMBOLIC_MAX, &d);
  }
  loom_diag_free(&d);
}

typedef struct each {
  const loom_stmt *top; /* entered, not handed to fn */
  sched_path *p;
  loom_status (*fn)(const sched_path *, void *);
  void *arg;
  loom_status st;
} each;

/* Every block realize is handed to fn with its path, and not entered. */
static loom_visit each_pre(void *ctx, loom_stmt *s) {
  each *e = ctx;
  if (s == e->top)
    return LOOM_VISIT_GO;
  if (!sched_path_push(e->p, s)) {
    e->st = LOOM_NOMEM;
    return LOOM_VISIT_STOP;
  }
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  e->st = e->fn(e->p, e->arg);
  return e->st == LOOM_OK ? LOOM_VISIT_SKIP : LOOM_VISIT_STOP;
}

static loom_visit each_post(void *ctx, loom_stmt *s) {
  each *e = ctx;
  if (s != e->top)
    e->p->n--;
  return LOOM_VISIT_GO;
}

loom_status sched_each_child_block(sched_path *p,
                                   loom_status (*fn)(const sched_path *q,
                                                     void *arg),
                                   void *arg) {
  int n = p->n;
  each e = {p->stmts[n - 1], p, fn, arg, LOOM_OK};
  loom_ir_visitor v = {.stmt_pre = each_pre, .stmt_post = each_post,
                       .ctx = &e};
  loom_ir_visit_stmt(&v, e.top);
  p->n = n;
  return e.st;
}

/* ---- the nth block of a name ------------------------------------------------- */

typedef struct nth_key {
  const char *name;
  int left; /* matches still to skip */
} nth_key;

static bool match_nth_block(const loom_stmt *s, const void *key) {
  nth_key *k = (nth_key *)key;
  return match_block(s, k->name) && k->left-- == 0;
}

bool sched_find_block_nth(const loom_func *f, const char *name, int nth,
                          sched_path *p) {
  nth_key k = {name, nth};
  return find(f, match_nth_block, &k, p);
}
