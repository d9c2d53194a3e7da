/* pad_einsum: pad the iteration space of an einsum block (every access a
 * point of iter variables) to multiples of given factors, as TVM does: each
 * buffer indexed by a padded iter gets a `<name>_pad` copy of the padded
 * shape, a block before the einsum fills the read ones (zero outside the
 * original shape) and a block after it copies the written ones back. The
 * loops bound to the padded iters grow with them. */
#include "schedule/sched_impl.h"

#include <stdio.h>
#include <string.h>

#define MAX_ITERS 64
#define MAX_DIMS 16

typedef struct padding {
  const loom_block *b;
  loom_expr *dom[MAX_ITERS];     /* the padded extent; NULL: unchanged */
  const loom_var *loop[MAX_ITERS]; /* the loop bound to iter i, if any */
  loom_buffer *old[2 * MAX_ITERS], *pad[2 * MAX_ITERS];
  int n_pads;
} padding;

/* The padded extent of iter i of pe->b, or NULL when it is unchanged. */
static loom_expr *padded_of_var(const padding *pe, const loom_var *v) {
  for (int i = 0; i < pe->b->n_iter_vars; i++)
    if (pe->dom[i] && (pe->b->iter_vars[i].var == v || pe->loop[i] == v))
      return pe->dom[i];
  return NULL;
}

static loom_buffer *padded_buffer(const padding *pe, const loom_buffer *b) {
  for (int i = 0; i < pe->n_pads; i++)
    if (pe->old[i] == b)
      return pe->pad[i];
  return NULL;
}

/* Why a region is not a point of iter variables and constants, or NULL. */
static const char *einsum_problem(const loom_buffer_region *r) {
  for (int k = 0; k < r->n_ranges; k++) {
    int64_t one;
    const loom_expr *mn = r->ranges[k].min;
    if (!loom_ir_is_const_int(r->ranges[k].extent, &one) || one != 1)
      return "is not a single point";
    if (mn->kind != LOOM_EXPR_VAR && mn->kind != LOOM_EXPR_INT)
      return "has an index that is not a variable or a constant";
  }
  return NULL;
}

static bool needs_padding(const padding *pe, const loom_buffer_region *r) {
  for (int k = 0; k < r->n_ranges; k++)
    if (r->ranges[k].min->kind == LOOM_EXPR_VAR &&
        padded_of_var(pe, r->ranges[k].min->u.var))
      return true;
  return false;
}

/* ceildiv(extent, f) * f, printed as TVM simplifies it. */
static loom_expr *round_up(loom_arena *a, loom_expr *ext, int64_t f) {
  int64_t n;
  if (loom_ir_is_const_int(ext, &n))
    return loom_ir_int(a, ext->dtype, (n + f - 1) / f * f);
  loom_expr *s = loom_ir_binary(a, LOOM_EXPR_ADD, ext,
                                loom_ir_int(a, ext->dtype, f - 1));
  loom_expr *q = loom_ir_binary(a, LOOM_EXPR_FLOORDIV, s,
                                loom_ir_int(a, ext->dtype, f));
  return loom_ir_binary(a, LOOM_EXPR_MUL, q, loom_ir_int(a, ext->dtype, f));
}

/* The padded copy of the buffer a region accesses: a padded iter's extent
 * where the index is that iter, 1 where it is a constant, the buffer's own
 * extent elsewhere. */
static loom_buffer *pad_buffer(loom_arena *a, const padding *pe,
                               const loom_buffer_region *r) {
  const loom_buffer *b = r->buffer;
  loom_expr *shape[MAX_DIMS];
  for (int k = 0; k < b->ndim; k++) {
    const loom_expr *mn = r->ranges[k].min;
    loom_expr *ext = mn->kind == LOOM_EXPR_VAR ? padded_of_var(pe, mn->u.var)
                                                : NULL;
    shape[k] = mn->kind == LOOM_EXPR_INT ? loom_ir_int(a, mn->dtype, 1)
               : ext                     ? ext
                                         : b->shape[k];
    if (!shape[k])
      return NULL;
  }
  char name[256];
  snprintf(name, sizeof name, "%s_pad", b->name);
  loom_buffer *nb = loom_ir_buffer(a, name, b->dtype, shape, b->ndim);
  if (!nb)
    return NULL;
  nb->scope = b->scope;
  nb->data->scope = b->data->scope;
  nb->data->elem = b->data->elem;
  return nb;
}

