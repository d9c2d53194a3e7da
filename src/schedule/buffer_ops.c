/* The primitives on a buffer a block writes: storage_align (an annotation
 * the lowering reads), set_scope and unsafe_set_dtype (the buffer replaced
 * by one with another scope or dtype everywhere in the function), and
 * reorder_block_iter_var, which permutes a block's iters. */
#include "schedule/sched_impl.h"

#include <string.h>

/* The buffer_index-th written buffer of the block at p, or a refusal. */
static loom_status written_buffer(sched_call *c, const sched_path *p,
                                  int64_t index, loom_buffer **out) {
  const loom_block *b = p->stmts[p->n - 1]->u.realize.block;
  if (index < 0 || index >= b->n_writes)
    return sched_fail(c, "block '%s' writes %d buffer%s, so buffer_index must "
                         "be in [0, %d), not %lld",
                      b->name, b->n_writes, b->n_writes == 1 ? "" : "s",
                      b->n_writes, (long long)index);
  *out = b->writes[index].buffer;
  return LOOM_OK;
}

static int64_t attr_int(const sched_call *c, int i) {
  return i < c->n_attrs ? c->attrs[i].i : 0;
}

/* ---- storage_align ------------------------------------------------------------ */

static loom_status require_allocated(sched_call *c, const sched_path *p,
                                     const loom_buffer *b);

static loom_value *int_value(loom_arena *a, int64_t v) {
  return loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT32, v));
}

loom_status sched_apply_storage_align(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_stmt *r = p.stmts[p.n - 1];
  const loom_block *b = r->u.realize.block;
  int64_t index = attr_int(c, 0), axis = attr_int(c, 1), factor = attr_int(c, 2),
          offset = attr_int(c, 3);
  loom_buffer *buf;
  loom_status st = written_buffer(c, &p, index, &buf);
  if (st == LOOM_OK && (axis < -buf->ndim || axis >= buf->ndim))
    st = sched_fail(c, "buffer '%s' has %d dimensions, so axis must be in "
                       "[%d, %d), not %lld",
                    buf->name, buf->ndim, -buf->ndim, buf->ndim,
                    (long long)axis);
  if (st == LOOM_OK && factor <= 0)
    st = sched_fail(c, "factor must be positive, not %lld", (long long)factor);
  /* An alignment is for an allocation to take: a parameter has none */
  if (st == LOOM_OK)
    st = require_allocated(c, &p, buf);
  if (st != LOOM_OK)
    goto out;
  if (axis < 0)
    axis += buf->ndim;
  /* buffer_dim_align holds [buffer_index, axis, factor, offset] entries; a
   * new entry replaces the one for the same buffer and axis. */
  const loom_value *old = loom_ir_attr_get(b->annotations, b->n_annotations,
                                           "buffer_dim_align");
  int n_old = old && old->kind == LOOM_VALUE_LIST ? old->n_items : 0;
  loom_value *list = loom_arena_alloc(a, sizeof *list);
  loom_value **items = loom_arena_alloc(a, (size_t)(n_old + 1) * sizeof *items);
  loom_value *entry = loom_arena_alloc(a, sizeof *entry);
  loom_value **fields = loom_arena_alloc(a, 4 * sizeof *fields);
  if (!list || !items || !entry || !fields) {
    st = sched_nomem(c);
    goto out;
  }
  int64_t vals[4] = {index, axis, factor, offset};
  for (int i = 0; i < 4; i++)
    if (!(fields[i] = int_value(a, vals[i]))) {
      st = sched_nomem(c);
      goto out;
    }
  *entry = (loom_value){.kind = LOOM_VALUE_LIST, .items = fields, .n_items = 4};
  int n = 0;
  bool replaced = false;
  for (int i = 0; i < n_old; i++) {
    const loom_value *e = old->items[i];
    int64_t bi, ax;
    if (e->kind == LOOM_VALUE_LIST && e->n_items == 4 &&
        e->items[0]->kind == LOOM_VALUE_EXPR &&
        e->items[1]->kind == LOOM_VALUE_EXPR &&
        loom_ir_is_const_int(e->items[0]->expr, &bi) &&
        loom_ir_is_const_int(e->items[1]->expr, &ax) && bi == index &&
        ax == axis) {
      if (!replaced)
        items[n++] = entry;
      replaced = true;
    } else
      items[n++] = old->items[i];
  }
  if (!replaced)
    items[n++] = entry;
  *list = (loom_value){.kind = LOOM_VALUE_LIST, .items = items, .n_items = n};
  loom_attr *attrs = loom_arena_alloc(
      a, (size_t)(b->n_annotations + 1) * sizeof *attrs);
  loom_block *nb = loom_arena_alloc(a, sizeof *nb);
  loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
  if (!attrs || !nb || !nr) {
    st = sched_nomem(c);
    goto out;
  }
  int na = 0;
  for (int i = 0; i < b->n_annotations; i++)
    if (strcmp(b->annotations[i].key, "buffer_dim_align"))
      attrs[na++] = b->annotations[i];
  attrs[na++] = (loom_attr){"buffer_dim_align", list};
  *nb = *b;
  nb->annotations = attrs;
  nb->n_annotations = na;
  *nr = *r;
  nr->u.realize.block = nb;
  c->mod = sched_replace(a, c->mod, &p, p.n - 1, nr);
  if (!c->mod)
    st = sched_nomem(c);
out:
  sched_path_free(&p);
  return st;
}

