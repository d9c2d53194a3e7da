/* cache_inplace: for a block that reads and writes a buffer in place (an
 * opaque call that updates it), a copy `<buffer>_<scope>` in another storage
 * scope, filled by a block right before the block and copied back by one
 * right after it, both named like the copy, as TVM's cache read followed by
 * cache write makes them. The block then reads and writes the copy. */
#include "schedule/sched_impl.h"

#include <stdio.h>
#include <string.h>

#define MAX_DIMS 16

/* The block `name` copying src into dst over region (a region of the
 * original buffer orig), under loops ax<k> over the region's extents bound
 * to min + ax<k>, with iters v<k> over orig's shape. */
static loom_stmt *copy_stage(loom_arena *a, const char *name,
                             const loom_buffer_region *region,
                             const loom_buffer *orig, loom_buffer *src,
                             loom_buffer *dst, loom_loc loc) {
  int n = region->n_ranges;
  loom_block *b = loom_ir_block(a, name);
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *vals);
  loom_expr **idx = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *idx);
  loom_range *pt = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *pt);
  loom_buffer_region *rd = loom_arena_alloc(a, sizeof *rd);
  loom_buffer_region *wr = loom_arena_alloc(a, sizeof *wr);
  loom_stmt *store = loom_ir_stmt(a, LOOM_STMT_STORE, loc);
  loom_stmt *realize = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, loc);
  loom_var *ax[MAX_DIMS];
  if (!b || !iters || !vals || !idx || !pt || !rd || !wr || !store || !realize)
    return NULL;
  for (int k = 0; k < n; k++) {
    loom_expr *ext = region->ranges[k].extent, *dim = orig->shape[k];
    char nm[32];
    snprintf(nm, sizeof nm, "ax%d", k);
    ax[k] = loom_ir_var(a, nm, ext->dtype);
    snprintf(nm, sizeof nm, "v%d", k);
    loom_var *v = loom_ir_var(a, nm, ext->dtype);
    loom_expr *zero = loom_ir_int(a, dim->dtype, 0);
    if (!ax[k] || !v || !zero)
      return NULL;
    iters[k] = (loom_iter_var){v, {zero, dim}, LOOM_ITER_SPATIAL};
    int64_t mn;
    vals[k] = loom_ir_ref(a, ax[k]);
    if (!loom_ir_is_const_int(region->ranges[k].min, &mn) || mn != 0)
      vals[k] = loom_ir_binary(a, LOOM_EXPR_ADD, region->ranges[k].min, vals[k]);
    idx[k] = loom_ir_ref(a, v);
    pt[k] = (loom_range){idx[k], loom_ir_int(a, ext->dtype, 1)};
    if (!vals[k] || !idx[k] || !pt[k].extent)
      return NULL;
  }
  loom_expr *load = loom_ir_load(a, src, idx, n);
  if (!load)
    return NULL;
  store->u.store.buffer = dst;
  store->u.store.value = load;
  store->u.store.indices = idx;
  store->u.store.n_indices = n;
  *rd = (loom_buffer_region){src, pt, n};
  *wr = (loom_buffer_region){dst, pt, n};
  b->iter_vars = iters;
  b->n_iter_vars = n;
  b->reads = rd;
  b->writes = wr;
  b->n_reads = b->n_writes = 1;
  b->body = store;
  realize->u.realize.block = b;
  realize->u.realize.iter_values = vals;
  realize->u.realize.n_iter_values = n;
  loom_stmt *nest = realize;
  for (int k = n - 1; k >= 0; k--) {
    loom_stmt *l = loom_ir_stmt(a, LOOM_STMT_FOR, loc);
    if (!l || !(l->u.loop.min = loom_ir_int(a, ax[k]->dtype, 0)))
      return NULL;
    l->u.loop.var = ax[k];
    l->u.loop.extent = region->ranges[k].extent;
    l->u.loop.kind = LOOM_FOR_SERIAL;
    l->u.loop.body = nest;
    nest = l;
  }
  return nest;
}

/* ---- moving the block onto the copy ------------------------------------------- */

typedef struct onto {
  const loom_buffer *old;
  loom_buffer *nb;
} onto;

static loom_expr *onto_load(const sched_map *m, loom_arena *a,
                            loom_expr *load) {
  const onto *w = m->ctx;
  if (load->u.load.buffer != w->old)
    return load;
  loom_expr *r = loom_arena_dup(a, load, sizeof *r);
  if (r)
    r->u.load.buffer = w->nb;
  return r;
}

static loom_stmt *onto_store(const sched_map *m, loom_arena *a, loom_stmt *s) {
  const onto *w = m->ctx;
  if (s->kind != LOOM_STMT_STORE || s->u.store.buffer != w->old)
    return s;
  loom_stmt *r = loom_arena_dup(a, s, sizeof *r);
  if (r)
    r->u.store.buffer = w->nb;
  return r;
}