/* The loops i<k> and block `pad->name` copying between buf and its padded
 * copy: filling it (over the padded shape, zero outside buf) or writing it
 * back (over buf's shape). */
static loom_stmt *copy_nest(loom_arena *a, loom_arith_ctx *ctx,
                            loom_buffer *buf, loom_buffer *pad, bool is_fill,
                            loom_loc loc) {
  int n = buf->ndim;
  loom_block *b = loom_ir_block(a, pad->name);
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *vals);
  loom_expr **idx = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *idx);
  loom_range *pt = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *pt);
  loom_buffer_region *rd = loom_arena_alloc(a, sizeof *rd);
  loom_buffer_region *wr = loom_arena_alloc(a, sizeof *wr);
  loom_var *lv[MAX_DIMS];
  loom_expr *cond = NULL;
  if (!b || !iters || !vals || !idx || !pt || !rd || !wr)
    return NULL;
  for (int k = 0; k < n; k++) {
    loom_expr *dim = is_fill ? pad->shape[k] : buf->shape[k];
    char nm[32];
    snprintf(nm, sizeof nm, "i%d", k);
    lv[k] = loom_ir_var(a, nm, dim->dtype);
    snprintf(nm, sizeof nm, "v%d", k);
    loom_var *v = loom_ir_var(a, nm, dim->dtype);
    loom_expr *zero = loom_ir_int(a, dim->dtype, 0);
    if (!lv[k] || !v || !zero)
      return NULL;
    iters[k] = (loom_iter_var){v, {zero, dim}, LOOM_ITER_SPATIAL};
    vals[k] = loom_ir_ref(a, lv[k]);
    idx[k] = loom_ir_ref(a, v);
    pt[k] = (loom_range){idx[k], loom_ir_int(a, dim->dtype, 1)};
    if (!vals[k] || !idx[k] || !pt[k].extent)
      return NULL;
    /* Outside buf's shape the filled copy holds zero. */
    loom_expr *eq = loom_ir_binary(a, LOOM_EXPR_EQ, buf->shape[k], pad->shape[k]);
    if (!eq)
      return NULL;
    eq->dtype = LOOM_BOOL;
    if (is_fill && loom_arith_can_prove(ctx, eq) != LOOM_ARITH_TRUE) {
      loom_expr *lt = loom_ir_binary(a, LOOM_EXPR_LT, idx[k], buf->shape[k]);
      if (!lt)
        return NULL;
      lt->dtype = LOOM_BOOL;
      cond = cond ? loom_ir_binary(a, LOOM_EXPR_AND, cond, lt) : lt;
      if (!cond)
        return NULL;
    }
  }
  loom_buffer *src = is_fill ? buf : pad, *dst = is_fill ? pad : buf;
  loom_expr *value = loom_ir_load(a, src, idx, n);
  if (!value)
    return NULL;
  if (cond) {
    loom_expr *zero = buf->dtype.code == LOOM_DT_FLOAT ||
                              buf->dtype.code == LOOM_DT_BFLOAT
                          ? loom_ir_float(a, buf->dtype, 0.0)
                          : loom_ir_int(a, buf->dtype, 0);
    loom_expr *args[3] = {cond, value, zero};
    value = zero ? loom_ir_call(a, buf->dtype, LOOM_OP_IF_THEN_ELSE, args, 3)
                 : NULL;
    if (!value)
      return NULL;
  }
  loom_stmt *store = loom_ir_stmt(a, LOOM_STMT_STORE, loc);
  loom_stmt *realize = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, loc);
  if (!store || !realize)
    return NULL;
  store->u.store.buffer = dst;
  store->u.store.value = value;
  store->u.store.indices = idx;
  store->u.store.n_indices = n;
  *rd = (loom_buffer_region){buf, pt, n};
  *wr = (loom_buffer_region){pad, pt, n};
  b->iter_vars = iters;
  b->n_iter_vars = n;
  b->reads = is_fill ? rd : wr;
  b->writes = is_fill ? wr : rd;
  b->n_reads = b->n_writes = 1;
  b->body = store;
  realize->u.realize.block = b;
  realize->u.realize.iter_values = vals;
  realize->u.realize.n_iter_values = n;
  loom_stmt *nest = realize;
  for (int k = n - 1; k >= 0; k--) {
    loom_stmt *l = loom_ir_stmt(a, LOOM_STMT_FOR, loc);
    if (!l)
      return NULL;
    l->u.loop.var = lv[k];
    l->u.loop.min = iters[k].dom.min;
    l->u.loop.extent = iters[k].dom.extent;
    l->u.loop.kind = LOOM_FOR_SERIAL;
    l->u.loop.body = nest;
    nest = l;
  }
  return nest;
}

