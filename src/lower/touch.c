/* The part of one buffer a statement touches, as a function of the variables
 * fixed outside it: the question both allocation placement and compaction
 * ask. Loops under the statement are relaxed over their ranges; block iter
 * vars and LET variables under it are replaced by what they are bound to,
 * so every answer speaks only of variables defined outside. */
#include "lower/lower_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct walker {
  loom_arena *a;
  loom_arith_ctx *ctx;
  const loom_buffer *b;
  int mask;
  const loom_var *carry;
  loom_arith_relax *relax; /* loops under the statement */
  int n_relax, cap_relax;
  loom_var **sub_vars;     /* iter vars and LET variables under it */
  loom_expr **sub_values;  /* ... and what they stand for */
  int n_sub, cap_vars, cap_values;
  int n_carrying;          /* enclosing blocks whose ordered iter vars use carry */
  int n_cond;              /* enclosing conditions: IFs, predicates, inits */
  lower_touch *out;
  loom_status st;
} walker;

static bool grow(void **p, int *cap, int n, size_t size) {
  if (n < *cap)
    return true;
  int c = *cap ? 2 * *cap : 8;
  void *q = realloc(*p, (size_t)c * size);
  if (!q)
    return false;
  *p = q;
  *cap = c;
  return true;
}

static loom_expr *subst(walker *W, loom_expr *e) {
  if (!e || W->n_sub == 0)
    return e;
  loom_expr *r = loom_ir_substitute_expr(W->a, e, W->sub_vars, W->sub_values,
                                         W->n_sub);
  if (!r)
    W->st = LOOM_NOMEM;
  return r;
}

static void push_sub(walker *W, loom_var *v, loom_expr *value) {
  if (W->st != LOOM_OK || !value)
    return;
  if (!grow((void **)&W->sub_vars, &W->cap_vars, W->n_sub, sizeof *W->sub_vars) ||
      !grow((void **)&W->sub_values, &W->cap_values, W->n_sub,
            sizeof *W->sub_values)) {
    W->st = LOOM_NOMEM;
    return;
  }
  W->sub_vars[W->n_sub] = v;
  W->sub_values[W->n_sub++] = value;
}

/* Is v bound under the statement (so no answer may mention it)? */
static bool is_inner(const walker *W, const loom_expr *e) {
  for (int i = 0; i < W->n_relax; i++)
    if (loom_ir_expr_uses(e, W->relax[i].var))
      return true;
  for (int i = 0; i < W->n_sub; i++)
    if (loom_ir_expr_uses(e, W->sub_vars[i]))
      return true;
  return false;
}

/* Joins the values x takes into dimension k of the hull. */
static void join(walker *W, int k, loom_expr *x) {
  lower_touch *t = W->out;
  if (t->is_whole[k] || W->st != LOOM_OK)
    return;
  loom_arith_intset s;
  x = subst(W, x);
  if (!x || x->dtype.lanes != 1) {
    t->is_whole[k] = true;
    return;
  }
  W->st = loom_arith_intset_eval(W->a, W->ctx, x, W->relax, W->n_relax, &s);
  if (W->st != LOOM_OK)
    return;
  if (s.is_empty)
    return;
  if (s.is_unbounded || is_inner(W, s.min) || is_inner(W, s.extent)) {
    t->is_whole[k] = true;
    return;
  }
  if (!t->is_set[k]) {
    t->hull[k] = s;
    t->is_set[k] = true;
    return;
  }
  loom_arith_intset u;
  W->st = loom_arith_intset_union(W->a, W->ctx, &t->hull[k], &s, &u);
  if (W->st == LOOM_OK && u.is_unbounded)
    t->is_whole[k] = true;
  t->hull[k] = u;
}

static void access(walker *W, loom_expr *const *indices, int n, int kind) {
  if (kind == LOWER_TOUCH_WRITE && W->n_cond > 0 &&
      (W->mask & LOWER_TOUCH_SURE_WRITE))
    return;
  if (!(W->mask & kind) && !(kind == LOWER_TOUCH_WRITE &&
                             (W->mask & LOWER_TOUCH_SURE_WRITE)))
    return;
  W->out->is_found = true;
  /* Only a write accumulates across iterations; a read there is covered
   * by the check that one iteration writes what it reads. */
  if (W->n_carrying > 0 && kind == LOWER_TOUCH_WRITE)
    W->out->is_carried = true;
  if (n != W->b->ndim) {
    for (int k = 0; k < W->b->ndim; k++)
      W->out->is_whole[k] = true;
    return;
  }
  for (int k = 0; k < n; k++)
    join(W, k, indices[k]);
}

