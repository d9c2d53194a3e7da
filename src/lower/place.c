/* Allocation placement: each buffer a block allocates moves down to the
 * lowest loop or block that holds every use of it (the lowest common
 * ancestor, as TVM's PlanAndUpdateBufferAllocationLocation does, and no
 * lower than its storage scope allows under thread-bound loops), so that
 * compaction (compact.c) can shrink it to what one iteration touches and a
 * parallel loop gives each thread its own copy.
 *
 * Moving an allocation into a loop's body gives every iteration a fresh
 * buffer, which is only right when no iteration reads what another wrote.
 * A loop is entered only when, for one iteration of it, the elements read
 * lie inside those surely written (relaxing the loops below; a write under a
 * condition may not happen), and no reduction or ordered iter var of a
 * block writing the buffer depends on it (the accumulator of a reduction
 * stays outside its reduction loops). Nor does it enter a vectorized loop,
 * whose iterations may run interleaved. */
#include "lower/lower_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct placer {
  loom_arena *a;
  loom_arith_ctx *ctx;
  const loom_buffer *b;
  const loom_stmt **path; /* statements from the body down to the walk */
  int n_path, cap_path;
  const loom_stmt **lca;  /* the common prefix of the paths of all uses */
  int n_lca, cap_lca;
  bool is_used;
  loom_status st;
} placer;

static void push(placer *P, const loom_stmt *s) {
  if (P->n_path == P->cap_path) {
    int cap = P->cap_path ? 2 * P->cap_path : 16;
    const loom_stmt **p = realloc(P->path, (size_t)cap * sizeof *p);
    if (!p) {
      P->st = LOOM_NOMEM;
      return;
    }
    P->path = p;
    P->cap_path = cap;
  }
  P->path[P->n_path++] = s;
}

/* A use of the buffer where the walk stands (the top n statements). */
static void use(placer *P, int n) {
  if (!P->is_used) {
    if (n > P->cap_lca) {
      const loom_stmt **p = realloc(P->lca, (size_t)n * sizeof *p);
      if (!p) {
        P->st = LOOM_NOMEM;
        return;
      }
      P->lca = p;
      P->cap_lca = n;
    }
    memcpy(P->lca, P->path, (size_t)n * sizeof *P->lca);
    P->n_lca = n;
    P->is_used = true;
    return;
  }
  int k = 0;
  while (k < P->n_lca && k < n && P->lca[k] == P->path[k])
    k++;
  P->n_lca = k;
}

typedef struct expr_use {
  const loom_buffer *b;
  bool is_used;
} expr_use;

static loom_expr *use_hook(void *ctx, loom_expr *e) {
  expr_use *u = ctx;
  if ((e->kind == LOOM_EXPR_LOAD && e->u.load.buffer == u->b) ||
      (e->kind == LOOM_EXPR_VAR && e->u.var == u->b->data))
    u->is_used = true;
  return u->is_used ? e : NULL;
}

/* Whether e uses the buffer; the walk's own statement counts in the path
 * unless is_outside (a loop's bounds, a block's bindings: evaluated
 * outside the body the allocation could move into). */
static void scan(placer *P, loom_expr *e, bool is_outside) {
  if (!e || P->st != LOOM_OK)
    return;
  expr_use u = {P->b, false};
  if (!loom_ir_rewrite_expr(P->a, e, use_hook, &u))
    P->st = LOOM_NOMEM;
  if (u.is_used)
    use(P, P->n_path - (is_outside ? 1 : 0));
}

static void find(placer *P, const loom_stmt *s) {
  if (!s || P->st != LOOM_OK)
    return;
  push(P, s);
  const loom_block *b;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    scan(P, s->u.loop.min, true);
    scan(P, s->u.loop.extent, true);
    find(P, s->u.loop.body);
    break;
  case LOOM_STMT_BLOCK_REALIZE:
    b = s->u.realize.block;
    for (int k = 0; k < s->u.realize.n_iter_values; k++)
      scan(P, s->u.realize.iter_values[k], true);
    scan(P, s->u.realize.predicate, true);
    for (int k = 0; k < b->n_match_buffers; k++)
      if (b->match_buffers[k].source.buffer == P->b)
        use(P, P->n_path);
    find(P, b->init);
    find(P, b->body);
    break;
  case LOOM_STMT_STORE:
    if (s->u.store.buffer == P->b)
      use(P, P->n_path);
    scan(P, s->u.store.value, false);
    for (int k = 0; k < s->u.store.n_indices; k++)
      scan(P, s->u.store.indices[k], false);
    break;
  case LOOM_STMT_IF:
    scan(P, s->u.if_.cond, false);
    find(P, s->u.if_.then_case);
    find(P, s->u.if_.else_case);
    break;
  case LOOM_STMT_SEQ:
    for (int k = 0; k < s->u.seq.n_stmts; k++)
      find(P, s->u.seq.stmts[k]);
    break;
  case LOOM_STMT_EVALUATE: scan(P, s->u.evaluate.value, false); break;
  case LOOM_STMT_LET:
    scan(P, s->u.let.value, false);
    find(P, s->u.let.body);
    break;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    if (s->u.alloc.buffer->data == P->b->data)
      use(P, P->n_path);
    find(P, s->u.alloc.body);
    break;
  case LOOM_STMT_ATTR:
    scan(P, s->u.attr.value, false);
    find(P, s->u.attr.body);
    break;
  case LOOM_STMT_ASSERT:
    scan(P, s->u.assert_.cond, false);
    find(P, s->u.assert_.body);
    break;
  case LOOM_STMT_COUNT_: break;
  }
  P->n_path--;
}