/* ---- the einsum block, padded -------------------------------------------------- */

typedef struct repoint {
  padding *pe;
  loom_arena *a;
  bool is_oom;
} repoint;

static loom_expr *repoint_hook(void *ctx, loom_expr *e) {
  repoint *w = ctx;
  if (e->kind != LOOM_EXPR_LOAD)
    return NULL;
  loom_buffer *nb = padded_buffer(w->pe, e->u.load.buffer);
  if (!nb)
    return NULL;
  loom_expr *r = loom_arena_dup(w->a, e, sizeof *r);
  if (!r) {
    w->is_oom = true;
    return e;
  }
  r->u.load.buffer = nb;
  return r;
}

static loom_stmt *repoint_store(loom_arena *a, padding *pe, loom_stmt *s) {
  if (!s)
    return NULL;
  repoint w = {pe, a, false};
  loom_stmt *n = loom_arena_dup(a, s, sizeof *n);
  if (!n)
    return NULL;
  loom_buffer *nb = padded_buffer(pe, s->u.store.buffer);
  if (nb)
    n->u.store.buffer = nb;
  n->u.store.value = loom_ir_rewrite_expr(a, s->u.store.value, repoint_hook, &w);
  return n->u.store.value && !w.is_oom ? n : NULL;
}

static loom_buffer_region *repoint_regions(loom_arena *a, const padding *pe,
                                           const loom_buffer_region *r, int n) {
  loom_buffer_region *out =
      loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  for (int i = 0; out && i < n; i++) {
    out[i] = r[i];
    loom_buffer *nb = padded_buffer(pe, r[i].buffer);
    if (nb)
      out[i].buffer = nb;
  }
  return out;
}

static loom_stmt *padded_realize(loom_arena *a, padding *pe,
                                 const loom_stmt *r) {
  const loom_block *b = pe->b;
  loom_block *nb = loom_arena_dup(a, b, sizeof *nb);
  loom_stmt *nr = loom_arena_dup(a, r, sizeof *nr);
  loom_iter_var *iv =
      loom_arena_dup(a, b->iter_vars, (size_t)b->n_iter_vars * sizeof *iv);
  if (!nb || !nr || !iv)
    return NULL;
  for (int i = 0; i < b->n_iter_vars; i++)
    if (pe->dom[i])
      iv[i].dom.extent = pe->dom[i];
  nb->iter_vars = iv;
  nb->reads = repoint_regions(a, pe, b->reads, b->n_reads);
  nb->writes = repoint_regions(a, pe, b->writes, b->n_writes);
  nb->body = repoint_store(a, pe, b->body);
  nb->init = b->init ? repoint_store(a, pe, b->init) : NULL;
  if (!nb->reads || !nb->writes || !nb->body || (b->init && !nb->init))
    return NULL;
  nr->u.realize.block = nb;
  return nr;
}

/* ---- checks ------------------------------------------------------------------- */

static bool is_zero_pad_sum(const loom_expr *e, const loom_var *r);

/* Whether a product has a factor that loads a buffer at index r: with r
 * past the original extent that load reads the zero padding. */
