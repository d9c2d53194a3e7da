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

static bool collect_names(wrap_ctx *w, const loom_stmt *s) {
  if (!s)
    return true;
  if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
    const loom_block *b = s->u.realize.block;
    return take_name(w, b->name ? b->name : "") && collect_names(w, b->init) &&
           collect_names(w, b->body);
  }
  switch (s->kind) {
  case LOOM_STMT_FOR: return collect_names(w, s->u.loop.body);
  case LOOM_STMT_IF:
    return collect_names(w, s->u.if_.then_case) &&
           collect_names(w, s->u.if_.else_case);
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      if (!collect_names(w, s->u.seq.stmts[i]))
        return false;
    return true;
  case LOOM_STMT_LET: return collect_names(w, s->u.let.body);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return collect_names(w, s->u.alloc.body);
  case LOOM_STMT_ATTR: return collect_names(w, s->u.attr.body);
  case LOOM_STMT_ASSERT: return collect_names(w, s->u.assert_.body);
  default: return true;
  }
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

/* Whether e computes on vectors anywhere (a ramp index, a float32x4). */
static bool is_vector(const loom_expr *e) {
  if (!e)
    return false;
  if (e->dtype.lanes > 1)
    return true;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
  case LOOM_EXPR_VAR: return false;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST: return is_vector(e->u.unary.a);
  case LOOM_EXPR_SELECT:
    return is_vector(e->u.select.cond) || is_vector(e->u.select.t) ||
           is_vector(e->u.select.f);
  case LOOM_EXPR_LOAD:
    for (int i = 0; i < e->u.load.n_indices; i++)
      if (is_vector(e->u.load.indices[i]))
        return true;
    return false;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      if (is_vector(e->u.call.args[i]))
        return true;
    return false;
  case LOOM_EXPR_LET: return is_vector(e->u.let.value) || is_vector(e->u.let.body);
  case LOOM_EXPR_RAMP:
  case LOOM_EXPR_BROADCAST: return true;
  default: return is_vector(e->u.bin.a) || is_vector(e->u.bin.b);
  }
}

/* A store on vectors stays bare: block regions are scalar ranges, and such
 * a store is already past scheduling. */
static bool is_vector_store(const loom_stmt *s) {
  for (int i = 0; i < s->u.store.n_indices; i++)
    if (is_vector(s->u.store.indices[i]))
      return true;
  return is_vector(s->u.store.value);
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
  if (!norm_has_store(s))
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
  if (!norm_has_block(s))
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
  if (!f->body || !norm_has_store(f->body))
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
