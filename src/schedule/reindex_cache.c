/* reindex_cache_read / reindex_cache_write: cache a buffer a block accesses
 * at one index tuple in a new buffer `<buffer>_<scope>` laid out by an
 * index map over the block's iters. The cache block has the block's iters
 * (spatial) and bindings, under copies of the loops between it and its
 * place that its bindings use; it goes where TVM's cache_read and
 * cache_write put their copies. */
#include "schedule/index_map.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ITERS 64
#define MAX_DIMS 16

/* Where the cache block goes, as TVM places it: a read cache after the
 * buffer's only writer in the scope, right before the item that holds the
 * block (first in the scope when nothing there writes the buffer, or only
 * after the block); a write cache before the first block after it that
 * reads the buffer (last in the scope when none does). */
static loom_status find_place(sched_call *c, loom_stmt *body, loom_stmt *r,
                              const loom_buffer *buf, bool is_write,
                              sched_place *out) {
  sched_stmt_list blocks = {0};
  if (!sched_collect_blocks(body, &blocks)) {
    free(blocks.items);
    return sched_nomem(c);
  }
  loom_stmt *writer = NULL, **related = malloc((size_t)(blocks.n + 1) * sizeof *related);
  int n_writers = 0, n_related = 0, at_block = -1, at_writer = -1;
  for (int i = 0; i < blocks.n; i++) {
    if (blocks.items[i] == r)
      at_block = i;
    if (sched_block_writes(blocks.items[i]->u.realize.block, buf)) {
      writer = blocks.items[i];
      at_writer = i;
      n_writers++;
    }
  }
  for (int i = at_block + 1; related && is_write && i < blocks.n; i++)
    if (sched_block_reads(blocks.items[i]->u.realize.block, buf))
      related[n_related++] = blocks.items[i];
  free(blocks.items);
  loom_status st = LOOM_OK;
  if (!related) {
    st = sched_nomem(c);
  } else if (n_writers > 1 || (is_write && writer != r)) {
    st = sched_fail(c, "buffer '%s' must be written by a single block of "
                       "the scope, but %d blocks write it",
                    buf->name, n_writers);
  } else if (!is_write && (!writer || at_block < at_writer)) {
    *out = (sched_place){body, 0, NULL};
  } else if (is_write && n_related == 0) {
    int n = body->kind == LOOM_STMT_SEQ ? body->u.seq.n_stmts : 1;
    *out = (sched_place){body, n, NULL};
  } else {
    if (!is_write)
      related[n_related++] = r;
    if (!sched_place_stage(body, writer, related, n_related, out))
      st = sched_fail(c, "no place for the cache of '%s' between its writer "
                         "'%s' and its consumers",
                      buf->name, writer->u.realize.block->name);
  }
  free(related);
  return st;
}

/* Whether every access to buf in s uses the same indices; *idx gets them. */
static bool one_access(const loom_stmt *s, const loom_buffer *buf,
                       loom_expr ***idx, int *n, bool *differ);

static bool one_access_expr(const loom_expr *e, const loom_buffer *buf,
                            loom_expr ***idx, int *n, bool *differ, int depth) {
  if (!e || depth > 200)
    return true;
  switch (e->kind) {
  case LOOM_EXPR_INT: case LOOM_EXPR_FLOAT: case LOOM_EXPR_STR:
  case LOOM_EXPR_VAR:
    return true;
  case LOOM_EXPR_NOT: case LOOM_EXPR_CAST:
    return one_access_expr(e->u.unary.a, buf, idx, n, differ, depth + 1);
  case LOOM_EXPR_SELECT:
    return one_access_expr(e->u.select.cond, buf, idx, n, differ, depth + 1) &&
           one_access_expr(e->u.select.t, buf, idx, n, differ, depth + 1) &&
           one_access_expr(e->u.select.f, buf, idx, n, differ, depth + 1);
  case LOOM_EXPR_LOAD:
    if (e->u.load.buffer == buf) {
      if (!*idx) {
        *idx = e->u.load.indices;
        *n = e->u.load.n_indices;
      } else if (*n != e->u.load.n_indices) {
        *differ = true;
      } else {
        for (int i = 0; i < *n; i++)
          if (!loom_ir_same_expr((*idx)[i], e->u.load.indices[i]))
            *differ = true;
      }
    }
    for (int i = 0; i < e->u.load.n_indices; i++)
      if (!one_access_expr(e->u.load.indices[i], buf, idx, n, differ, depth + 1))
        return false;
    return true;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      if (!one_access_expr(e->u.call.args[i], buf, idx, n, differ, depth + 1))
        return false;
    return true;
  case LOOM_EXPR_LET:
    return one_access_expr(e->u.let.value, buf, idx, n, differ, depth + 1) &&
           one_access_expr(e->u.let.body, buf, idx, n, differ, depth + 1);
  case LOOM_EXPR_RAMP:
  case LOOM_EXPR_BROADCAST:
    return false;
  default:
    return one_access_expr(e->u.bin.a, buf, idx, n, differ, depth + 1) &&
           one_access_expr(e->u.bin.b, buf, idx, n, differ, depth + 1);
  }
}