static bool has_zero_factor(const loom_expr *e, const loom_var *r) {
  switch (e->kind) {
  case LOOM_EXPR_MUL:
    return has_zero_factor(e->u.bin.a, r) || has_zero_factor(e->u.bin.b, r);
  case LOOM_EXPR_CAST:
    return has_zero_factor(e->u.unary.a, r);
  case LOOM_EXPR_LOAD:
    for (int k = 0; k < e->u.load.n_indices; k++)
      if (e->u.load.indices[k]->kind == LOOM_EXPR_VAR &&
          e->u.load.indices[k]->u.var == r)
        return true;
    return false;
  default:
    return false;
  }
}

/* Whether the update adds zero at a padded point of reduction iter r. */
static bool is_zero_pad_sum(const loom_expr *e, const loom_var *r) {
  if (e->kind != LOOM_EXPR_ADD)
    return false;
  return (e->u.bin.a->kind == LOOM_EXPR_LOAD && has_zero_factor(e->u.bin.b, r)) ||
         (e->u.bin.b->kind == LOOM_EXPR_LOAD && has_zero_factor(e->u.bin.a, r));
}

/* Why the padded copy of the buffer region r accesses would not stand
 * for it, or NULL: a constant index other than 0 falls outside the copy's
 * extent of 1, and a written buffer is copied back whole, so the block
 * must write all of it. */
static const char *copy_problem(const padding *pe, loom_arith_ctx *ctx,
                                const loom_buffer_region *r, bool is_write) {
  for (int k = 0; k < r->n_ranges; k++) {
    const loom_expr *mn = r->ranges[k].min;
    loom_expr *dim = r->buffer->shape[k];
    int64_t v, n;
    if (mn->kind == LOOM_EXPR_INT) {
      if (mn->u.int_value != 0)
        return "it is accessed at a constant index other than 0";
      if (is_write && (!loom_ir_is_const_int(dim, &n) || n != 1))
        return "the block does not write all of it";
      continue;
    }
    if (!is_write)
      continue;
    const loom_iter_var *iv = NULL;
    for (int i = 0; i < pe->b->n_iter_vars; i++)
      if (pe->b->iter_vars[i].var == mn->u.var)
        iv = &pe->b->iter_vars[i];
    bool whole = iv && loom_ir_is_const_int(iv->dom.min, &v) && v == 0;
    if (whole && !loom_ir_same_expr(iv->dom.extent, dim)) {
      loom_expr eq = {.kind = LOOM_EXPR_EQ, .dtype = LOOM_BOOL};
      eq.u.bin.a = iv->dom.extent;
      eq.u.bin.b = dim;
      whole = loom_arith_can_prove(ctx, &eq) == LOOM_ARITH_TRUE;
    }
    if (!whole)
      return "the block does not write all of it";
  }
  return NULL;
}

/* The top-level statement of the scope's body that holds the block, and
 * whether it holds any other block. */
static int top_index(const sched_path *p, int sc) {
  return p->stmts[sc + 1]->kind == LOOM_STMT_SEQ ? sc + 2 : sc + 1;
}