static loom_expr *expr_hook(void *ctx, loom_expr *e) {
  walker *W = ctx;
  if (W->st != LOOM_OK)
    return e;
  if (e->kind == LOOM_EXPR_VAR && e->u.var == W->b->data)
    W->out->is_escaped = true; /* a pointer to it leaves our sight */
  if (e->kind == LOOM_EXPR_LOAD && e->u.load.buffer == W->b)
    access(W, e->u.load.indices, e->u.load.n_indices, LOWER_TOUCH_READ);
  return NULL;
}

static void walk_expr(walker *W, loom_expr *e) {
  if (e && W->st == LOOM_OK && !loom_ir_rewrite_expr(W->a, e, expr_hook, W))
    W->st = LOOM_NOMEM;
}

static void walk(walker *W, const loom_stmt *s);

static bool lists(const loom_buffer_region *rs, int n, const loom_buffer *b) {
  for (int i = 0; i < n; i++)
    if (rs[i].buffer == b)
      return true;
  return false;
}

/* A region of b that block blk views through match_buffer: both ends
 * joined, as a write where the block's regions say it writes b (a
 * tensorized block writes all its view: a fragment filled, a tile
 * stored), as a read where they say it reads b or say nothing. */
static void view(walker *W, const loom_block *blk, const loom_buffer_region *r) {
  if (r->buffer != W->b)
    return;
  loom_expr **ends = loom_arena_alloc(W->a, 2 * (size_t)r->n_ranges * sizeof *ends + 1);
  if (!ends) {
    W->st = LOOM_NOMEM;
    return;
  }
  int n = r->n_ranges;
  for (int k = 0; k < n; k++) {
    loom_range g = r->ranges[k];
    ends[k] = g.min;
    ends[n + k] = loom_ir_binary(W->a, LOOM_EXPR_SUB,
                                 loom_ir_binary(W->a, LOOM_EXPR_ADD, g.min, g.extent),
                                 loom_ir_int(W->a, g.min->dtype, 1));
    if (!ends[n + k]) {
      W->st = LOOM_NOMEM;
      return;
    }
  }
  bool is_written = lists(blk->writes, blk->n_writes, W->b);
  bool is_read = lists(blk->reads, blk->n_reads, W->b);
  if (is_read || !is_written) {
    /* A view the regions do not describe may be written too. */
    if (!is_read && W->n_carrying > 0)
      W->out->is_carried = true;
    access(W, ends, n, LOWER_TOUCH_READ);
    access(W, ends + n, n, LOWER_TOUCH_READ);
  }
  if (is_written) {
    access(W, ends, n, LOWER_TOUCH_WRITE);
    access(W, ends + n, n, LOWER_TOUCH_WRITE);
  }
}

static void walk_realize(walker *W, const loom_stmt *s) {
  const loom_block *b = s->u.realize.block;
  int mark = W->n_sub, carrying = W->n_carrying;
  int n = s->u.realize.n_iter_values < b->n_iter_vars ? s->u.realize.n_iter_values
                                                      : b->n_iter_vars;
  bool is_carrying = false;
  int64_t c;
  loom_expr *pred = s->u.realize.predicate;
  bool is_cond = pred && !(loom_ir_is_const_int(pred, &c) && c != 0);
  loom_expr **values = loom_arena_alloc(W->a, (size_t)(n + 1) * sizeof *values);
  if (!values) {
    W->st = LOOM_NOMEM;
    return;
  }
  for (int k = 0; k < n; k++)
    values[k] = subst(W, s->u.realize.iter_values[k]);
  walk_expr(W, s->u.realize.predicate);
  for (int k = 0; k < n && W->st == LOOM_OK; k++) {
    const loom_iter_var *iv = &b->iter_vars[k];
    if (W->carry && iv->kind != LOOM_ITER_SPATIAL &&
        loom_ir_expr_uses(values[k], W->carry))
      is_carrying = true;
    push_sub(W, iv->var, values[k]);
  }
  if (is_carrying)
    W->n_carrying++;
  W->n_cond += is_cond;
  for (int k = 0; k < b->n_match_buffers; k++)
    view(W, b, &b->match_buffers[k].source);
  W->n_cond++;
  walk(W, b->init);
  W->n_cond--;
  walk(W, b->body);
  W->n_cond -= is_cond;
  W->n_sub = mark;
  W->n_carrying = carrying;
}

static void walk_for(walker *W, const loom_stmt *s) {
  walk_expr(W, s->u.loop.min);
  walk_expr(W, s->u.loop.extent);
  if (W->st != LOOM_OK)
    return;
  if (!grow((void **)&W->relax, &W->cap_relax, W->n_relax, sizeof *W->relax)) {
    W->st = LOOM_NOMEM;
    return;
  }
  loom_range r = {subst(W, s->u.loop.min), subst(W, s->u.loop.extent)};
  if (!r.min || !r.extent)
    return;
  W->relax[W->n_relax++] = (loom_arith_relax){s->u.loop.var, r};
  walk(W, s->u.loop.body);
  W->n_relax--;
}

