/* compute_inline: substitute a producer block's value into every load of
 * the buffer it writes, then drop the block, its now empty loops and the
 * buffer. Blocks whose accesses change get their read and write regions
 * inferred again, as TVM does. */
#include "schedule/sched_impl.h"

#include <string.h>

typedef struct buffer_list {
  loom_buffer **items;
  int n, cap;
} buffer_list;

static bool buffers_push(buffer_list *l, loom_buffer *b) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    loom_buffer **a = realloc(l->items, (size_t)cap * sizeof *a);
    if (!a)
      return false;
    l->items = a;
    l->cap = cap;
  }
  l->items[l->n++] = b;
  return true;
}

static loom_visit take_allocs(void *ctx, loom_stmt *s) {
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  const loom_block *b = s->u.realize.block;
  for (int i = 0; i < b->n_alloc_buffers; i++)
    if (!buffers_push(ctx, b->alloc_buffers[i]))
      return LOOM_VISIT_STOP;
  return LOOM_VISIT_GO;
}

/* Every buffer allocated by a block under s (s included when a realize). */
static bool collect_allocs(const loom_stmt *s, buffer_list *out) {
  loom_ir_visitor v = {.stmt_pre = take_allocs, .ctx = out};
  return loom_ir_visit_stmt(&v, s);
}

typedef struct inliner {
  loom_buffer *buffer;
  const loom_block *producer;
  const loom_expr *value;
  const loom_var **index_vars; /* the producer's store indices */
  int n_indices;
  const loom_func *func;
  loom_buffer *const *all;    /* parameters and every allocation */
  int n_all;
} inliner;

static loom_expr *inline_load(const sched_map *m, loom_arena *a,
                              loom_expr *load) {
  const inliner *in = m->ctx;
  if (load->u.load.buffer != in->buffer)
    return load;
  sched_map vm = {.vars = in->index_vars, .values = load->u.load.indices,
                  .n = in->n_indices};
  return sched_subst_expr(a, (loom_expr *)in->value, &vm);
}

static bool mentions(const loom_buffer_region *r, int n, const loom_buffer *b) {
  for (int i = 0; i < n; i++)
    if (r[i].buffer == b)
      return true;
  return false;
}

static loom_block *infer_regions(loom_arena *a, loom_block *b,
                                 loom_buffer *const *all, int n_all,
                                 const loom_buffer *gone);

/* A block that accessed the inlined buffer gets its regions again, from the
 * buffers visible outside it. */
static loom_block *finish_block(const sched_map *m, loom_arena *a,
                                const loom_block *old, loom_block *b) {
  const inliner *in = m->ctx;
  if (!mentions(old->reads, old->n_reads, in->buffer) &&
      !mentions(old->writes, old->n_writes, in->buffer))
    return b;
  return infer_regions(a, b, in->all, in->n_all, in->buffer);
}

loom_block *sched_infer_regions(loom_arena *a, const loom_func *f,
                                loom_block *b, const loom_buffer *gone) {
  buffer_list all = {0};
  bool ok = true;
  for (int i = 0; ok && i < f->n_params; i++)
    if (f->params[i].buffer)
      ok = buffers_push(&all, f->params[i].buffer);
  ok = ok && collect_allocs(f->body, &all);
  loom_block *r = ok ? infer_regions(a, b, all.items, all.n, gone) : NULL;
  free(all.items);
  return r;
}

static loom_block *infer_regions(loom_arena *a, loom_block *b,
                                 loom_buffer *const *all, int n_all,
                                 const loom_buffer *gone) {
  loom_block *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *b;
  buffer_list inner = {0}, outer = {0};
  loom_stmt fake = {.kind = LOOM_STMT_BLOCK_REALIZE};
  fake.u.realize.block = c;
  bool ok = collect_allocs(&fake, &inner);
  for (int i = 0; ok && i < n_all; i++) {
    bool is_inner = false;
    for (int j = 0; j < inner.n; j++)
      is_inner |= inner.items[j] == all[i];
    if (!is_inner && all[i] != gone)
      ok = buffers_push(&outer, all[i]);
  }
  loom_diag d;
  loom_diag_init(&d);
  if (ok)
    ok = loom_ir_infer_block_regions(a, c, true, true, outer.items, outer.n,
                                     &d) == LOOM_OK;
  loom_diag_free(&d);
  free(inner.items);
  free(outer.items);
  return ok ? c : NULL;
}