loom_status sched_apply_pad_einsum(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  sched_stmt_list kids = {0};
  loom_arith_ctx *ctx = NULL;
  char why[256];
  const char *problem;
  TRY(sched_input_block(c, 0, &p));
  loom_status st = LOOM_OK;
  int ri = p.n - 1;
  const loom_stmt *r = p.stmts[ri];
  padding *pe = calloc(1, sizeof *pe);
  if (!pe) {
    st = sched_nomem(c);
    goto out;
  }
  pe->b = r->u.realize.block;
  const loom_block *b = pe->b;
  int sc = sched_scope_index(&p, ri);
  if (sc < 0) {
    st = sched_fail(c, "block '%s' is the root block", b->name);
    goto out;
  }
  if ((problem = sched_stage_pipeline_problem(&p, sc, why, sizeof why))) {
    st = sched_fail(c, "the scope of block '%s' is not a stage pipeline: %s",
                    b->name, problem);
    goto out;
  }
  const loom_tval *list = c->n_attrs > 0 ? &c->attrs[0] : NULL;
  bool ok = list && list->kind == LOOM_TV_LIST && list->n == b->n_iter_vars &&
            b->n_iter_vars <= MAX_ITERS;
  for (int i = 0; ok && i < list->n; i++)
    ok = list->items[i].kind == LOOM_TV_INT && list->items[i].i > 0;
  if (!ok) {
    st = sched_fail(c, "the padding of block '%s' must be a list of %d "
                       "positive integers, one per iter",
                    b->name, b->n_iter_vars);
    goto out;
  }
  if (b->n_reads + b->n_writes > 2 * MAX_ITERS) {
    st = sched_fail(c, "block '%s' accesses too many buffers (limit is %d)",
                    b->name, 2 * MAX_ITERS);
    goto out;
  }
  /* An einsum: each buffer once, every access a point of iters. */
  for (int i = 0; i < b->n_reads + b->n_writes; i++) {
    const loom_buffer_region *x =
        i < b->n_reads ? &b->reads[i] : &b->writes[i - b->n_reads];
    for (int k = 0; k < i; k++) {
      const loom_buffer_region *y =
          k < b->n_reads ? &b->reads[k] : &b->writes[k - b->n_reads];
      if (x->buffer == y->buffer) {
        st = sched_fail(c, "block '%s' is not an einsum: it accesses buffer "
                           "'%s' in two regions",
                        b->name, x->buffer->name);
        goto out;
      }
    }
    if ((problem = einsum_problem(x)) || x->buffer->ndim > MAX_DIMS) {
      st = sched_fail(c, "block '%s' is not an einsum: its access to '%s' %s",
                      b->name, x->buffer->name,
                      problem ? problem : "has too many dimensions");
      goto out;
    }
  }
  if (b->body->kind != LOOM_STMT_STORE ||
      (b->init && b->init->kind != LOOM_STMT_STORE)) {
    st = sched_fail(c, "block '%s' is not an einsum: its body is not a "
                       "single store",
                    b->name);
    goto out;
  }
  /* The padded extents. */
  ctx = sched_arith_for_path(&p, 0);
  if (!ctx) {
    st = sched_nomem(c);
    goto out;
  }
  bool any = false;
  for (int i = 0; i < b->n_iter_vars; i++) {
    const loom_iter_var *iv = &b->iter_vars[i];
    loom_expr *d = round_up(a, iv->dom.extent, list->items[i].i);
    loom_expr *eq = d ? loom_ir_binary(a, LOOM_EXPR_EQ, d, iv->dom.extent) : NULL;
    if (!eq) {
      st = sched_nomem(c);
      goto out;
    }
    eq->dtype = LOOM_BOOL;
    if (list->items[i].i == 1 ||
        loom_arith_can_prove(ctx, eq) == LOOM_ARITH_TRUE)
      continue;
    int64_t mn;
    if (!loom_ir_is_const_int(iv->dom.min, &mn) || mn != 0) {
      st = sched_fail(c, "iter '%s' of block '%s' does not start at 0; only "
                      "iters from 0 can be padded",
                      iv->var->name, b->name);
      goto out;
    }
    pe->dom[i] = d;
    any = true;
    loom_expr *bind = r->u.realize.iter_values[i];
    if (bind->kind == LOOM_EXPR_VAR)
      pe->loop[i] = bind->u.var;
    /* Zero padding leaves a sum of products unchanged; any other reduction
     * over padded points would fold the zeros in. */
    if (iv->kind == LOOM_ITER_REDUCE &&
        !is_zero_pad_sum(b->body->u.store.value, iv->var)) {
      st = sched_fail(c, "block '%s' is not a sum of products over iter "
                      "'%s', so its padded points would change the result",
                      b->name, iv->var->name);
      goto out;
    }
  }
  /* The padded loops grow for the block alone. */
  int ti = top_index(&p, sc);
  if (!sched_collect_blocks(p.stmts[ti], &kids)) {
    st = sched_nomem(c);
    goto out;
  }
  if (kids.n != 1) {
    st = sched_fail(c, "block '%s' shares its loops with other blocks; "
                       "padding them would run those on padded points too",
                    b->name);
    goto out;
  }

  /* The copies: fills before the block, write-backs after it. */
  loom_stmt *fills[2 * MAX_ITERS], *backs[2 * MAX_ITERS];
  int n_fills = 0, n_backs = 0;
  for (int i = 0; any && i < b->n_reads + b->n_writes; i++) {
    bool is_read = i < b->n_reads;
    const loom_buffer_region *x =
        is_read ? &b->reads[i] : &b->writes[i - b->n_reads];
    if (!needs_padding(pe, x))
      continue;
    if ((problem = copy_problem(pe, ctx, x, !is_read))) {
      st = sched_fail(c, "cannot pad buffer '%s' of block '%s': %s",
                      x->buffer->name, b->name, problem);
      goto out;
    }
    loom_buffer *nb = pad_buffer(a, pe, x);
    loom_stmt *nest = nb ? copy_nest(a, ctx, x->buffer, nb, is_read, r->loc)
                         : NULL;
    if (!nest) {
      st = sched_nomem(c);
      goto out;
    }
    pe->old[pe->n_pads] = x->buffer;
    pe->pad[pe->n_pads++] = nb;
    if (is_read)
      fills[n_fills++] = nest;
    else
      backs[n_backs++] = nest;
  }
  /* The block and its loops, rebuilt from the block up to the top. */
  loom_stmt *cur = padded_realize(a, pe, r);
  for (int k = ri - 1; cur && k >= ti; k--) {
    loom_stmt *x = sched_with_child(a, p.stmts[k], p.stmts[k + 1], cur);
    if (x && x->kind == LOOM_STMT_FOR) {
      for (int i = 0; i < b->n_iter_vars; i++)
        if (pe->dom[i] && pe->loop[i] == x->u.loop.var)
          x->u.loop.extent = pe->dom[i];
    }
    cur = x;
  }
  /* The scope's new body and allocations. */
  const loom_stmt *sr = p.stmts[sc];
  const loom_block *sb = sr->u.realize.block;
  loom_stmt *body = sb->body;
  bool is_seq = body->kind == LOOM_STMT_SEQ;
  int n_old = is_seq ? body->u.seq.n_stmts : 1;
  int n_new = n_old + n_fills + n_backs;
  loom_stmt **items = loom_arena_alloc(a, (size_t)n_new * sizeof *items);
  loom_stmt *seq = loom_ir_stmt(a, LOOM_STMT_SEQ, body->loc);
  loom_buffer **allocs = loom_arena_alloc(
      a, (size_t)(sb->n_alloc_buffers + pe->n_pads + 1) * sizeof *allocs);
  loom_block *nsb = loom_arena_dup(a, sb, sizeof *nsb);
  loom_stmt *nsr = loom_arena_dup(a, sr, sizeof *nsr);
  if (!cur || !items || !seq || !allocs || !nsb || !nsr) {
    st = sched_nomem(c);
    goto out;
  }
  int k = 0;
  for (int i = 0; i < n_old; i++) {
    loom_stmt *x = is_seq ? body->u.seq.stmts[i] : body;
    if (x != p.stmts[ti]) {
      items[k++] = x;
      continue;
    }
    for (int j = 0; j < n_fills; j++)
      items[k++] = fills[j];
    items[k++] = cur;
    for (int j = 0; j < n_backs; j++)
      items[k++] = backs[j];
  }
  seq->u.seq.stmts = items;
  seq->u.seq.n_stmts = k;
  for (int i = 0; i < sb->n_alloc_buffers; i++)
    allocs[i] = sb->alloc_buffers[i];
  for (int i = 0; i < pe->n_pads; i++)
    allocs[sb->n_alloc_buffers + i] = pe->pad[i];
  nsb->body = k == 1 ? items[0] : seq;
  nsb->alloc_buffers = allocs;
  nsb->n_alloc_buffers = sb->n_alloc_buffers + pe->n_pads;
  nsr->u.realize.block = nsb;
  if (!(c->mod = sched_replace(a, c->mod, &p, sc, nsr)))
    st = sched_nomem(c);
out:
  loom_arith_ctx_free(ctx);
  free(kids.items);
  free(pe);
  sched_path_free(&p);
  return st;
}