/* Whether cond is v == c for a loop v among the statements walked whose
 * range holds c: one of its iterations takes the branch, so the branch runs
 * whenever the loop does (a cross-thread reduction's write by thread 0). */
static bool is_some_iteration(const walker *W, const loom_expr *cond) {
  if (cond->kind != LOOM_EXPR_EQ)
    return false;
  const loom_expr *x = cond->u.bin.a, *y = cond->u.bin.b;
  if (x->kind != LOOM_EXPR_VAR) {
    const loom_expr *t = x;
    x = y;
    y = t;
  }
  int64_t c, lo, ext;
  if (x->kind != LOOM_EXPR_VAR || !loom_ir_is_const_int(y, &c))
    return false;
  for (int i = 0; i < W->n_relax; i++)
    if (W->relax[i].var == x->u.var && loom_ir_is_const_int(W->relax[i].range.min, &lo) &&
        loom_ir_is_const_int(W->relax[i].range.extent, &ext))
      return lo <= c && c < lo + ext;
  return false;
}

static void walk(walker *W, const loom_stmt *s) {
  if (!s || W->st != LOOM_OK)
    return;
  int mark;
  switch (s->kind) {
  case LOOM_STMT_FOR: walk_for(W, s); return;
  case LOOM_STMT_BLOCK_REALIZE: walk_realize(W, s); return;
  case LOOM_STMT_STORE:
    walk_expr(W, s->u.store.value);
    for (int k = 0; k < s->u.store.n_indices; k++)
      walk_expr(W, s->u.store.indices[k]);
    if (s->u.store.buffer == W->b)
      access(W, s->u.store.indices, s->u.store.n_indices, LOWER_TOUCH_WRITE);
    return;
  case LOOM_STMT_IF: {
    walk_expr(W, s->u.if_.cond);
    bool is_sure = is_some_iteration(W, s->u.if_.cond);
    W->n_cond += !is_sure;
    walk(W, s->u.if_.then_case);
    W->n_cond += is_sure;
    walk(W, s->u.if_.else_case);
    W->n_cond--;
    return;
  }
  case LOOM_STMT_SEQ:
    for (int k = 0; k < s->u.seq.n_stmts; k++)
      walk(W, s->u.seq.stmts[k]);
    return;
  case LOOM_STMT_EVALUATE: walk_expr(W, s->u.evaluate.value); return;
  case LOOM_STMT_LET:
    walk_expr(W, s->u.let.value);
    mark = W->n_sub;
    push_sub(W, s->u.let.var, subst(W, s->u.let.value));
    walk(W, s->u.let.body);
    W->n_sub = mark;
    return;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    /* A declaration over b's data is an access we cannot follow. */
    if (s->u.alloc.buffer->data == W->b->data)
      W->out->is_escaped = true;
    walk(W, s->u.alloc.body);
    return;
  case LOOM_STMT_ATTR:
    walk_expr(W, s->u.attr.value);
    walk(W, s->u.attr.body);
    return;
  case LOOM_STMT_ASSERT:
    walk_expr(W, s->u.assert_.cond);
    W->n_cond++; /* the body may never run */
    walk(W, s->u.assert_.body);
    W->n_cond--;
    return;
  case LOOM_STMT_COUNT_: break;
  }
}

loom_status lower_touch_eval(loom_arena *a, loom_arith_ctx *ctx,
                             const loom_stmt *const *stmts, int n,
                             const loom_buffer *b, int mask,
                             const loom_var *carry, lower_touch *out) {
  int nd = b->ndim > 0 ? b->ndim : 1;
  *out = (lower_touch){0};
  out->hull = loom_arena_alloc(a, (size_t)nd * sizeof *out->hull);
  out->is_set = loom_arena_alloc(a, (size_t)nd * sizeof *out->is_set);
  out->is_whole = loom_arena_alloc(a, (size_t)nd * sizeof *out->is_whole);
  if (!out->hull || !out->is_set || !out->is_whole)
    return LOOM_NOMEM;
  memset(out->is_set, 0, (size_t)nd * sizeof *out->is_set);
  memset(out->is_whole, 0, (size_t)nd * sizeof *out->is_whole);
  walker W = {.a = a, .ctx = ctx, .b = b, .mask = mask, .carry = carry,
              .out = out};
  for (int i = 0; i < n; i++)
    walk(&W, stmts[i]);
  free(W.relax);
  free(W.sub_vars);
  free(W.sub_values);
  return W.st;
}