static bool one_access(const loom_stmt *s, const loom_buffer *buf,
                       loom_expr ***idx, int *n, bool *differ) {
  if (!s)
    return true;
  switch (s->kind) {
  case LOOM_STMT_STORE:
    if (s->u.store.buffer == buf) {
      loom_expr tmp = {.kind = LOOM_EXPR_LOAD};
      tmp.u.load.buffer = s->u.store.buffer;
      tmp.u.load.indices = s->u.store.indices;
      tmp.u.load.n_indices = s->u.store.n_indices;
      if (!one_access_expr(&tmp, buf, idx, n, differ, 0))
        return false;
    }
    return one_access_expr(s->u.store.value, buf, idx, n, differ, 0);
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      if (!one_access(s->u.seq.stmts[i], buf, idx, n, differ))
        return false;
    return true;
  case LOOM_STMT_LET:
    return one_access_expr(s->u.let.value, buf, idx, n, differ, 0) &&
           one_access(s->u.let.body, buf, idx, n, differ);
  case LOOM_STMT_IF:
    return one_access_expr(s->u.if_.cond, buf, idx, n, differ, 0) &&
           one_access(s->u.if_.then_case, buf, idx, n, differ) &&
           one_access(s->u.if_.else_case, buf, idx, n, differ);
  case LOOM_STMT_FOR:
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_COUNT_: break;
  }
  return false;
}

static loom_buffer_region *point(loom_arena *a, loom_buffer *buf,
                                 loom_expr **idx, int n) {
  loom_buffer_region *r = loom_arena_alloc(a, sizeof *r);
  if (!r)
    return NULL;
  r->buffer = buf;
  r->n_ranges = n;
  r->ranges = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *r->ranges);
  if (!r->ranges)
    return NULL;
  for (int d = 0; d < n; d++) {
    r->ranges[d].min = idx[d];
    r->ranges[d].extent = loom_ir_int(a, idx[d]->dtype, 1);
    if (!r->ranges[d].extent)
      return NULL;
  }
  return r;
}

/* Whether the cache block's bindings vals stay inside its iters' domains
 * over the loops it runs under: the copies news[0..nl) of the loops olds,
 * and the loops outside them (p.stmts[0..ri), copies from top on). */
static bool bindings_in_domains(const sched_path *p, int top, int ri,
                                const loom_var *const *olds,
                                loom_expr *const *news, int nl,
                                const loom_iter_var *iters,
                                loom_expr *const *vals, int ni, loom_diag *d) {
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  if (!ctx)
    return false;
  for (int k = 0; k < ri; k++) {
    const loom_stmt *l = p->stmts[k];
    int64_t mn, ext;
    if (l->kind != LOOM_STMT_FOR || !loom_ir_is_const_int(l->u.loop.min, &mn) ||
        !loom_ir_is_const_int(l->u.loop.extent, &ext) || ext <= 0)
      continue;
    const loom_var *v = k < top ? l->u.loop.var : NULL;
    for (int q = 0; q < nl && !v; q++)
      if (olds[q] == l->u.loop.var)
        v = news[q]->u.var;
    if (v)
      loom_arith_bind(ctx, v, mn, mn + ext - 1, d);
  }
  bool inside = true;
  for (int i = 0; i < ni && inside; i++) {
    int64_t mn, ext;
    loom_arith_interval iv = loom_arith_bound(ctx, vals[i]);
    inside = loom_ir_is_const_int(iters[i].dom.min, &mn) &&
             loom_ir_is_const_int(iters[i].dom.extent, &ext) &&
             iv.is_bounded && iv.min >= mn && iv.max <= mn + ext - 1;
  }
  loom_arith_ctx_free(ctx);
  return inside;
}