/* ---- buffer replacement --------------------------------------------------------- */

/* Buffers and their replacements: the buffer changed, then the match_buffer
 * views of it, which take the same change (TVM's replacement). */
#define MAX_VIEWS 16
typedef struct replacement {
  loom_buffer *old[1 + MAX_VIEWS], *new_buf[1 + MAX_VIEWS];
  int n;
  bool cast_loads; /* loads read the new dtype; cast back to the old */
  bool is_scoped;  /* set_scope: every new buffer is named <name>_<scope> */
  loom_arena *arena;
  bool has_failed;
} replacement;

static int replaced(const replacement *rp, const loom_buffer *b) {
  for (int i = 0; i < rp->n; i++)
    if (rp->old[i] == b)
      return i;
  return -1;
}

static loom_expr *replace_load(const sched_map *m, loom_arena *a,
                               loom_expr *load) {
  const replacement *rp = m->ctx;
  int k = replaced(rp, load->u.load.buffer);
  if (k < 0)
    return load;
  loom_expr *n = loom_ir_load(a, rp->new_buf[k], load->u.load.indices,
                              load->u.load.n_indices);
  if (!n)
    return NULL;
  n->dtype = loom_dtype_with_lanes(rp->new_buf[k]->dtype, load->dtype.lanes);
  return rp->cast_loads ? loom_ir_cast(a, load->dtype, n) : n;
}

static loom_stmt *replace_store(const sched_map *m, loom_arena *a,
                                loom_stmt *s) {
  const replacement *rp = m->ctx;
  int k = s->kind == LOOM_STMT_STORE ? replaced(rp, s->u.store.buffer) : -1;
  if (k < 0)
    return s;
  loom_stmt *n = loom_arena_alloc(a, sizeof *n);
  if (!n)
    return NULL;
  *n = *s;
  n->u.store.buffer = rp->new_buf[k];
  if (rp->cast_loads) {
    loom_dtype t = loom_dtype_with_lanes(rp->new_buf[k]->dtype,
                                         s->u.store.value->dtype.lanes);
    n->u.store.value = loom_ir_cast(a, t, s->u.store.value);
    if (!n->u.store.value)
      return NULL;
  }
  return n;
}

static loom_buffer_region *replace_regions(loom_arena *a,
                                           const loom_buffer_region *r, int n,
                                           const replacement *rp) {
  bool any = false;
  for (int i = 0; i < n; i++)
    any |= replaced(rp, r[i].buffer) >= 0;
  if (!any)
    return (loom_buffer_region *)r;
  loom_buffer_region *out = loom_arena_alloc(a, (size_t)n * sizeof *out);
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++) {
    int k = replaced(rp, r[i].buffer);
    out[i] = r[i];
    if (k >= 0)
      out[i].buffer = rp->new_buf[k];
  }
  return out;
}

static loom_block *replace_in_block(const sched_map *m, loom_arena *a,
                                    const loom_block *old, loom_block *b) {
  const replacement *rp = m->ctx;
  loom_block *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *b;
  c->reads = replace_regions(a, b->reads, b->n_reads, rp);
  c->writes = replace_regions(a, b->writes, b->n_writes, rp);
  if ((b->n_reads && !c->reads) || (b->n_writes && !c->writes))
    return NULL;
  bool allocs_it = false;
  for (int i = 0; i < b->n_alloc_buffers; i++)
    allocs_it |= b->alloc_buffers[i] == rp->old[0];
  if (allocs_it) {
    c->alloc_buffers =
        loom_arena_alloc(a, (size_t)b->n_alloc_buffers * sizeof *c->alloc_buffers);
    if (!c->alloc_buffers)
      return NULL;
    for (int i = 0; i < b->n_alloc_buffers; i++)
      c->alloc_buffers[i] =
          b->alloc_buffers[i] == rp->old[0] ? rp->new_buf[0] : b->alloc_buffers[i];
  }
  if (b->n_match_buffers) {
    loom_match_buffer *mb =
        loom_arena_alloc(a, (size_t)b->n_match_buffers * sizeof *mb);
    if (!mb)
      return NULL;
    for (int i = 0; i < b->n_match_buffers; i++) {
      mb[i] = b->match_buffers[i];
      int k = replaced(rp, mb[i].source.buffer), v = replaced(rp, mb[i].buffer);
      if (k >= 0)
        mb[i].source.buffer = rp->new_buf[k];
      if (v >= 0)
        mb[i].buffer = rp->new_buf[v];
    }
    c->match_buffers = mb;
  }
  (void)old;
  return c;
}

