/* reindex: give a buffer that a block accesses at one index tuple a copy
 * `<buffer>_reindex` laid out by the block iters the indices use (in block
 * order), the block reading or writing the copy at those iters, and a
 * copy block (before the block's nest for a read, after it for a write)
 * moving data between the two. */
#include "schedule/sched_impl.h"

#include <string.h>

#define MAX_ITERS 64

typedef struct access_scan {
  const loom_buffer *buf;
  loom_expr **indices; /* of the first access */
  int n;
  bool differ;
} access_scan;

static void scan_expr(access_scan *s, const loom_expr *e, int depth);

static void note(access_scan *s, loom_expr **idx, int n) {
  if (!s->indices) {
    s->indices = idx;
    s->n = n;
    return;
  }
  if (n != s->n)
    s->differ = true;
  for (int i = 0; i < n && !s->differ; i++)
    if (!loom_ir_same_expr(idx[i], s->indices[i]))
      s->differ = true;
}

static void scan_expr(access_scan *s, const loom_expr *e, int depth) {
  if (!e || depth > 200)
    return;
  switch (e->kind) {
  case LOOM_EXPR_INT: case LOOM_EXPR_FLOAT: case LOOM_EXPR_STR:
  case LOOM_EXPR_VAR:
    return;
  case LOOM_EXPR_NOT: case LOOM_EXPR_CAST:
    scan_expr(s, e->u.unary.a, depth + 1);
    return;
  case LOOM_EXPR_SELECT:
    scan_expr(s, e->u.select.cond, depth + 1);
    scan_expr(s, e->u.select.t, depth + 1);
    scan_expr(s, e->u.select.f, depth + 1);
    return;
  case LOOM_EXPR_LOAD:
    if (e->u.load.buffer == s->buf)
      note(s, e->u.load.indices, e->u.load.n_indices);
    for (int i = 0; i < e->u.load.n_indices; i++)
      scan_expr(s, e->u.load.indices[i], depth + 1);
    return;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      scan_expr(s, e->u.call.args[i], depth + 1);
    return;
  case LOOM_EXPR_LET:
    scan_expr(s, e->u.let.value, depth + 1);
    scan_expr(s, e->u.let.body, depth + 1);
    return;
  case LOOM_EXPR_RAMP:
  case LOOM_EXPR_BROADCAST:
    s->differ = true; /* vector accesses are not reindexed */
    return;
  default:
    scan_expr(s, e->u.bin.a, depth + 1);
    scan_expr(s, e->u.bin.b, depth + 1);
    return;
  }
}

/* False when the statement holds something reindex does not look into
 * (nested blocks, loops). */
static bool scan_stmt(access_scan *s, const loom_stmt *st) {
  if (!st)
    return true;
  switch (st->kind) {
  case LOOM_STMT_STORE:
    if (st->u.store.buffer == s->buf)
      note(s, st->u.store.indices, st->u.store.n_indices);
    for (int i = 0; i < st->u.store.n_indices; i++)
      scan_expr(s, st->u.store.indices[i], 0);
    scan_expr(s, st->u.store.value, 0);
    return true;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < st->u.seq.n_stmts; i++)
      if (!scan_stmt(s, st->u.seq.stmts[i]))
        return false;
    return true;
  case LOOM_STMT_LET:
    scan_expr(s, st->u.let.value, 0);
    return scan_stmt(s, st->u.let.body);
  case LOOM_STMT_IF:
    scan_expr(s, st->u.if_.cond, 0);
    return scan_stmt(s, st->u.if_.then_case) && scan_stmt(s, st->u.if_.else_case);
  case LOOM_STMT_EVALUATE:
    scan_expr(s, st->u.evaluate.value, 0);
    return true;
  case LOOM_STMT_FOR:
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_COUNT_: break;
  }
  return false;
}

loom_expr *sched_swap_load(const sched_map *m, loom_arena *a, loom_expr *load) {
  const sched_swap *w = m->ctx;
  if (load->u.load.buffer != w->old)
    return load;
  loom_expr *n = loom_ir_load(a, w->nb, w->idx, w->n);
  if (n)
    n->dtype = load->dtype;
  return n;
}

loom_stmt *sched_swap_store(const sched_map *m, loom_arena *a, loom_stmt *s) {
  const sched_swap *w = m->ctx;
  if (s->kind != LOOM_STMT_STORE || s->u.store.buffer != w->old)
    return s;
  loom_stmt *n = loom_arena_alloc(a, sizeof *n);
  if (!n)
    return NULL;
  *n = *s;
  n->u.store.buffer = w->nb;
  n->u.store.indices = w->idx;
  n->u.store.n_indices = w->n;
  return n;
}