static loom_visit stop_at_view_of(void *ctx, loom_stmt *s) {
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  const loom_block *k = s->u.realize.block;
  for (int i = 0; i < k->n_match_buffers; i++)
    if (k->match_buffers[i].source.buffer == ctx)
      return LOOM_VISIT_STOP;
  return LOOM_VISIT_GO;
}

/* Whether a block under s views b through a match_buffer. */
static bool any_match_buffer_of(const loom_stmt *s, const loom_buffer *b) {
  loom_ir_visitor v = {.stmt_pre = stop_at_view_of, .ctx = (void *)b};
  return !loom_ir_visit_stmt(&v, s);
}

loom_status sched_apply_compute_inline(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_status st = LOOM_OK;
  int ri = p.n - 1;
  const loom_block *b = p.stmts[ri]->u.realize.block;
  const loom_func *f = c->mod->funcs[p.func];
  int sc = sched_scope_index(&p, ri);
  buffer_list all = {0};
  const loom_var *index_vars[64];
  if (sc < 0) {
    st = sched_fail(c, "block '%s' is the root block", b->name);
    goto out;
  }
  if (b->init) {
    st = sched_fail(c, "block '%s' has an init statement; only a complete "
                       "block can be inlined",
                    b->name);
    goto out;
  }
  if (!sched_is_complete(b) || b->n_writes != 1) {
    st = sched_fail(c, "block '%s' is not a complete block writing one "
                       "buffer (every iter spatial, the written buffer not "
                       "read)",
                    b->name);
    goto out;
  }
  loom_buffer *buf = b->writes[0].buffer;
  const loom_stmt *body = b->body;
  bool is_store = body->kind == LOOM_STMT_STORE && body->u.store.buffer == buf &&
                  body->u.store.n_indices <= 64;
  for (int i = 0; is_store && i < body->u.store.n_indices; i++) {
    const loom_expr *x = body->u.store.indices[i];
    bool is_iter = x->kind == LOOM_EXPR_VAR;
    for (int j = 0; is_iter && j < i; j++)
      is_iter = index_vars[j] != x->u.var;
    bool found = false;
    for (int j = 0; is_iter && j < b->n_iter_vars; j++)
      found |= b->iter_vars[j].var == x->u.var;
    is_store = is_iter && found;
    if (is_store)
      index_vars[i] = x->u.var;
  }
  for (int j = 0; is_store && j < b->n_iter_vars; j++) {
    bool is_index = false;
    for (int i = 0; i < body->u.store.n_indices; i++)
      is_index |= index_vars[i] == b->iter_vars[j].var;
    is_store = is_index || !sched_expr_uses(body->u.store.value,
                                            b->iter_vars[j].var);
  }
  if (!is_store) {
    st = sched_fail(c, "the body of block '%s' is not a single store "
                       "%s[v1, ..., vn] = value with distinct iter vars as "
                       "indices",
                    b->name, buf->name);
    goto out;
  }
  if (sched_is_param_buffer(f, buf)) {
    st = sched_fail(c, "block '%s' is an output block: it writes '%s', a "
                       "parameter of the function",
                    b->name, buf->name);
    goto out;
  }
  /* A buffer its scope does not allocate outlives the scope: a reader
   * outside would find it never written. */
  const loom_block *outer = p.stmts[sc]->u.realize.block;
  if (!sched_scope_allocates(outer, buf)) {
    st = sched_fail(c, "block '%s' is an output block: it writes '%s', which "
                       "block '%s' around it does not allocate",
                    b->name, buf->name, outer->name);
    goto out;
  }
  /* The only writer of its buffer in the scope (TVM's complete block,
   * condition 2): with another, a reader could see either's values. */
  sched_stmt_list sib = {0};
  if (!sched_collect_blocks(p.stmts[sc]->u.realize.block->body, &sib)) {
    st = sched_nomem(c);
    goto out;
  }
  int n_writers = 0;
  for (int j = 0; j < sib.n; j++)
    n_writers += sched_block_writes(sib.items[j]->u.realize.block, buf);
  free(sib.items);
  if (n_writers > 1) {
    st = sched_fail(c, "block '%s' is not the only block writing '%s' in its "
                       "scope (%d do)",
                    b->name, buf->name, n_writers);
    goto out;
  }
  if (loom_ir_stmt_uses(f->body, buf->data) ||
      any_match_buffer_of(f->body, buf)) {
    st = sched_fail(c, "buffer '%s' has an opaque access (%s.data) or is "
                       "matched into another block",
                    buf->name, buf->name);
    goto out;
  }
  /* The leaf to remove: the block with the loops that hold only it. */
  int h = ri;
  while (h - 1 > sc && p.stmts[h - 1]->kind == LOOM_STMT_FOR)
    h--;
  if (h - 1 == sc || p.stmts[h - 1]->kind != LOOM_STMT_SEQ) {
    st = sched_fail(c, "block '%s' is the only leaf of its scope; inlining "
                       "it would leave the scope empty",
                    b->name);
    goto out;
  }
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer && !buffers_push(&all, f->params[i].buffer))
      st = LOOM_NOMEM;
  if (st == LOOM_OK && !collect_allocs(f->body, &all))
    st = LOOM_NOMEM;
  if (st != LOOM_OK) {
    st = sched_nomem(c);
    goto out;
  }
  inliner in = {buf, b, body->u.store.value, index_vars,
                body->u.store.n_indices, f, all.items, all.n};
  sched_map m = {.on_load = inline_load, .on_block = finish_block, .ctx = &in};
  /* Remove the leaf, rebuild up to the scope's body, then substitute. */
  loom_stmt *cur = sched_with_child(a, p.stmts[h - 1], p.stmts[h], NULL);
  for (int i = h - 1; cur && i > sc + 1; i--)
    cur = sched_with_child(a, p.stmts[i - 1], p.stmts[i], cur);
  loom_stmt *scope = p.stmts[sc];
  const loom_block *sb = scope->u.realize.block;
  loom_stmt *new_body = cur ? sched_subst_stmt(a, cur, &m) : NULL;
  loom_stmt *new_init = sb->init ? sched_subst_stmt(a, sb->init, &m) : NULL;
  loom_block *nb = loom_arena_alloc(a, sizeof *nb);
  loom_stmt *ns = loom_arena_alloc(a, sizeof *ns);
  loom_buffer **allocs = loom_arena_alloc(
      a, (size_t)(sb->n_alloc_buffers ? sb->n_alloc_buffers : 1) *
             sizeof *allocs);
  if (!new_body || (sb->init && !new_init) || !nb || !ns || !allocs) {
    st = sched_nomem(c);
    goto out;
  }
  *nb = *sb;
  nb->body = new_body;
  nb->init = new_init;
  nb->n_alloc_buffers = 0;
  for (int i = 0; i < sb->n_alloc_buffers; i++)
    if (sb->alloc_buffers[i] != buf)
      allocs[nb->n_alloc_buffers++] = sb->alloc_buffers[i];
  nb->alloc_buffers = allocs;
  *ns = *scope;
  ns->u.realize.block = nb;
  const loom_module *mod = sched_replace(a, c->mod, &p, sc, ns);
  c->mod = mod;
  if (!c->mod)
    st = sched_nomem(c);
out:
  free(all.items);
  sched_path_free(&p);
  return st;
}