/* A copy of b with a fresh data variable, for the caller to change. */
static loom_buffer *fresh_copy(loom_arena *a, const loom_buffer *b) {
  loom_buffer *n = loom_arena_alloc(a, sizeof *n);
  loom_var *data = loom_arena_alloc(a, sizeof *data);
  if (!n || !data)
    return NULL;
  *n = *b;
  *data = *b->data;
  n->data = data;
  return n;
}

/* b named <name>_<scope>, as TVM names a buffer it gives a new scope. */
static bool name_scoped(loom_arena *a, loom_buffer *b) {
  size_t n = strlen(b->name) + strlen(b->scope) + 2;
  char *name = loom_arena_alloc(a, n);
  if (!name)
    return false;
  snprintf(name, n, "%s_%s", b->name, b->scope);
  b->name = b->data->name = name;
  return true;
}

/* Adds the match_buffer views of the replaced buffers under s, each with
 * the scope and dtype of the first replacement. */
static loom_visit add_views(void *ctx, loom_stmt *s) {
  replacement *rp = ctx;
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  const loom_block *b = s->u.realize.block;
  for (int i = 0; i < b->n_match_buffers; i++) {
    const loom_match_buffer *mb = &b->match_buffers[i];
    if (replaced(rp, mb->source.buffer) < 0 || replaced(rp, mb->buffer) >= 0)
      continue;
    loom_buffer *v = rp->n <= MAX_VIEWS ? fresh_copy(rp->arena, mb->buffer) : NULL;
    if (!v) {
      rp->has_failed = true;
      return LOOM_VISIT_STOP;
    }
    v->scope = v->data->scope = rp->new_buf[0]->scope;
    v->dtype = v->data->elem = rp->new_buf[0]->dtype;
    if (rp->is_scoped && !name_scoped(rp->arena, v)) {
      rp->has_failed = true;
      return LOOM_VISIT_STOP;
    }
    rp->old[rp->n] = mb->buffer;
    rp->new_buf[rp->n++] = v;
  }
  return LOOM_VISIT_GO;
}

/* The function with the buffer replaced everywhere, its views too. */
static loom_status replace_buffer(sched_call *c, const sched_path *p,
                                  replacement *rp) {
  loom_arena *a = sched_arena(c->s);
  rp->arena = a;
  loom_ir_visitor views = {.stmt_pre = add_views, .ctx = rp};
  loom_ir_visit_stmt(&views, p->stmts[0]);
  if (rp->has_failed && rp->n <= MAX_VIEWS)
    return sched_nomem(c);
  if (rp->has_failed)
    return sched_fail(c, "buffer '%s' has more than %d match_buffer views",
                      rp->old[0]->name, MAX_VIEWS);
  const loom_var *vars[1 + MAX_VIEWS];
  loom_expr *vals[1 + MAX_VIEWS];
  for (int i = 0; i < rp->n; i++) {
    vars[i] = rp->old[i]->data;
    if (!(vals[i] = loom_ir_ref(a, rp->new_buf[i]->data)))
      return sched_nomem(c);
  }
  sched_map m = {.vars = vars, .values = vals, .n = rp->n,
                 .on_load = replace_load, .on_block = replace_in_block,
                 .on_stmt = replace_store, .ctx = rp};
  loom_stmt *body = sched_subst_stmt(a, p->stmts[0], &m);
  c->mod = body ? sched_replace(a, c->mod, p, 0, body) : NULL;
  return c->mod ? LOOM_OK : sched_nomem(c);
}

static loom_visit stop_at_alloc_of(void *ctx, loom_stmt *s) {
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  const loom_block *k = s->u.realize.block;
  for (int i = 0; i < k->n_alloc_buffers; i++)
    if (k->alloc_buffers[i] == ctx)
      return LOOM_VISIT_STOP;
  return LOOM_VISIT_GO;
}

/* Whether a block under s (s included) allocates b. */
static bool allocated_by_block(const loom_stmt *s, const loom_buffer *b) {
  loom_ir_visitor v = {.stmt_pre = stop_at_alloc_of, .ctx = (void *)b};
  return !loom_ir_visit_stmt(&v, s);
}

