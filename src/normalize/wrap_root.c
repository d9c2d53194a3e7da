/* wrap-root: statements written outside any block (`B[0] = 0` before the
 * prefix sum's loop, or a whole function of bare loops) get a block of
 * their own, so that every buffer store is inside a block the schedule can
 * name. Each store is wrapped where it stands: the loops, ifs and lets
 * around it stay outside the new block, which the iter-vars pass can then
 * give iter vars. A function whose body had no block gets a root block. */
#include "normalize/normalize_impl.h"

#include <stdio.h>
#include <string.h>

typedef struct wrap_ctx {
  loom_arena *a;
  const loom_func *f;
  norm_bufs visible;
  const char **names; /* block names taken so far (arena) */
  int n_names, cap_names;
} wrap_ctx;

static bool is_taken(const wrap_ctx *w, const char *name) {
  for (int i = 0; i < w->n_names; i++)
    if (!strcmp(w->names[i], name))
      return true;
  return false;
}

static bool take_name(wrap_ctx *w, const char *name) {
  if (w->n_names == w->cap_names) {
    int cap = w->cap_names ? 2 * w->cap_names : 16;
    const char **names = loom_arena_alloc(w->a, (size_t)cap * sizeof *names);
    if (!names)
      return false;
    if (w->n_names)
      memcpy(names, w->names, (size_t)w->n_names * sizeof *names);
    w->names = names;
    w->cap_names = cap;
  }
  w->names[w->n_names++] = name;
  return true;
}

static loom_visit take_block_name(void *ctx, loom_stmt *s) {
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  const char *name = s->u.realize.block->name;
  return take_name(ctx, name ? name : "") ? LOOM_VISIT_GO : LOOM_VISIT_STOP;
}

/* Takes the names of every block in s; false when out of memory. */
static bool collect_names(wrap_ctx *w, const loom_stmt *s) {
  loom_ir_visitor v = {.stmt_pre = take_block_name, .ctx = w};
  return loom_ir_visit_stmt(&v, s);
}

/* "store", or "store_1", ... when that is taken. Not named after the
 * buffer: functions equal up to renaming must stay equal (one tuning task,
 * one trace for all). */
static const char *fresh_name(wrap_ctx *w, const loom_buffer *b) {
  char name[32] = "store";
  for (int k = 1; is_taken(w, name); k++)
    snprintf(name, sizeof name, "store_%d", k);
  const char *r = loom_arena_strdup(w->a, name);
  return r && take_name(w, r) ? r : NULL;
}

static loom_visit stop_at_vector(void *ctx, loom_expr *e) {
  bool is_vector = e->dtype.lanes > 1 || e->kind == LOOM_EXPR_RAMP ||
                   e->kind == LOOM_EXPR_BROADCAST;
  return is_vector ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

/* A store on vectors stays bare: block regions are scalar ranges, and such
 * a store is already past scheduling. */
static bool is_vector_store(const loom_stmt *s) {
  /* The store's expressions: its value and indices, computed on vectors
   * anywhere (a ramp index, a float32x4). */
  loom_ir_visitor v = {.expr_pre = stop_at_vector};
  return !loom_ir_visit_stmt(&v, s);
}

static loom_stmt *wrap_store(wrap_ctx *w, loom_stmt *s) {
  if (is_vector_store(s))
    return s;
  const char *name = fresh_name(w, s->u.store.buffer);
  loom_block *b = name ? loom_ir_block(w->a, name) : NULL;
  loom_stmt *r = b ? loom_ir_stmt(w->a, LOOM_STMT_BLOCK_REALIZE, s->loc) : NULL;
  if (!r)
    return NULL;
  b->body = s;
  b->loc = s->loc;
  norm_infer_regions(w->a, b, &w->visible);
  if (loom_arena_status(w->a) != LOOM_OK)
    return NULL;
  r->u.realize.block = b;
  return r;
}

static loom_stmt *visit(void *arg, loom_stmt *s);

/* Inside a subtree with no block: wrap its stores where they stand. */
static loom_stmt *wrap_stores(void *arg, loom_stmt *s) {
  wrap_ctx *w = arg;
  if (!loom_ir_stmt_has(s, LOOM_STMT_STORE))
    return s;
  if (s->kind == LOOM_STMT_STORE)
    return wrap_store(w, s);
  int saved = w->visible.n;
  if ((s->kind == LOOM_STMT_ALLOCATE || s->kind == LOOM_STMT_DECL_BUFFER) &&
      !norm_bufs_push(&w->visible, s->u.alloc.buffer))
    return NULL;
  loom_stmt *r = norm_map_children(w->a, s, wrap_stores, w);
  w->visible.n = saved;
  return r;
}

/* Above the blocks: go down to the block-free parts; never into a block. */
static loom_stmt *visit(void *arg, loom_stmt *s) {
  wrap_ctx *w = arg;
  if (!loom_ir_stmt_has(s, LOOM_STMT_BLOCK_REALIZE))
    return wrap_stores(w, s);
  if (s->kind == LOOM_STMT_BLOCK_REALIZE)
    return s;
  int saved = w->visible.n;
  if ((s->kind == LOOM_STMT_ALLOCATE || s->kind == LOOM_STMT_DECL_BUFFER) &&
      !norm_bufs_push(&w->visible, s->u.alloc.buffer))
    return NULL;
  loom_stmt *r = norm_map_children(w->a, s, visit, w);
  w->visible.n = saved;
  return r;
}

static loom_stmt *new_root(loom_arena *a, loom_stmt *body) {
  loom_block *b = loom_ir_block(a, "root");
  loom_stmt *r = b ? loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, body->loc) : NULL;
  if (!r)
    return NULL;
  b->body = body;
  b->loc = body->loc;
  r->u.realize.block = b;
  return r;
}

loom_status norm_wrap_root(loom_arena *a, const loom_func *f, loom_func **out,
                           loom_diag *d) {
  (void)d;
  *out = (loom_func *)f;
  if (!f->body || !loom_ir_stmt_has(f->body, LOOM_STMT_STORE))
    return LOOM_OK;
  wrap_ctx w = {a, f, {0}, NULL, 0, 0};
  if (!norm_bufs_init(&w.visible, f) || !collect_names(&w, f->body)) {
    norm_bufs_free(&w.visible);
    return LOOM_NOMEM;
  }
  const loom_stmt *root = norm_root(f);
  loom_stmt *body;
  if (root) {
    /* The root's own body: its statements are the ones outside blocks. */
    const loom_block *rb = root->u.realize.block;
    bool ok = norm_bufs_push_block(&w.visible, rb);
    loom_stmt *inner = ok && rb->body ? visit(&w, rb->body) : rb->body;
    if (ok && inner && inner != rb->body) {
      loom_block *nb = loom_arena_dup(a, rb, sizeof *rb);
      loom_stmt *nr = nb ? norm_copy_stmt(a, root) : NULL;
      if (nr) {
        nb->body = inner;
        nr->u.realize.block = nb;
      }
      body = nr;
    } else {
      body = ok && inner ? f->body : NULL;
    }
  } else {
    body = visit(&w, f->body);
    if (body && body != f->body)
      body = new_root(a, body);
  }
  norm_bufs_free(&w.visible);
  if (!body)
    return LOOM_NOMEM;
  *out = body == f->body ? (loom_func *)f : norm_with_body(a, f, body);
  return *out ? LOOM_OK : LOOM_NOMEM;
}