static loom_status reindex_cache(sched_call *c, bool is_write) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  int ri = p.n - 1;
  loom_stmt *r = p.stmts[ri];
  const loom_block *b = r->u.realize.block;
  loom_status st = LOOM_OK;
  loom_arith_ctx *ctx = NULL;
  if (c->n_attrs < 3 || c->attrs[0].kind != LOOM_TV_INT ||
      c->attrs[1].kind != LOOM_TV_STR || c->attrs[2].kind != LOOM_TV_STR) {
    st = sched_fail(c, "expected a buffer index, a storage scope and an "
                       "index map");
    goto out;
  }
  int64_t bi = c->attrs[0].i;
  int nbuf = is_write ? b->n_writes : b->n_reads;
  if (bi < 0 || bi >= nbuf) {
    st = sched_fail(c, "block '%s' %s %d buffer%s, so the index must be in "
                       "[0, %d), not %lld",
                    b->name, is_write ? "writes" : "reads", nbuf,
                    nbuf == 1 ? "" : "s", nbuf, (long long)bi);
    goto out;
  }
  const char *scope = c->attrs[1].s;
  if (!sched_is_storage_scope(scope)) {
    st = sched_fail(c, "'%s' is not a storage scope", scope);
    goto out;
  }
  loom_buffer *buf = is_write ? b->writes[bi].buffer : b->reads[bi].buffer;
  /* The block declares one element of the buffer, as TVM requires. */
  const loom_buffer_region *declared = is_write ? &b->writes[bi] : &b->reads[bi];
  for (int d = 0; d < declared->n_ranges; d++) {
    int64_t ext;
    if (!loom_ir_is_const_int(declared->ranges[d].extent, &ext) || ext != 1) {
      st = sched_fail(c, "block '%s' declares that it %s more than one "
                         "element of '%s' (dimension %d); the cache needs a "
                         "single point",
                      b->name, is_write ? "writes" : "reads", buf->name, d);
      goto out;
    }
  }
  loom_expr **acc = NULL;
  int n_acc = 0;
  bool differ = false;
  loom_expr *mins[MAX_DIMS];
  const loom_stmt *leaf = b->body;
  while (leaf->kind == LOOM_STMT_FOR)
    leaf = leaf->u.loop.body;
  if (!b->init && b->body->kind == LOOM_STMT_FOR && leaf->kind == LOOM_STMT_STORE &&
      declared->n_ranges <= MAX_DIMS) {
    /* Loops around one store inside the block (a read_at copy's): the
     * block declares the one point it touches, and the cache is read
     * there, as TVM reads it. */
    for (int d = 0; d < declared->n_ranges; d++)
      mins[d] = declared->ranges[d].min;
    acc = mins;
    n_acc = declared->n_ranges;
  } else if (!one_access(b->init, buf, &acc, &n_acc, &differ) ||
             !one_access(b->body, buf, &acc, &n_acc, &differ) || !acc || differ) {
    st = sched_fail(c, "block '%s' must be a leaf that accesses '%s' at one "
                       "index tuple",
                    b->name, buf->name);
    goto out;
  }
  if (b->n_iter_vars > MAX_ITERS) {
    st = sched_fail(c, "block '%s' has too many iters", b->name);
    goto out;
  }
  /* The block moves to the cache, filled before it or written back after
   * it, never both: an in-place update would lose its old values or its
   * result. */
  if (sched_block_updates(b, buf) && !(is_write && b->init)) {
    st = sched_fail(c, "block '%s' reads and writes buffer '%s' in place; "
                       "a %s cache would %s",
                    b->name, buf->name, is_write ? "write" : "read",
                    is_write ? "leave the block reading an unfilled cache"
                             : "never reach the buffer with the block's result");
    goto out;
  }
  sched_index_map map;
  char why[256];
  loom_dtype t = b->n_iter_vars ? b->iter_vars[0].var->dtype : LOOM_INT32;
  if (!sched_index_map_parse(a, c->attrs[2].s, t, &map, why, sizeof why)) {
    st = sched_fail(c, "%s", why);
    goto out;
  }
  if (map.is_ranges || map.n_params != b->n_iter_vars || map.n_results == 0) {
    st = sched_fail(c, "the index map must take the %d iters of block '%s'",
                    b->n_iter_vars, b->name);
    goto out;
  }
  /* Every iter the access uses must survive the map, or the cache would
   * hold one element for several of the buffer's (TVM's check). */
  for (int i = 0; i < b->n_iter_vars; i++) {
    bool used = false, kept = false;
    for (int d = 0; d < n_acc; d++)
      used |= sched_expr_uses(acc[d], b->iter_vars[i].var);
    for (int j = 0; j < map.n_results; j++)
      kept |= sched_expr_uses(map.results[j], map.params[i]);
    if (used && !kept) {
      st = sched_fail(c, "iter '%s' indexes '%s' in block '%s' but the index "
                         "map drops it: the cache would merge elements",
                      b->iter_vars[i].var->name, buf->name, b->name);
      goto out;
    }
  }
  /* The cache's shape: the map's range over the iters' domains. */
  ctx = loom_arith_ctx_new();
  loom_expr **shape = loom_arena_alloc(a, (size_t)map.n_results * sizeof *shape);
  loom_expr *args[MAX_ITERS];
  if (!ctx || !shape) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < b->n_iter_vars; i++) {
    int64_t mn, ext;
    if (!loom_ir_is_const_int(b->iter_vars[i].dom.min, &mn) ||
        !loom_ir_is_const_int(b->iter_vars[i].dom.extent, &ext) || ext <= 0) {
      st = sched_fail(c, "iter '%s' of block '%s' has no constant domain",
                      b->iter_vars[i].var->name, b->name);
      goto out;
    }
    loom_arith_bind(ctx, map.params[i], mn, mn + ext - 1, c->d);
    if (!(args[i] = loom_ir_ref(a, b->iter_vars[i].var))) {
      st = sched_nomem(c);
      goto out;
    }
  }
  /* The cache block moves every point, guarded by the block or not: the
   * access must stay inside the buffer over the iters' domains. */
  {
    loom_arith_ctx *bc = loom_arith_ctx_new();
    if (!bc) {
      st = sched_nomem(c);
      goto out;
    }
    for (int i = 0; i < b->n_iter_vars; i++) {
      int64_t mn, ext;
      loom_ir_is_const_int(b->iter_vars[i].dom.min, &mn);
      loom_ir_is_const_int(b->iter_vars[i].dom.extent, &ext);
      loom_arith_bind(bc, b->iter_vars[i].var, mn, mn + ext - 1, c->d);
    }
    for (int d = 0; d < n_acc && d < buf->ndim && st == LOOM_OK; d++) {
      loom_arith_interval iv = loom_arith_bound(bc, acc[d]);
      int64_t ext;
      if (!loom_ir_is_const_int(buf->shape[d], &ext) || !iv.is_bounded ||
          iv.min < 0 || iv.max >= ext)
        st = sched_fail(c, "index %d of '%s' in block '%s' may leave the "
                           "buffer over the block's iters; the cache block "
                           "would access it out of bounds",
                        d, buf->name, b->name);
    }
    loom_arith_ctx_free(bc);
    if (st != LOOM_OK)
      goto out;
  }
  for (int j = 0; j < map.n_results; j++) {
    loom_arith_interval iv = loom_arith_bound(ctx, map.results[j]);
    if (!iv.is_bounded || iv.min != 0) {
      st = sched_fail(c, "result %d of the index map does not range from 0 "
                         "over the iters of block '%s'; a cache sized by "
                         "their extents would be indexed past its end",
                      j, b->name);
      goto out;
    }
    if (!(shape[j] = loom_ir_int(a, map.results[j]->dtype, iv.max + 1))) {
      st = sched_nomem(c);
      goto out;
    }
  }
  loom_expr **cidx = loom_arena_alloc(a, (size_t)map.n_results * sizeof *cidx);
  if (!cidx || !sched_index_map_apply(a, &map, args, cidx)) {
    st = sched_nomem(c);
    goto out;
  }
  char name[256];
  snprintf(name, sizeof name, "%s_%s", buf->name, scope);
  for (char *q = name; *q; q++)
    if (*q == '.')
      *q = '_';
  loom_buffer *nb = sched_reshaped_copy(a, buf, name, shape, map.n_results);
  if (!nb || !(nb->scope = loom_arena_strdup(a, scope))) {
    st = sched_nomem(c);
    goto out;
  }
  nb->data->scope = nb->scope;

  /* The block on the cache. */
  sched_swap w = {buf, nb, cidx, map.n_results};
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

  /* The cache block: the iters the map or the access uses, spatial. */
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)b->n_iter_vars * sizeof *iters + 1);
  loom_expr **vals = loom_arena_alloc(a, (size_t)b->n_iter_vars * sizeof *vals + 1);
  if (!iters || !vals) {
    st = sched_nomem(c);
    goto out;
  }
  int ni = 0;
  const loom_var *iv_old[MAX_ITERS];
  loom_expr *iv_new[MAX_ITERS];
  for (int i = 0; i < b->n_iter_vars; i++) {
    bool used = false;
    for (int j = 0; j < map.n_results; j++)
      used |= sched_expr_uses(cidx[j], b->iter_vars[i].var);
    for (int d = 0; d < n_acc; d++)
      used |= sched_expr_uses(acc[d], b->iter_vars[i].var);
    if (!used)
      continue;
    iters[ni] = b->iter_vars[i];
    iters[ni].kind = LOOM_ITER_SPATIAL;
    iters[ni].var = loom_ir_var(a, b->iter_vars[i].var->name,
                                b->iter_vars[i].var->dtype);
    iv_old[ni] = b->iter_vars[i].var;
    if (!iters[ni].var || !(iv_new[ni] = loom_ir_ref(a, iters[ni].var))) {
      st = sched_nomem(c);
      goto out;
    }
    vals[ni++] = r->u.realize.iter_values[i];
  }
  /* The cache block's own iters in its indices. */
  sched_map im = {.vars = iv_old, .values = iv_new, .n = ni};
  loom_expr **kacc = loom_arena_alloc(a, (size_t)(n_acc ? n_acc : 1) * sizeof *kacc);
  loom_expr **kidx = loom_arena_alloc(a, (size_t)map.n_results * sizeof *kidx);
  if (!kacc || !kidx) {
    st = sched_nomem(c);
    goto out;
  }
  for (int d = 0; d < n_acc; d++)
    if (!(kacc[d] = sched_subst_expr(a, acc[d], &im))) {
      st = sched_nomem(c);
      goto out;
    }
  for (int j = 0; j < map.n_results; j++)
    if (!(kidx[j] = sched_subst_expr(a, cidx[j], &im))) {
      st = sched_nomem(c);
      goto out;
    }
  /* Where it goes, and the loops between there and the block. */
  int si = sched_scope_index(&p, ri);
  if (si < 0) {
    st = sched_fail(c, "block '%s' is the root block", b->name);
    goto out;
  }
  loom_stmt *body = p.stmts[si]->u.realize.block->body;
  sched_place place;
  if ((st = find_place(c, body, r, buf, is_write, &place)) != LOOM_OK)
    goto out;
  int top = si + 1;
  for (int k = si + 1; k < ri; k++)
    if (p.stmts[k] == place.loc)
      top = k + 1;
  /* Copies of the chain's loops the bindings use. */
  const loom_var *olds[64];
  loom_expr *news[64];
  loom_stmt *copies[64];
  int nl = 0;
  for (int k = top; k < ri && nl < 64; k++) {
    const loom_stmt *l = p.stmts[k];
    if (l->kind != LOOM_STMT_FOR)
      continue;
    bool used = false;
    for (int i = 0; i < ni; i++)
      used |= sched_expr_uses(vals[i], l->u.loop.var);
    if (!used)
      continue;
    loom_stmt *cl = loom_arena_alloc(a, sizeof *cl);
    loom_var *v = loom_ir_var(a, l->u.loop.var->name, l->u.loop.var->dtype);
    if (!cl || !v || !(news[nl] = loom_ir_ref(a, v))) {
      st = sched_nomem(c);
      goto out;
    }
    /* A range may use only the loops copied so far (a triangular nest
     * whose inner loop depends on a loop the bindings skip is refused). */
    sched_map sofar = {.vars = olds, .values = news, .n = nl};
    for (int q = top; q < k; q++)
      if (p.stmts[q]->kind == LOOM_STMT_FOR &&
          (sched_expr_uses(l->u.loop.min, p.stmts[q]->u.loop.var) ||
           sched_expr_uses(l->u.loop.extent, p.stmts[q]->u.loop.var))) {
        bool copied = false;
        for (int q2 = 0; q2 < nl; q2++)
          copied |= olds[q2] == p.stmts[q]->u.loop.var;
        if (!copied) {
          st = sched_fail(c, "the range of loop '%s' above block '%s' uses "
                             "loop '%s', which the cache block does not copy",
                          l->u.loop.var->name, b->name,
                          p.stmts[q]->u.loop.var->name);
          goto out;
        }
      }
    /* A plain serial loop over the same range, as TVM copies it. */
    *cl = *l;
    cl->u.loop.kind = LOOM_FOR_SERIAL;
    cl->u.loop.thread = NULL;
    cl->u.loop.annotations = NULL;
    cl->u.loop.n_annotations = 0;
    cl->u.loop.var = v;
    cl->u.loop.min = sched_subst_expr(a, l->u.loop.min, &sofar);
    cl->u.loop.extent = sched_subst_expr(a, l->u.loop.extent, &sofar);
    if (!cl->u.loop.min || !cl->u.loop.extent) {
      st = sched_nomem(c);
      goto out;
    }
    olds[nl] = l->u.loop.var;
    copies[nl++] = cl;
  }
  sched_map lm = {.vars = olds, .values = news, .n = nl};
  for (int i = 0; i < ni; i++)
    if (!(vals[i] = sched_subst_expr(a, vals[i], &lm))) {
      st = sched_nomem(c);
      goto out;
    }
  /* TVM's cache block has no predicate. Where the block's predicate keeps
   * the bindings inside the iters' domains (a split that does not divide)
   * the cache block keeps it, or it would copy past the cache's end. */
  loom_expr *pred = NULL;
  if (r->u.realize.predicate &&
      !bindings_in_domains(&p, top, ri, olds, news, nl, iters, vals, ni, c->d)) {
    for (int k = top; k < ri; k++) {
      if (p.stmts[k]->kind != LOOM_STMT_FOR)
        continue;
      bool copied = false;
      for (int q = 0; q < nl; q++)
        copied |= olds[q] == p.stmts[k]->u.loop.var;
      if (!copied &&
          sched_expr_uses(r->u.realize.predicate, p.stmts[k]->u.loop.var)) {
        st = sched_fail(c, "the predicate of block '%s' uses loop '%s', "
                           "which its cache block does not run over",
                        b->name, p.stmts[k]->u.loop.var->name);
        goto out;
      }
    }
    if (!(pred = sched_subst_expr(a, r->u.realize.predicate, &lm))) {
      st = sched_nomem(c);
      goto out;
    }
  }
  loom_expr *from = is_write ? loom_ir_load(a, nb, kidx, map.n_results)
                             : loom_ir_load(a, buf, kacc, n_acc);
  loom_stmt *store = loom_ir_stmt(a, LOOM_STMT_STORE, r->loc);
  loom_block *cb = loom_ir_block(a, nb->name);
  loom_stmt *cr = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, r->loc);
  if (!from || !store || !cb || !cr) {
    st = sched_nomem(c);
    goto out;
  }
  store->u.store.buffer = is_write ? buf : nb;
  store->u.store.value = from;
  store->u.store.indices = is_write ? kacc : kidx;
  store->u.store.n_indices = is_write ? n_acc : map.n_results;
  cb->iter_vars = iters;
  cb->n_iter_vars = ni;
  cb->body = store;
  cb->reads = is_write ? point(a, nb, kidx, map.n_results)
                       : point(a, buf, kacc, n_acc);
  cb->writes = is_write ? point(a, buf, kacc, n_acc)
                        : point(a, nb, kidx, map.n_results);
  cb->n_reads = cb->n_writes = 1;
  if (!cb->reads || !cb->writes) {
    st = sched_nomem(c);
    goto out;
  }
  cr->u.realize.block = cb;
  cr->u.realize.iter_values = vals;
  cr->u.realize.n_iter_values = ni;
  cr->u.realize.predicate = pred;
  loom_stmt *nest = cr;
  for (int k = nl - 1; k >= 0; k--) {
    copies[k]->u.loop.body = nest;
    nest = copies[k];
  }
  loom_stmt *nbody = sched_insert_stage(a, body, &place, nest, &r, &nr, 1);
  const loom_block *sb = p.stmts[si]->u.realize.block;
  loom_block *nsb = loom_arena_alloc(a, sizeof *nsb);
  loom_stmt *nsr = loom_arena_alloc(a, sizeof *nsr);
  loom_buffer **allocs = loom_arena_alloc(
      a, (size_t)(sb->n_alloc_buffers + 1) * sizeof *allocs);
  if (!nbody || !nsb || !nsr || !allocs) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < sb->n_alloc_buffers; i++)
    allocs[i] = sb->alloc_buffers[i];
  allocs[sb->n_alloc_buffers] = nb;
  *nsb = *sb;
  nsb->body = nbody;
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
  loom_arith_ctx_free(ctx);
  sched_path_free(&p);
  return st;
}

loom_status sched_apply_reindex_cache_read(sched_call *c) {
  return reindex_cache(c, false);
}

loom_status sched_apply_reindex_cache_write(sched_call *c) {
  return reindex_cache(c, true);
}