/* e1 <= e2 for every value of the variables outside? */
static bool proves_le(placer *P, loom_expr *x, loom_expr *y) {
  loom_expr *c = loom_ir_binary(P->a, LOOM_EXPR_LE, x, y);
  return c && loom_arith_can_prove(P->ctx, c) == LOOM_ARITH_TRUE;
}

/* May the buffer live inside loop s's body, fresh in each iteration? */
static bool is_private_to(placer *P, const loom_stmt *s) {
  const loom_stmt *body = s->u.loop.body;
  lower_touch r, w;
  const loom_var *v = s->u.loop.var;
  if ((P->st = lower_touch_eval(P->a, P->ctx, &body, 1, P->b, LOWER_TOUCH_READ,
                                v, &r)) != LOOM_OK ||
      (P->st = lower_touch_eval(P->a, P->ctx, &body, 1, P->b, LOWER_TOUCH_SURE_WRITE,
                                v, &w)) != LOOM_OK)
    return false;
  if (r.is_escaped || w.is_escaped || r.is_carried || w.is_carried)
    return false;
  if (!r.is_found)
    return true;
  if (!w.is_found)
    return false;
  for (int k = 0; k < P->b->ndim; k++) {
    if (!r.is_set[k])
      continue; /* read nowhere along this dimension's values */
    if (r.is_whole[k] || w.is_whole[k] || !w.is_set[k])
      return false;
    const loom_arith_intset *x = &r.hull[k], *y = &w.hull[k];
    loom_expr *x_end = loom_ir_binary(P->a, LOOM_EXPR_ADD, x->min, x->extent);
    loom_expr *y_end = loom_ir_binary(P->a, LOOM_EXPR_ADD, y->min, y->extent);
    if (!proves_le(P, y->min, x->min) || !proves_le(P, x_end, y_end))
      return false;
  }
  return true;
}

/* The statement at P->lca[target] with the buffer moved into it; every
 * statement above it copied with the new child, and the block at P->lca[from]
 * without the buffer. */
static loom_stmt *rebuild(placer *P, int i, int from, int target) {
  loom_arena *a = P->a;
  const loom_stmt *s = P->lca[i];
  loom_stmt *c = loom_arena_dup(a, s, sizeof *s);
  if (!c)
    return NULL;
  loom_buffer *b = (loom_buffer *)P->b;
  if (i == target && s->kind == LOOM_STMT_FOR) {
    loom_stmt *al = loom_ir_stmt(a, LOOM_STMT_ALLOCATE, s->u.loop.body->loc);
    if (!al)
      return NULL;
    al->u.alloc.buffer = b;
    al->u.alloc.body = s->u.loop.body;
    c->u.loop.body = al;
    return c;
  }
  loom_stmt *kid = i == target ? NULL : rebuild(P, i + 1, from, target);
  const loom_stmt *old = i == target ? NULL : P->lca[i + 1];
  if (i != target && !kid)
    return NULL;
  loom_block *blk;
  switch (s->kind) {
  case LOOM_STMT_FOR: c->u.loop.body = kid; break;
  case LOOM_STMT_BLOCK_REALIZE:
    blk = loom_arena_dup(a, s->u.realize.block, sizeof *blk);
    if (!blk)
      return NULL;
    c->u.realize.block = blk;
    if (old && blk->init == old)
      blk->init = kid;
    else if (old)
      blk->body = kid;
    if (i == from || i == target) {
      int n = blk->n_alloc_buffers;
      loom_buffer **bs = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *bs);
      if (!bs)
        return NULL;
      int m = 0;
      for (int k = 0; k < n; k++)
        if (blk->alloc_buffers[k] != b)
          bs[m++] = blk->alloc_buffers[k];
      if (i == target)
        bs[m++] = b;
      blk->alloc_buffers = bs;
      blk->n_alloc_buffers = m;
    }
    break;
  case LOOM_STMT_IF:
    if (s->u.if_.then_case == old)
      c->u.if_.then_case = kid;
    else
      c->u.if_.else_case = kid;
    break;
  case LOOM_STMT_SEQ: {
    int n = s->u.seq.n_stmts;
    loom_stmt **items = loom_arena_alloc(a, (size_t)n * sizeof *items);
    if (!items)
      return NULL;
    for (int k = 0; k < n; k++)
      items[k] = s->u.seq.stmts[k] == old ? kid : s->u.seq.stmts[k];
    c->u.seq.stmts = items;
    break;
  }
  case LOOM_STMT_LET: c->u.let.body = kid; break;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: c->u.alloc.body = kid; break;
  case LOOM_STMT_ATTR: c->u.attr.body = kid; break;
  case LOOM_STMT_ASSERT: c->u.assert_.body = kid; break;
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return NULL;
  }
  return c;
}