static loom_block *onto_block(const sched_map *m, loom_arena *a,
                              const loom_block *old, loom_block *b) {
  const onto *w = m->ctx;
  (void)old;
  loom_buffer_region *rd = loom_arena_dup(
      a, b->reads, (size_t)(b->n_reads ? b->n_reads : 1) * sizeof *rd);
  loom_buffer_region *wr = loom_arena_dup(
      a, b->writes, (size_t)(b->n_writes ? b->n_writes : 1) * sizeof *wr);
  loom_block *c = loom_arena_dup(a, b, sizeof *c);
  if (!rd || !wr || !c)
    return NULL;
  for (int i = 0; i < b->n_reads; i++)
    if (rd[i].buffer == w->old)
      rd[i].buffer = w->nb;
  for (int i = 0; i < b->n_writes; i++)
    if (wr[i].buffer == w->old)
      wr[i].buffer = w->nb;
  c->reads = rd;
  c->writes = wr;
  return c;
}

/* The copy of buf in scope, named `<buf>_<scope>`. */
static loom_buffer *scoped_copy(loom_arena *a, const loom_buffer *buf,
                                const char *scope) {
  char name[256];
  snprintf(name, sizeof name, "%s_%s", buf->name, scope);
  loom_buffer *n = loom_arena_dup(a, buf, sizeof *n);
  loom_var *data = loom_arena_dup(a, buf->data, sizeof *data);
  if (!n || !data)
    return NULL;
  n->name = loom_arena_strdup(a, name);
  n->scope = loom_arena_strdup(a, scope);
  data->name = n->name;
  data->scope = n->scope;
  n->data = data;
  n->strides = NULL;
  n->n_strides = 0;
  n->elem_offset = NULL;
  return n->name && n->scope ? n : NULL;
}

/* Region r of the block realized at realize, with the block's iters
 * replaced by their bindings. */
static bool outside(loom_arena *a, const loom_stmt *realize,
                    const loom_buffer_region *r, loom_buffer_region *out) {
  const loom_block *b = realize->u.realize.block;
  const loom_var **vars = loom_arena_alloc(
      a, (size_t)(b->n_iter_vars ? b->n_iter_vars : 1) * sizeof *vars);
  loom_range *rg = loom_arena_alloc(
      a, (size_t)(r->n_ranges ? r->n_ranges : 1) * sizeof *rg);
  if (!vars || !rg)
    return false;
  for (int i = 0; i < b->n_iter_vars; i++)
    vars[i] = b->iter_vars[i].var;
  sched_map m = {.vars = vars, .values = realize->u.realize.iter_values,
                 .n = b->n_iter_vars};
  for (int k = 0; k < r->n_ranges; k++) {
    rg[k].min = sched_subst_expr(a, r->ranges[k].min, &m);
    rg[k].extent = sched_subst_expr(a, r->ranges[k].extent, &m);
    if (!rg[k].min || !rg[k].extent)
      return false;
  }
  *out = *r;
  out->ranges = rg;
  return true;
}

/* Which of the blocks named like realize's block it is, in program order. */
static int nth_of(const loom_func *f, const loom_stmt *realize) {
  const char *name = realize->u.realize.block->name;
  for (int k = 0;; k++) {
    sched_path q = {0};
    bool found = sched_find_block_nth(f, name, k, &q);
    bool hit = found && q.stmts[q.n - 1] == realize;
    sched_path_free(&q);
    if (!found || hit)
      return found ? k : 0;
  }
}

