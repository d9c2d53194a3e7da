/* reindex_cache_read / reindex_cache_write: cache a buffer a block accesses
 * at one index tuple in a new buffer `<buffer>_<scope>` laid out by an
 * index map over the block's iters. The cache block has the block's iters
 * (spatial) and bindings, under copies of the loops of the block's
 * only-child chain that its bindings use, placed right before (read) or
 * after (write) that chain; a read cache of a buffer nothing in the scope
 * writes goes first in the scope, as TVM places it. */
#include "schedule/index_map.h"

#include <string.h>

#define MAX_ITERS 64

static loom_visit find_writer(void *ctx, loom_stmt *s) {
  const loom_buffer **buf = ctx;
  if (s->kind == LOOM_STMT_STORE && s->u.store.buffer == *buf)
    return LOOM_VISIT_STOP;
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  return sched_block_writes(s->u.realize.block, *buf) ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

/* Whether something under s writes buf. */
static bool writes_buffer(const loom_stmt *s, const loom_buffer *buf) {
  loom_ir_visitor v = {.stmt_pre = find_writer, .ctx = &buf};
  return !loom_ir_visit_stmt(&v, (loom_stmt *)s);
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
  loom_expr **acc = NULL;
  int n_acc = 0;
  bool differ = false;
  if (!one_access(b->init, buf, &acc, &n_acc, &differ) ||
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
      st = sched_fail(c, "result %d of the index map does not range from 0",
                      j);
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
  /* Where it goes: beside the block's chain of only-child loops. */
  int top = ri;
  while (top - 1 > 0 && p.stmts[top - 1]->kind == LOOM_STMT_FOR &&
         p.stmts[top - 1]->u.loop.body == p.stmts[top])
    top--;
  /* Copies of the chain's loops the bindings use. */
  const loom_var *olds[64];
  loom_expr *news[64];
  loom_stmt *copies[64];
  int nl = 0;
  for (int k = top; k < ri && nl < 64; k++) {
    const loom_stmt *l = p.stmts[k];
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
      if (sched_expr_uses(l->u.loop.min, p.stmts[q]->u.loop.var) ||
          sched_expr_uses(l->u.loop.extent, p.stmts[q]->u.loop.var)) {
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
    *cl = *l;
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
  /* The block's predicate bounds the cache block too; it may use only the
   * copied loops and loops outside the chain. */
  for (int k = top; k < ri; k++) {
    bool copied = false;
    for (int q = 0; q < nl; q++)
      copied |= olds[q] == p.stmts[k]->u.loop.var;
    if (!copied && sched_expr_uses(r->u.realize.predicate, p.stmts[k]->u.loop.var)) {
      st = sched_fail(c, "the predicate of block '%s' uses loop '%s', which "
                         "its cache block does not run over",
                      b->name, p.stmts[k]->u.loop.var->name);
      goto out;
    }
  }
  sched_map lm = {.vars = olds, .values = news, .n = nl};
  loom_expr *pred = r->u.realize.predicate
                        ? sched_subst_expr(a, r->u.realize.predicate, &lm)
                        : NULL;
  if (r->u.realize.predicate && !pred) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < ni; i++)
    if (!(vals[i] = sched_subst_expr(a, vals[i], &lm))) {
      st = sched_nomem(c);
      goto out;
    }
  loom_expr tmp = {.kind = LOOM_EXPR_LOAD};
  loom_expr *from = is_write ? loom_ir_load(a, nb, kidx, map.n_results)
                             : loom_ir_load(a, buf, kacc, n_acc);
  loom_stmt *store = loom_ir_stmt(a, LOOM_STMT_STORE, r->loc);
  loom_block *cb = loom_ir_block(a, nb->name);
  loom_stmt *cr = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, r->loc);
  if (!from || !store || !cb || !cr) {
    st = sched_nomem(c);
    goto out;
  }
  (void)tmp;
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
  /* Rebuild the chain around the new block, then put the cache nest
   * beside it. */
  loom_stmt *chain = nr;
  for (int i = ri - 1; i >= top && chain; i--)
    chain = sched_with_child(a, p.stmts[i], p.stmts[i + 1], chain);
  if (!chain) {
    st = sched_nomem(c);
    goto out;
  }
  const loom_stmt *parent = p.stmts[top - 1];
  loom_stmt *repl;
  int depth;
  /* As TVM places a read cache of a buffer nothing in the scope writes (an
   * input): first in the scope, when the chain sits in the scope's body. */
  int scope_at = sched_scope_index(&p, ri);
  bool is_first = !is_write && parent->kind == LOOM_STMT_SEQ && top - 1 == scope_at + 1 &&
                  !writes_buffer(parent, buf);
  if (parent->kind == LOOM_STMT_SEQ) {
    int n = parent->u.seq.n_stmts;
    loom_stmt **items = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *items);
    repl = loom_arena_alloc(a, sizeof *repl);
    if (!items || !repl) {
      st = sched_nomem(c);
      goto out;
    }
    int k = 0;
    if (is_first)
      items[k++] = nest;
    for (int i = 0; i < n; i++) {
      if (parent->u.seq.stmts[i] != p.stmts[top]) {
        items[k++] = parent->u.seq.stmts[i];
        continue;
      }
      if (!is_write && !is_first)
        items[k++] = nest;
      items[k++] = chain;
      if (is_write)
        items[k++] = nest;
    }
    *repl = *parent;
    repl->u.seq.stmts = items;
    repl->u.seq.n_stmts = k;
    depth = top - 1;
  } else {
    repl = loom_ir_stmt(a, LOOM_STMT_SEQ, r->loc);
    loom_stmt **items = loom_arena_alloc(a, 2 * sizeof *items);
    if (!repl || !items) {
      st = sched_nomem(c);
      goto out;
    }
    items[0] = is_write ? chain : nest;
    items[1] = is_write ? nest : chain;
    repl->u.seq.stmts = items;
    repl->u.seq.n_stmts = 2;
    depth = top;
  }
  /* The cache is allocated by the scope. */
  int si = scope_at;
  if (si < 0 || si >= depth) {
    st = sched_fail(c, "block '%s' has no scope block above its loops",
                    b->name);
    goto out;
  }
  loom_stmt *cur = repl;
  for (int i = depth - 1; i > si && cur; i--)
    cur = sched_with_child(a, p.stmts[i], p.stmts[i + 1], cur);
  loom_stmt *sr = cur ? sched_with_child(a, p.stmts[si], p.stmts[si + 1], cur)
                      : NULL;
  if (!sr) {
    st = sched_nomem(c);
    goto out;
  }
  loom_block *sb = sr->u.realize.block;
  loom_buffer **allocs = loom_arena_alloc(
      a, (size_t)(sb->n_alloc_buffers + 1) * sizeof *allocs);
  if (!allocs) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < sb->n_alloc_buffers; i++)
    allocs[i] = sb->alloc_buffers[i];
  allocs[sb->n_alloc_buffers] = nb;
  sb->alloc_buffers = allocs;
  sb->n_alloc_buffers++;
  if (!(c->mod = sched_replace(a, c->mod, &p, si, sr))) {
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