loom_buffer_region *sched_swap_regions(loom_arena *a, const loom_buffer_region *r,
                                       int n, const sched_swap *w) {
  loom_buffer_region *out = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++) {
    out[i] = r[i];
    if (r[i].buffer != w->old)
      continue;
    out[i].buffer = w->nb;
    out[i].n_ranges = w->n;
    out[i].ranges = loom_arena_alloc(a, (size_t)(w->n ? w->n : 1) *
                                            sizeof *out[i].ranges);
    if (!out[i].ranges)
      return NULL;
    for (int d = 0; d < w->n; d++) {
      out[i].ranges[d].min = w->idx[d];
      out[i].ranges[d].extent = loom_ir_int(a, w->idx[d]->dtype, 1);
      if (!out[i].ranges[d].extent)
        return NULL;
    }
  }
  return out;
}

static bool same_shape(const loom_buffer *buf, loom_expr **shape, int ndim) {
  if (ndim != buf->ndim)
    return false;
  for (int d = 0; d < ndim; d++)
    if (!loom_ir_same_expr(shape[d], buf->shape[d]))
      return false;
  return true;
}

loom_buffer *sched_reshaped_copy(loom_arena *a, const loom_buffer *buf,
                                 const char *name, loom_expr **shape, int ndim) {
  loom_buffer *nb = loom_arena_alloc(a, sizeof *nb);
  loom_var *data = loom_arena_alloc(a, sizeof *data);
  if (!nb || !data)
    return NULL;
  *nb = *buf;
  if (buf->data)
    *data = *buf->data;
  else
    *data = (loom_var){.dtype = LOOM_HANDLE, .elem = buf->dtype};
  nb->name = loom_arena_strdup(a, name);
  data->name = nb->name;
  nb->data = data;
  nb->shape = shape;
  nb->ndim = ndim;
  /* Strides and separators laid out for another shape would not address
   * this one. */
  if (!same_shape(buf, shape, ndim)) {
    nb->strides = NULL;
    nb->n_strides = 0;
    nb->axis_separators = NULL;
    nb->n_axis_separators = 0;
  }
  if (!sched_keep_offset_type(a, buf, nb))
    return NULL;
  return nb->name ? nb : NULL;
}