loom_status sched_apply_cache_inplace(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_status st = LOOM_OK;
  int64_t index = sched_attr_int(c, 0, -1);
  const char *scope = sched_attr_str(c, 1, "");
  int ri = p.n - 1;
  loom_stmt *realize = p.stmts[ri];
  const loom_block *b = realize->u.realize.block;
  int sc = sched_scope_index(&p, ri);
  if (sc < 0) {
    st = sched_fail(c, "block '%s' is the root block", b->name);
    goto out;
  }
  if (index < 0 || index >= b->n_reads) {
    st = sched_fail(c, "block '%s' has %d read regions; read_buffer_index "
                       "%lld is not in [0, %d)",
                    b->name, b->n_reads, (long long)index, b->n_reads);
    goto out;
  }
  if (!sched_is_storage_scope(scope)) {
    st = sched_fail(c, "\"%s\" is not a storage scope", scope);
    goto out;
  }
  loom_buffer *buf = b->reads[index].buffer;
  const loom_buffer_region *wreg = NULL;
  for (int i = 0; i < b->n_writes; i++)
    if (b->writes[i].buffer == buf)
      wreg = &b->writes[i];
  if (!wreg) {
    st = sched_fail(c, "block '%s' reads buffer '%s' but does not write it; "
                       "cache_inplace needs a block that updates it in place",
                    b->name, buf->name);
    goto out;
  }
  if (buf->ndim > MAX_DIMS || b->reads[index].n_ranges != buf->ndim ||
      wreg->n_ranges != buf->ndim) {
    st = sched_fail(c, "buffer '%s' has too many dimensions", buf->name);
    goto out;
  }
  /* The stages sit beside the block, under its loops: its regions there
   * are in the loops' terms (the iters replaced by their bindings). */
  loom_buffer_region rr, ww;
  if (!outside(a, realize, &b->reads[index], &rr) ||
      !outside(a, realize, wreg, &ww)) {
    st = sched_nomem(c);
    goto out;
  }
  loom_buffer *nb = scoped_copy(a, buf, scope);
  loom_stmt *fill = nb ? copy_stage(a, nb->name, &rr, buf, buf, nb,
                                    realize->loc)
                       : NULL;
  loom_stmt *back = nb ? copy_stage(a, nb->name, &ww, buf, nb, buf,
                                    realize->loc)
                       : NULL;
  loom_expr *data = nb ? loom_ir_ref(a, nb->data) : NULL;
  if (!fill || !back || !data) {
    st = sched_nomem(c);
    goto out;
  }
  /* The block on the copy: its accesses, regions and opaque uses of the
   * buffer's data pointer. */
  onto w = {buf, nb};
  const loom_var *vars[1] = {buf->data};
  loom_expr *values[1] = {data};
  sched_map m = {.vars = vars, .values = values, .n = 1,
                 .on_load = onto_load, .on_block = onto_block,
                 .on_stmt = onto_store, .ctx = &w};
  loom_stmt *moved = sched_subst_stmt(a, realize, &m);
  if (!moved) {
    st = sched_nomem(c);
    goto out;
  }
  /* The stages go right around the block, in the statement that holds it. */
  loom_stmt *parent = p.stmts[ri - 1], *cur;
  if (parent->kind == LOOM_STMT_SEQ) {
    int n = parent->u.seq.n_stmts;
    loom_stmt **items = loom_arena_alloc(a, (size_t)(n + 2) * sizeof *items);
    cur = loom_arena_dup(a, parent, sizeof *cur);
    if (!items || !cur) {
      st = sched_nomem(c);
      goto out;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
      if (parent->u.seq.stmts[i] != realize) {
        items[k++] = parent->u.seq.stmts[i];
        continue;
      }
      items[k++] = fill;
      items[k++] = moved;
      items[k++] = back;
    }
    cur->u.seq.stmts = items;
    cur->u.seq.n_stmts = k;
  } else {
    loom_stmt **items = loom_arena_alloc(a, 3 * sizeof *items);
    loom_stmt *seq = loom_ir_stmt(a, LOOM_STMT_SEQ, realize->loc);
    if (!items || !seq) {
      st = sched_nomem(c);
      goto out;
    }
    items[0] = fill;
    items[1] = moved;
    items[2] = back;
    seq->u.seq.stmts = items;
    seq->u.seq.n_stmts = 3;
    cur = ri - 1 == sc ? seq : sched_with_child(a, parent, realize, seq);
  }
  /* Up to the scope's body, then the scope allocates the copy. */
  for (int k = ri - 2; cur && k > sc; k--)
    cur = sched_with_child(a, p.stmts[k], p.stmts[k + 1], cur);
  const loom_stmt *sr = p.stmts[sc];
  const loom_block *sb = sr->u.realize.block;
  loom_block *nsb = loom_arena_dup(a, sb, sizeof *nsb);
  loom_stmt *nsr = loom_arena_dup(a, sr, sizeof *nsr);
  loom_buffer **allocs = loom_arena_alloc(
      a, (size_t)(sb->n_alloc_buffers + 1) * sizeof *allocs);
  if (!cur || !nsb || !nsr || !allocs) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < sb->n_alloc_buffers; i++)
    allocs[i] = sb->alloc_buffers[i];
  allocs[sb->n_alloc_buffers] = nb;
  nsb->alloc_buffers = allocs;
  nsb->n_alloc_buffers = sb->n_alloc_buffers + 1;
  nsb->body = cur;
  nsr->u.realize.block = nsb;
  if (!(c->mod = sched_replace(a, c->mod, &p, sc, nsr))) {
    st = sched_nomem(c);
    goto out;
  }
  /* Both stages carry the copy's name: each output names its own one. */
  const loom_func *f = c->mod->funcs[p.func];
  const loom_stmt *stage[2] = {fill, back};
  for (int i = 0; i < 2 && st == LOOM_OK; i++) {
    const loom_stmt *r = stage[i];
    while (r->kind == LOOM_STMT_FOR)
      r = r->u.loop.body;
    st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = p.func,
                                      .block = nb->name,
                                      .nth = nth_of(f, r)});
  }
out:
  sched_path_free(&p);
  return st;
}