/* Fails unless a block of the function at p allocates b. */
static loom_status require_allocated(sched_call *c, const sched_path *p,
                                     const loom_buffer *b) {
  if (allocated_by_block(p->stmts[0], b))
    return LOOM_OK;
  return sched_fail(c, "buffer '%s' is not allocated by a block: it is a "
                       "function parameter or a match_buffer view",
                    b->name);
}

/* Checks that a block allocates the buffer; gives a copy of it, with a
 * fresh data variable, for the caller to change. */
static loom_status prepare(sched_call *c, sched_path *p, loom_buffer **old,
                           loom_buffer **copy) {
  loom_arena *a = sched_arena(c->s);
  TRY(require_allocated(c, p, *old));
  loom_buffer *n = fresh_copy(a, *old);
  if (!n)
    return sched_nomem(c);
  *copy = n;
  return LOOM_OK;
}

loom_status sched_apply_set_scope(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_buffer *old = NULL, *n = NULL;
  const char *scope = c->n_attrs >= 2 && c->attrs[1].kind == LOOM_TV_STR
                          ? c->attrs[1].s
                          : "";
  loom_status st = written_buffer(c, &p, attr_int(c, 0), &old);
  /* The scope it has already: nothing to do, whoever allocates it (as TVM) */
  bool same = st == LOOM_OK &&
              !strcmp(old->scope && *old->scope ? old->scope : "global", scope);
  if (st == LOOM_OK && !same && !sched_is_storage_scope(scope))
    st = sched_fail(c, "\"%s\" is not a storage scope", scope);
  if (st == LOOM_OK && !same)
    st = prepare(c, &p, &old, &n);
  if (st == LOOM_OK && !same) {
    n->scope = loom_arena_strdup(a, scope);
    n->data->scope = n->scope;
    replacement rp = {.old = {old}, .new_buf = {n}, .n = 1, .is_scoped = true};
    st = n->scope && name_scoped(a, n) ? replace_buffer(c, &p, &rp) : sched_nomem(c);
  }
  sched_path_free(&p);
  return st;
}

loom_status sched_apply_unsafe_set_dtype(sched_call *c) {
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_buffer *old = NULL, *n = NULL;
  const char *name = c->n_attrs >= 2 && c->attrs[1].kind == LOOM_TV_STR
                         ? c->attrs[1].s
                         : "";
  loom_dtype t;
  loom_status st = written_buffer(c, &p, attr_int(c, 0), &old);
  if (st == LOOM_OK &&
      (!loom_dtype_parse(name, strlen(name), &t) || t.lanes != 1 ||
       t.code == LOOM_DT_HANDLE || t.code == LOOM_DT_VOID))
    st = sched_fail(c, "\"%s\" is not a scalar data type", name);
  /* The type it has already: nothing to do, whoever allocates it (as TVM) */
  bool same = st == LOOM_OK && loom_dtype_eq(t, old->dtype);
  if (st == LOOM_OK && !same)
    st = prepare(c, &p, &old, &n);
  if (st == LOOM_OK && !same) {
    n->dtype = t;
    n->data->elem = t;
    replacement rp = {.old = {old}, .new_buf = {n}, .n = 1, .cast_loads = true};
    st = replace_buffer(c, &p, &rp);
  }
  sched_path_free(&p);
  return st;
}

/* ---- reorder_block_iter_var ------------------------------------------------------ */

loom_status sched_apply_reorder_block_iter_var(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_stmt *r = p.stmts[p.n - 1];
  const loom_block *b = r->u.realize.block;
  loom_status st = LOOM_OK;
  const loom_tval *order = c->n_inputs >= 2 ? &c->inputs[1] : NULL;
  int n = b->n_iter_vars;
  bool ok = order && order->kind == LOOM_TV_LIST && order->n == n &&
            n <= 256;
  bool seen[256] = {false};
  for (int i = 0; ok && i < n; i++) {
    int64_t k = order->items[i].i;
    ok = order->items[i].kind == LOOM_TV_INT && k >= 0 && k < n && !seen[k];
    if (ok)
      seen[k] = true;
  }
  if (!ok) {
    st = sched_fail(c, "new_order must be a permutation of [0, ..., %d] for "
                       "the %d iters of block '%s'",
                    n - 1, n, b->name);
    goto out;
  }
  loom_block *nb = loom_arena_alloc(a, sizeof *nb);
  loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *vals);
  if (!nb || !nr || !iters || !vals) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < n; i++) {
    iters[i] = b->iter_vars[order->items[i].i];
    vals[i] = r->u.realize.iter_values[order->items[i].i];
  }
  *nb = *b;
  nb->iter_vars = iters;
  *nr = *r;
  nr->u.realize.iter_values = vals;
  nr->u.realize.block = nb;
  c->mod = sched_replace(a, c->mod, &p, p.n - 1, nr);
  if (!c->mod)
    st = sched_nomem(c);
out:
  sched_path_free(&p);
  return st;
}