loom_status sched_apply_reindex(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  int ri = p.n - 1;
  loom_stmt *r = p.stmts[ri];
  const loom_block *b = r->u.realize.block;
  loom_buffer *buf;
  bool is_write;
  loom_status st = sched_pick_buffer(c, b, 0, &buf, &is_write);
  if (st != LOOM_OK)
    goto out;
  access_scan scan = {buf, NULL, 0, false};
  bool leaf = scan_stmt(&scan, b->init) && scan_stmt(&scan, b->body);
  if (!leaf) {
    st = sched_fail(c, "block '%s' is not a leaf block of loads and stores",
                    b->name);
    goto out;
  }
  if (!scan.indices || scan.differ) {
    st = sched_fail(c, "block '%s' must access buffer '%s' at one index "
                       "tuple; %s",
                    b->name, buf->name,
                    scan.indices ? "its accesses use different indices"
                                 : "it does not access it");
    goto out;
  }
  int si = sched_scope_index(&p, ri);
  if (si < 0 || b->n_iter_vars > MAX_ITERS || si + 1 >= ri + 1) {
    st = sched_fail(c, "block '%s' has no scope", b->name);
    goto out;
  }
  /* The block's accesses all move to the copy, which is filled before the
   * block or written back after it, never both: an in-place update would
   * lose its old values or its result (TVM does not check this). A
   * reduction's init writes the element before the update reads it. */
  if (sched_block_updates(b, buf) && !(is_write && b->init)) {
    st = sched_fail(c, "block '%s' reads and writes buffer '%s' in place; "
                       "a %s copy would %s",
                    b->name, buf->name, is_write ? "write-back" : "read",
                    is_write ? "leave the block reading an unfilled buffer"
                             : "never reach the buffer with the block's result");
    goto out;
  }
  /* The write-back copies every point of the block's iters: the block must
   * have written all of them. */
  char cover[160];
  const char *why = is_write ? sched_cover_problem(&p, ri, cover, sizeof cover)
                             : NULL;
  if (why) {
    st = sched_fail(c, "the write-back of '%s' would copy every point of the "
                       "iters of block '%s', which does not write them all: %s",
                    buf->name, b->name, why);
    goto out;
  }
  /* The copy goes beside the statement of the scope that holds the block:
   * another block there could use the buffer between the copy and the
   * block. */
  loom_stmt *holder = p.stmts[si + 1]->kind == LOOM_STMT_SEQ && ri >= si + 2
                          ? p.stmts[si + 2]
                          : p.stmts[si + 1];
  sched_stmt_list others = {0};
  bool alone = sched_collect_blocks(holder, &others) && others.n == 1;
  free(others.items);
  if (!alone) {
    st = sched_fail(c, "block '%s' shares its loop nest with other blocks; "
                    "the %s of '%s' beside the nest would not be next to it",
                    b->name, is_write ? "write-back" : "copy", buf->name);
    goto out;
  }
  /* The iters the indices use, in block order, and the new layout. */
  int used[MAX_ITERS], nu = 0;
  for (int i = 0; i < b->n_iter_vars; i++) {
    bool uses = false;
    for (int d = 0; d < scan.n; d++)
      uses |= sched_expr_uses(scan.indices[d], b->iter_vars[i].var);
    if (uses)
      used[nu++] = i;
  }
  for (int d = 0; d < scan.n; d++) {
    /* Indices may use only block iters and constants. */
    const loom_expr *ix = scan.indices[d];
    sched_map none = {0};
    (void)none;
    for (int k = ri - 1; k > si; k--)
      if (p.stmts[k]->kind == LOOM_STMT_FOR &&
          sched_expr_uses(ix, p.stmts[k]->u.loop.var)) {
        st = sched_fail(c, "an index of '%s' in block '%s' uses loop '%s' "
                           "directly",
                        buf->name, b->name, p.stmts[k]->u.loop.var->name);
        goto out;
      }
  }
  /* The copy block moves every point of the iteration space, guarded or
   * not: the indices must stay inside the buffer over the iters' ranges. */
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  if (!ctx) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < b->n_iter_vars; i++) {
    int64_t mn, ext;
    if (loom_ir_is_const_int(b->iter_vars[i].dom.min, &mn) &&
        loom_ir_is_const_int(b->iter_vars[i].dom.extent, &ext) && ext > 0)
      loom_arith_bind(ctx, b->iter_vars[i].var, mn, mn + ext - 1, c->d);
  }
  for (int d = 0; d < scan.n && d < buf->ndim && st == LOOM_OK; d++) {
    loom_arith_interval iv = loom_arith_bound(ctx, scan.indices[d]);
    int64_t ext;
    if (!loom_ir_is_const_int(buf->shape[d], &ext) || !iv.is_bounded ||
        iv.min < 0 || iv.max >= ext)
      st = sched_fail(c, "index %d of '%s' in block '%s' may leave the "
                         "buffer over the block's iters; the copy block "
                         "would access it out of bounds",
                      d, buf->name, b->name);
  }
  loom_arith_ctx_free(ctx);
  if (st != LOOM_OK)
    goto out;
  loom_expr **shape = loom_arena_alloc(a, (size_t)(nu ? nu : 1) * sizeof *shape);
  loom_expr **idx = loom_arena_alloc(a, (size_t)(nu ? nu : 1) * sizeof *idx);
  loom_buffer *nb;
  char name[256];
  snprintf(name, sizeof name, "%s_reindex", buf->name);
  if (!shape || !idx) {
    st = sched_nomem(c);
    goto out;
  }
  for (int k = 0; k < nu; k++) {
    const loom_iter_var *iv = &b->iter_vars[used[k]];
    int64_t mn;
    if (!loom_ir_is_const_int(iv->dom.min, &mn) || mn != 0) {
      st = sched_fail(c, "iter '%s' of block '%s' does not start at 0",
                      iv->var->name, b->name);
      goto out;
    }
    shape[k] = iv->dom.extent;
    idx[k] = loom_ir_ref(a, iv->var);
    if (!idx[k]) {
      st = sched_nomem(c);
      goto out;
    }
  }
  /* TVM's copy keeps the buffer's type (its scope too) but not its
   * strides. */
  if (!(nb = sched_reshaped_copy(a, buf, name, shape, nu))) {
    st = sched_nomem(c);
    goto out;
  }
  nb->strides = NULL;
  nb->n_strides = 0;

  /* The block, on the copy. */
  sched_swap w = {buf, nb, idx, nu};
  sched_map m = {.on_load = sched_swap_load, .on_stmt = sched_swap_store, .ctx = &w};
  loom_block *nbk = loom_arena_alloc(a, sizeof *nbk);
  loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
  if (!nbk || !nr) {
    st = sched_nomem(c);
    goto out;
  }
  *nbk = *b;
  nbk->body = sched_subst_stmt(a, b->body, &m);
  nbk->init = b->init ? sched_subst_stmt(a, b->init, &m) : NULL;
  nbk->reads = sched_swap_regions(a, b->reads, b->n_reads, &w);
  nbk->writes = sched_swap_regions(a, b->writes, b->n_writes, &w);
  if (!nbk->body || (b->init && !nbk->init) || !nbk->reads || !nbk->writes) {
    st = sched_nomem(c);
    goto out;
  }
  *nr = *r;
  nr->u.realize.block = nbk;

  /* The copy block: loops ax<k>, iters v<k>, moving buf <-> the copy. */
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)(nu ? nu : 1) * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(nu ? nu : 1) * sizeof *vals);
  loom_expr **cidx = loom_arena_alloc(a, (size_t)(nu ? nu : 1) * sizeof *cidx);
  loom_var *lv[MAX_ITERS];
  const loom_var *olds[MAX_ITERS];
  loom_expr *news[MAX_ITERS];
  if (!iters || !vals || !cidx) {
    st = sched_nomem(c);
    goto out;
  }
  for (int k = 0; k < nu; k++) {
    const loom_iter_var *iv = &b->iter_vars[used[k]];
    char n1[32];
    snprintf(n1, sizeof n1, "v%d", k);
    loom_var *v = loom_ir_var(a, n1, iv->var->dtype);
    snprintf(n1, sizeof n1, "ax%d", k);
    lv[k] = loom_ir_var(a, n1, iv->var->dtype);
    vals[k] = lv[k] ? loom_ir_ref(a, lv[k]) : NULL;
    cidx[k] = v ? loom_ir_ref(a, v) : NULL;
    if (!v || !vals[k] || !cidx[k]) {
      st = sched_nomem(c);
      goto out;
    }
    iters[k] = (loom_iter_var){v, iv->dom, LOOM_ITER_SPATIAL};
    olds[k] = iv->var;
    news[k] = cidx[k];
  }
  sched_map om = {.vars = olds, .values = news, .n = nu};
  loom_expr **oidx = loom_arena_alloc(a, (size_t)(scan.n ? scan.n : 1) * sizeof *oidx);
  if (!oidx) {
    st = sched_nomem(c);
    goto out;
  }
  for (int d = 0; d < scan.n; d++)
    if (!(oidx[d] = sched_subst_expr(a, scan.indices[d], &om))) {
      st = sched_nomem(c);
      goto out;
    }
  loom_expr *from = is_write ? loom_ir_load(a, nb, cidx, nu)
                             : loom_ir_load(a, buf, oidx, scan.n);
  loom_stmt *store = loom_ir_stmt(a, LOOM_STMT_STORE, r->loc);
  loom_block *cb = loom_ir_block(a, "");
  loom_stmt *cr = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, r->loc);
  loom_buffer_region *rd = loom_arena_alloc(a, sizeof *rd);
  loom_buffer_region *wr = loom_arena_alloc(a, sizeof *wr);
  if (!from || !store || !cb || !cr || !rd || !wr) {
    st = sched_nomem(c);
    goto out;
  }
  store->u.store.buffer = is_write ? buf : nb;
  store->u.store.value = from;
  store->u.store.indices = is_write ? oidx : cidx;
  store->u.store.n_indices = is_write ? scan.n : nu;
  loom_expr tmp_load = {.kind = LOOM_EXPR_LOAD};
  tmp_load.u.load.buffer = store->u.store.buffer;
  tmp_load.u.load.indices = store->u.store.indices;
  tmp_load.u.load.n_indices = store->u.store.n_indices;
  const loom_expr *parts[2] = {from, &tmp_load};
  loom_buffer_region *regs[2] = {rd, wr};
  for (int q = 0; q < 2; q++) {
    const loom_expr *e = parts[q];
    int n = e->u.load.n_indices;
    regs[q]->buffer = e->u.load.buffer;
    regs[q]->n_ranges = n;
    regs[q]->ranges = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof(loom_range));
    if (!regs[q]->ranges) {
      st = sched_nomem(c);
      goto out;
    }
    for (int d = 0; d < n; d++) {
      regs[q]->ranges[d].min = e->u.load.indices[d];
      regs[q]->ranges[d].extent = loom_ir_int(a, e->u.load.indices[d]->dtype, 1);
    }
  }
  snprintf(name, sizeof name, is_write ? "%s" : "%s_reindex", nb->name);
  cb->name = loom_arena_strdup(a, name);
  cb->iter_vars = iters;
  cb->n_iter_vars = nu;
  cb->reads = rd;
  cb->n_reads = 1;
  cb->writes = wr;
  cb->n_writes = 1;
  cb->body = store;
  cr->u.realize.block = cb;
  cr->u.realize.iter_values = vals;
  cr->u.realize.n_iter_values = nu;
  loom_stmt *nest = cr;
  for (int k = nu - 1; k >= 0 && nest; k--) {
    loom_stmt *l = loom_ir_stmt(a, LOOM_STMT_FOR, r->loc);
    if (!l) {
      nest = NULL;
      break;
    }
    l->u.loop.var = lv[k];
    l->u.loop.min = iters[k].dom.min;
    l->u.loop.extent = iters[k].dom.extent;
    l->u.loop.kind = LOOM_FOR_SERIAL;
    l->u.loop.body = nest;
    nest = l;
  }
  if (!cb->name || !nest) {
    st = sched_nomem(c);
    goto out;
  }

  /* The block's nest rebuilt, the copy placed beside it in the scope. */
  loom_stmt *cur = nr;
  for (int i = ri - 1; i > si && cur; i--)
    cur = sched_with_child(a, p.stmts[i], p.stmts[i + 1], cur);
  /* cur is now the new p.stmts[si + 1]; find the scope item holding the
   * block and put the copy before (read) or after (write) it. */
  loom_stmt *old_top = p.stmts[si + 1];
  loom_stmt *body = NULL;
  if (old_top->kind == LOOM_STMT_SEQ && ri >= si + 2) {
    const loom_stmt *item = p.stmts[si + 2];
    int n = old_top->u.seq.n_stmts;
    loom_stmt **items = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *items);
    loom_stmt *seq = loom_arena_alloc(a, sizeof *seq);
    if (!items || !seq || !cur) {
      st = sched_nomem(c);
      goto out;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
      loom_stmt *x = old_top->u.seq.stmts[i];
      if (x == item) {
        loom_stmt *rebuilt = cur->u.seq.stmts[i];
        if (!is_write)
          items[k++] = nest;
        items[k++] = rebuilt;
        if (is_write)
          items[k++] = nest;
      } else
        items[k++] = x;
    }
    *seq = *old_top;
    seq->u.seq.stmts = items;
    seq->u.seq.n_stmts = k;
    body = seq;
  } else {
    loom_stmt *seq = loom_ir_stmt(a, LOOM_STMT_SEQ, r->loc);
    loom_stmt **items = loom_arena_alloc(a, 2 * sizeof *items);
    if (!seq || !items || !cur) {
      st = sched_nomem(c);
      goto out;
    }
    items[0] = is_write ? cur : nest;
    items[1] = is_write ? nest : cur;
    seq->u.seq.stmts = items;
    seq->u.seq.n_stmts = 2;
    body = seq;
  }
  const loom_block *sb = p.stmts[si]->u.realize.block;
  loom_block *nsb = loom_arena_alloc(a, sizeof *nsb);
  loom_stmt *nsr = loom_arena_alloc(a, sizeof *nsr);
  loom_buffer **allocs = loom_arena_alloc(
      a, (size_t)(sb->n_alloc_buffers + 1) * sizeof *allocs);
  if (!nsb || !nsr || !allocs) {
    st = sched_nomem(c);
    goto out;
  }
  *nsb = *sb;
  if (sb->body == old_top)
    nsb->body = body;
  else {
    st = sched_fail(c, "block '%s' lies in the init of its scope", b->name);
    goto out;
  }
  for (int i = 0; i < sb->n_alloc_buffers; i++)
    allocs[i] = sb->alloc_buffers[i];
  allocs[sb->n_alloc_buffers] = nb;
  nsb->alloc_buffers = allocs;
  nsb->n_alloc_buffers = sb->n_alloc_buffers + 1;
  *nsr = *p.stmts[si];
  nsr->u.realize.block = nsb;
  if (!(c->mod = sched_replace(a, c->mod, &p, si, nsr))) {
    st = sched_nomem(c);
    goto out;
  }
  st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = p.func,
                                    .block = cb->name});
out:
  sched_path_free(&p);
  return st;
}