/* Moves buffer b, allocated by the block realized at depth `from` of every
 * path, as deep as is safe. */
static loom_status place_one(placer *P, loom_stmt **body) {
  P->n_path = 0;
  P->is_used = false;
  find(P, *body);
  if (P->st != LOOM_OK || !P->is_used)
    return P->st;
  int from = -1;
  for (int i = 0; i < P->n_lca && from < 0; i++) {
    const loom_stmt *s = P->lca[i];
    if (s->kind != LOOM_STMT_BLOCK_REALIZE)
      continue;
    const loom_block *blk = s->u.realize.block;
    for (int k = 0; k < blk->n_alloc_buffers; k++)
      if (blk->alloc_buffers[k] == P->b)
        from = i;
  }
  if (from < 0)
    return LOOM_OK;
  int target = from;
  bool is_shared = loom_ir_scope_kind(P->b->scope) == LOOM_SCOPE_SHARED ||
                   loom_ir_scope_kind(P->b->scope) == LOOM_SCOPE_WARP;
  for (int i = from + 1; i < P->n_lca; i++) {
    const loom_stmt *s = P->lca[i];
    if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
      target = i;
    } else if (s->kind == LOOM_STMT_FOR) {
      /* A vectorized loop's iterations run interleaved (the C backend
       * marks it ivdep), which a buffer fresh in each would not survive.
       * Under a thread-bound loop, the storage scope says whether the
       * buffer may live there: global memory stays above every thread.
       * Shared memory may go below the threads that share it, to the
       * serial loop each of whose iterations fills it (a tile per k
       * step), though not to them: one buffer serves all of them, and
       * compaction keeps it covering what they all touch (compact.c). */
      bool is_thread = s->u.loop.kind == LOOM_FOR_THREAD_BINDING &&
                       !loom_ir_scope_fits_inside(P->b->scope, s->u.loop.thread);
      if (s->u.loop.kind == LOOM_FOR_VECTORIZED ||
          (is_thread && !(is_shared && loom_ir_scope_is_shared_by(P->b->scope,
                                                                  s->u.loop.thread))) ||
          !is_private_to(P, s))
        break;
      if (!is_thread)
        target = i;
    }
  }
  TRY(P->st);
  if (target == from)
    return LOOM_OK;
  loom_stmt *r = rebuild(P, 0, from, target);
  if (!r)
    return LOOM_NOMEM;
  *body = r;
  return LOOM_OK;
}

/* The first buffer, in pre-order of the blocks, not yet placed. */
static const loom_buffer *next_buffer(const loom_stmt *s, const loom_ptrmap *done,
                                      int depth) {
  if (!s || depth > 4096)
    return NULL;
  const loom_buffer *b = NULL;
  switch (s->kind) {
  case LOOM_STMT_FOR: return next_buffer(s->u.loop.body, done, depth + 1);
  case LOOM_STMT_BLOCK_REALIZE: {
    const loom_block *blk = s->u.realize.block;
    for (int k = 0; k < blk->n_alloc_buffers; k++)
      if (loom_ptrmap_get(done, blk->alloc_buffers[k]) < 0)
        return blk->alloc_buffers[k];
    if ((b = next_buffer(blk->init, done, depth + 1)))
      return b;
    return next_buffer(blk->body, done, depth + 1);
  }
  case LOOM_STMT_IF:
    if ((b = next_buffer(s->u.if_.then_case, done, depth + 1)))
      return b;
    return next_buffer(s->u.if_.else_case, done, depth + 1);
  case LOOM_STMT_SEQ:
    for (int k = 0; k < s->u.seq.n_stmts && !b; k++)
      b = next_buffer(s->u.seq.stmts[k], done, depth + 1);
    return b;
  case LOOM_STMT_LET: return next_buffer(s->u.let.body, done, depth + 1);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return next_buffer(s->u.alloc.body, done, depth + 1);
  case LOOM_STMT_ATTR: return next_buffer(s->u.attr.body, done, depth + 1);
  case LOOM_STMT_ASSERT: return next_buffer(s->u.assert_.body, done, depth + 1);
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return NULL;
  }
  return NULL;
}

loom_status lower_place(loom_arena *a, loom_arith_ctx *ctx, loom_stmt **body) {
  placer P = {.a = a, .ctx = ctx};
  loom_ptrmap done = {0};
  loom_status st = LOOM_OK;
  const loom_buffer *b;
  while (st == LOOM_OK && (b = next_buffer(*body, &done, 0))) {
    st = loom_ptrmap_put(&done, b, 1);
    P.b = b;
    P.st = LOOM_OK;
    if (st == LOOM_OK)
      st = place_one(&P, body);
  }
  loom_ptrmap_free(&done);
  free(P.path);
  free(P.lca);
  return st;
}
