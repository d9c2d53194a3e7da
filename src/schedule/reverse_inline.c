/* reverse_compute_inline: fold a consumer block into the single producer of
 * the buffer it reads. The consumer's loads B[h(v)] must be invertible onto
 * the producer's store B[u1, ..., un] (any index expressions of the
 * producer's iters): each loaded index is a digit (L // c) % m of
 * a linear form L of consumer iters, the digits of one L make up a mixed
 * radix, and so does L over its iters. Then every consumer iter is a digit
 * of the producer's iters, the producer stores the consumer's result, and a
 * predicate keeps it inside the consumer's domain where that is smaller. */
#include "schedule/sched_impl.h"

#include <string.h>

#define MAX_DIMS 16

typedef struct digit {
  loom_expr *L;   /* linear form of consumer iters */
  int64_t c, m;   /* h = (L // c) % m; m == 0 for none */
  int dim;
} digit;

static void parse_digit(loom_expr *h, digit *d) {
  int64_t k;
  d->c = 1;
  d->m = 0;
  if (h->kind == LOOM_EXPR_FLOORMOD && loom_ir_is_const_int(h->u.bin.b, &k) &&
      k > 0) {
    d->m = k;
    h = h->u.bin.a;
  }
  if (h->kind == LOOM_EXPR_FLOORDIV && loom_ir_is_const_int(h->u.bin.b, &k) &&
      k > 0) {
    d->c = k;
    h = h->u.bin.a;
  }
  d->L = h;
}

/* L as sum coef_i * iter_i over distinct consumer iters, coefs positive. */
static bool linear_terms(const loom_expr *e, const loom_block *b, int64_t scale,
                         int64_t *coef) {
  int64_t k;
  switch (e->kind) {
  case LOOM_EXPR_VAR:
    for (int i = 0; i < b->n_iter_vars; i++)
      if (b->iter_vars[i].var == e->u.var) {
        if (coef[i])
          return false;
        coef[i] = scale;
        return true;
      }
    return false;
  case LOOM_EXPR_ADD:
    return linear_terms(e->u.bin.a, b, scale, coef) &&
           linear_terms(e->u.bin.b, b, scale, coef);
  case LOOM_EXPR_MUL:
    if (loom_ir_is_const_int(e->u.bin.b, &k) && k > 0)
      return linear_terms(e->u.bin.a, b, scale * k, coef);
    if (loom_ir_is_const_int(e->u.bin.a, &k) && k > 0)
      return linear_terms(e->u.bin.b, b, scale * k, coef);
    return false;
  default:
    return false;
  }
}

static loom_expr *bin(loom_arena *a, loom_expr_kind k, loom_expr *x,
                      int64_t c) {
  return loom_ir_binary(a, k, x, loom_ir_int(a, x->dtype, c));
}

/* Fills inv[i] (an expression of the producer's store indices u) for every
 * consumer iter i, or returns a reason for refusing. */
static const char *invert(loom_arena *a, const loom_block *cb, loom_expr **h,
                          int n, loom_expr *const *u, loom_expr **inv) {
  digit dg[MAX_DIMS];
  bool grouped[MAX_DIMS] = {false};
  for (int k = 0; k < n; k++) {
    parse_digit(h[k], &dg[k]);
    dg[k].dim = k;
  }
  for (int i = 0; i < cb->n_iter_vars; i++)
    inv[i] = NULL;
  for (int k = 0; k < n; k++) {
    if (grouped[k])
      continue;
    /* The dims that are digits of the same L, outermost (largest c) first. */
    digit g[MAX_DIMS];
    int ng = 0;
    for (int j = k; j < n; j++)
      if (!grouped[j] && loom_ir_same_expr(dg[j].L, dg[k].L)) {
        grouped[j] = true;
        int at = ng++;
        while (at > 0 && g[at - 1].c < dg[j].c) {
          g[at] = g[at - 1];
          at--;
        }
        g[at] = dg[j];
      }
    if (g[ng - 1].c != 1 || g[0].m != 0)
      return "an index is not a whole mixed-radix digit of its form";
    for (int j = 0; j + 1 < ng; j++)
      if (g[j + 1].m == 0 || g[j].c != g[j + 1].c * g[j + 1].m)
        return "the indices do not split their form into a mixed radix";
    /* L in the producer's indices: innermost digit first. */
    loom_expr *L = u[g[ng - 1].dim];
    for (int j = ng - 2; j >= 0 && L; j--)
      L = loom_ir_binary(a, LOOM_EXPR_ADD, L,
                         bin(a, LOOM_EXPR_MUL, u[g[j].dim], g[j].c));
    int64_t coef[256] = {0};
    if (cb->n_iter_vars > 256 || !linear_terms(g[0].L, cb, 1, coef))
      return "an index is not a linear form of distinct iters";
    /* Iters of L by coefficient, outermost first, as a mixed radix. */
    int order[256], no = 0;
    for (int i = 0; i < cb->n_iter_vars; i++)
      if (coef[i]) {
        int at = no++;
        while (at > 0 && coef[order[at - 1]] < coef[i]) {
          order[at] = order[at - 1];
          at--;
        }
        order[at] = i;
      }
    for (int j = 0; j < no; j++) {
      int i = order[j];
      int64_t ext;
      if (!loom_ir_is_const_int(cb->iter_vars[i].dom.extent, &ext))
        return "an iter has a non-constant extent";
      if (inv[i])
        return "an iter appears in more than one index form";
      if (j + 1 < no) {
        int64_t below;
        if (!loom_ir_is_const_int(cb->iter_vars[order[j + 1]].dom.extent,
                                  &below) ||
            coef[i] != coef[order[j + 1]] * below)
          return "the iters of an index do not form a mixed radix";
      } else if (coef[i] != 1)
        return "the innermost iter of an index has a coefficient other than 1";
      loom_expr *v = L;
      if (coef[i] != 1)
        v = bin(a, LOOM_EXPR_FLOORDIV, v, coef[i]);
      if (j > 0)
        v = bin(a, LOOM_EXPR_FLOORMOD, v, ext);
      inv[i] = v;
      if (!v)
        return "out of memory";
    }
  }
  for (int i = 0; i < cb->n_iter_vars; i++) {
    int64_t ext;
    if (inv[i])
      continue;
    if (!loom_ir_is_const_int(cb->iter_vars[i].dom.extent, &ext) || ext != 1)
      return "an iter of the consumer does not appear in the loaded indices";
    inv[i] = loom_ir_int(a, cb->iter_vars[i].var->dtype, 0);
  }
  return NULL;
}

/* ---- the rewrite ---------------------------------------------------------------- */

typedef struct folding {
  loom_buffer *buffer;
  loom_expr *value;   /* the producer's stored value */
  loom_expr **h;      /* the consumer's load indices */
  int n;
  bool bad_load;      /* a load of the buffer with other indices */
} folding;

static loom_expr *fold_load(const sched_map *m, loom_arena *a,
                            loom_expr *load) {
  folding *f = m->ctx;
  if (load->u.load.buffer != f->buffer)
    return load;
  return f->value;
}

static bool same_loads(const loom_expr *e, folding *f) {
  if (!e)
    return true;
  switch (e->kind) {
  case LOOM_EXPR_LOAD:
    if (e->u.load.buffer == f->buffer) {
      if (e->u.load.n_indices != f->n)
        return false;
      for (int i = 0; i < f->n; i++)
        if (!loom_ir_same_expr(e->u.load.indices[i], f->h[i]))
          return false;
    }
    for (int i = 0; i < e->u.load.n_indices; i++)
      if (!same_loads(e->u.load.indices[i], f))
        return false;
    return true;
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
  case LOOM_EXPR_VAR:
    return true;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    return same_loads(e->u.unary.a, f);
  case LOOM_EXPR_SELECT:
    return same_loads(e->u.select.cond, f) && same_loads(e->u.select.t, f) &&
           same_loads(e->u.select.f, f);
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      if (!same_loads(e->u.call.args[i], f))
        return false;
    return true;
  case LOOM_EXPR_LET:
    return same_loads(e->u.let.value, f) && same_loads(e->u.let.body, f);
  case LOOM_EXPR_RAMP:
  case LOOM_EXPR_BROADCAST:
    return false;
  default:
    return same_loads(e->u.bin.a, f) && same_loads(e->u.bin.b, f);
  }
}

static const loom_expr *find_load(const loom_expr *e, const loom_buffer *b) {
  if (!e)
    return NULL;
  if (e->kind == LOOM_EXPR_LOAD && e->u.load.buffer == b)
    return e;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
  case LOOM_EXPR_VAR:
    return NULL;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    return find_load(e->u.unary.a, b);
  case LOOM_EXPR_SELECT: {
    const loom_expr *r = find_load(e->u.select.cond, b);
    r = r ? r : find_load(e->u.select.t, b);
    return r ? r : find_load(e->u.select.f, b);
  }
  case LOOM_EXPR_LOAD:
    for (int i = 0; i < e->u.load.n_indices; i++) {
      const loom_expr *r = find_load(e->u.load.indices[i], b);
      if (r)
        return r;
    }
    return NULL;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++) {
      const loom_expr *r = find_load(e->u.call.args[i], b);
      if (r)
        return r;
    }
    return NULL;
  case LOOM_EXPR_LET: {
    const loom_expr *r = find_load(e->u.let.value, b);
    return r ? r : find_load(e->u.let.body, b);
  }
  case LOOM_EXPR_RAMP:
  case LOOM_EXPR_BROADCAST:
    return NULL;
  default: {
    const loom_expr *r = find_load(e->u.bin.a, b);
    return r ? r : find_load(e->u.bin.b, b);
  }
  }
}

loom_status sched_apply_reverse_compute_inline(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0}, pp = {0};
  sched_stmt_list sib = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_status st = LOOM_OK;
  int ri = p.n - 1;
  const loom_stmt *cr = p.stmts[ri];
  const loom_block *cb = cr->u.realize.block;
  const loom_func *func = c->mod->funcs[p.func];
  int sc = sched_scope_index(&p, ri);
  if (sc < 0 || !sched_is_complete(cb) || cb->n_writes != 1) {
    st = sched_fail(c, "block '%s' is not a complete block writing one "
                       "buffer (every iter spatial, no init)",
                    cb->name);
    goto out;
  }
  /* The buffer it reads that a block of its scope produces: exactly one. */
  if (!sched_collect_blocks(p.stmts[sc]->u.realize.block->body, &sib)) {
    st = sched_nomem(c);
    goto out;
  }
  loom_buffer *buf = NULL;
  int n_produced = 0;
  for (int i = 0; i < cb->n_reads; i++)
    for (int j = 0; j < sib.n; j++)
      if (sib.items[j] != cr &&
          sched_block_writes(sib.items[j]->u.realize.block,
                             cb->reads[i].buffer)) {
        buf = cb->reads[i].buffer;
        n_produced++;
        break;
      }
  if (n_produced != 1) {
    st = sched_fail(c, "block '%s' must read exactly one buffer that another "
                       "block of its scope produces, but it reads %d",
                    cb->name, n_produced);
    goto out;
  }
  loom_stmt *pr = NULL;
  for (int j = 0; j < sib.n; j++) {
    const loom_block *o = sib.items[j]->u.realize.block;
    if (sib.items[j] == cr)
      continue;
    if (sched_block_writes(o, buf)) {
      if (pr) {
        st = sched_fail(c, "buffer '%s' has more than one producer", buf->name);
        goto out;
      }
      pr = sib.items[j];
    }
    /* The producer itself may read it (a block nested in it does): the
     * buffer would go while that reader is left. */
    if (sched_block_reads(o, buf)) {
      st = sched_fail(c, "block '%s' also reads '%s'; block '%s' must be its "
                         "only consumer",
                      o->name, buf->name, cb->name);
      goto out;
    }
  }
  int at_p = -1, at_c = -1;
  for (int j = 0; j < sib.n; j++) {
    at_p = sib.items[j] == pr ? j : at_p;
    at_c = sib.items[j] == cr ? j : at_c;
  }
  int64_t t;
  if (at_p < 0 || at_c < 0 || at_p > at_c) {
    st = sched_fail(c, "the producer of '%s' does not come before block '%s'",
                    buf->name, cb->name);
    goto out;
  }
  if (sched_has_predicate(cr)) {
    st = sched_fail(c, "block '%s' has a predicate", cb->name);
    goto out;
  }
  const loom_block *pb = pr->u.realize.block;
  const loom_stmt *cs = cb->body, *ps = pb->body;
  if (sched_is_param_buffer(func, buf) ||
      loom_ir_stmt_uses(func->body, buf->data)) {
    st = sched_fail(c, "buffer '%s' is a parameter or has an opaque access",
                    buf->name);
    goto out;
  }
  /* A buffer the scope does not allocate outlives it: another reader, out
   * of the scope, would lose its producer. */
  const loom_block *outer = p.stmts[sc]->u.realize.block;
  if (!sched_scope_allocates(outer, buf)) {
    st = sched_fail(c, "producer '%s' is an output block: it writes '%s', which "
                       "block '%s' around it does not allocate",
                    pr->u.realize.block->name, buf->name, outer->name);
    goto out;
  }
  if (!sched_is_complete(pb) || pb->n_writes != 1 ||
      ps->kind != LOOM_STMT_STORE || ps->u.store.buffer != buf ||
      ps->u.store.n_indices > MAX_DIMS) {
    st = sched_fail(c, "producer '%s' is not a complete block whose body is "
                       "a single store to '%s'",
                    pb->name, buf->name);
    goto out;
  }
  /* The producer's store indices u stand for the consumer's loaded ones;
   * the consumer's iters are recovered from them. */
  loom_expr *u[MAX_DIMS];
  for (int k = 0; k < ps->u.store.n_indices; k++) {
    u[k] = ps->u.store.indices[k];
    if (find_load(u[k], buf)) {
      st = sched_fail(c, "producer '%s' loads '%s' in a store index",
                      pb->name, buf->name);
      goto out;
    }
  }
  if (cs->kind != LOOM_STMT_STORE) {
    st = sched_fail(c, "the body of block '%s' is not a single store",
                    cb->name);
    goto out;
  }
  const loom_expr *first = find_load(cs->u.store.value, buf);
  folding fd = {buf, ps->u.store.value, first ? first->u.load.indices : NULL,
                first ? first->u.load.n_indices : 0, false};
  if (!first || fd.n != ps->u.store.n_indices ||
      !same_loads(cs->u.store.value, &fd)) {
    st = sched_fail(c, "block '%s' must load '%s' at one index tuple",
                    cb->name, buf->name);
    goto out;
  }
  for (int k = 0; k < cs->u.store.n_indices; k++)
    if (find_load(cs->u.store.indices[k], buf)) {
      st = sched_fail(c, "block '%s' loads '%s' in a store index", cb->name,
                      buf->name);
      goto out;
    }
  loom_expr *inv[256];
  const char *why =
      cb->n_iter_vars > 256 ? "too many iters"
                            : invert(a, cb, fd.h, fd.n, u, inv);
  if (why) {
    st = sched_fail(c, "the loads of '%s' in block '%s' cannot be inverted: "
                       "%s",
                    buf->name, cb->name, why);
    goto out;
  }

  /* The producer's new store and predicate. */
  const loom_var *cvars[256];
  for (int i = 0; i < cb->n_iter_vars; i++)
    cvars[i] = cb->iter_vars[i].var;
  sched_map vm = {.vars = cvars, .values = inv, .n = cb->n_iter_vars};
  sched_map lm = {.on_load = fold_load, .ctx = &fd};
  loom_expr *value = sched_subst_expr(a, cs->u.store.value, &lm);
  value = value ? sched_subst_expr(a, value, &vm) : NULL;
  loom_expr **idx = loom_arena_alloc(
      a, (size_t)(cs->u.store.n_indices ? cs->u.store.n_indices : 1) *
             sizeof *idx);
  if (!value || !idx) {
    st = sched_nomem(c);
    goto out;
  }
  for (int k = 0; k < cs->u.store.n_indices; k++)
    if (!(idx[k] = sched_subst_expr(a, cs->u.store.indices[k], &vm))) {
      st = sched_nomem(c);
      goto out;
    }
  /* Where the consumer's domain is smaller than what the producer covers,
   * a predicate over the producer's loops keeps to it. */
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  if (!ctx) {
    st = sched_nomem(c);
    goto out;
  }
  loom_diag dd;
  loom_diag_init(&dd);
  for (int i = 0; i < pb->n_iter_vars; i++) {
    int64_t mn, ext;
    if (loom_ir_is_const_int(pb->iter_vars[i].dom.min, &mn) &&
        loom_ir_is_const_int(pb->iter_vars[i].dom.extent, &ext) && ext > 0)
      loom_arith_bind(ctx, pb->iter_vars[i].var, mn, mn + ext - 1, &dd);
  }
  loom_diag_free(&dd);
  const loom_var *pvars[256];
  int np = pb->n_iter_vars < 256 ? pb->n_iter_vars : 256;
  for (int i = 0; i < np; i++)
    pvars[i] = pb->iter_vars[i].var;
  sched_map bm = {.vars = pvars, .values = pr->u.realize.iter_values, .n = np};
  loom_expr *pred = pr->u.realize.predicate;
  for (int i = 0; i < cb->n_iter_vars && st == LOOM_OK; i++) {
    int64_t ext, mn;
    loom_arith_interval iv = loom_arith_bound(ctx, inv[i]);
    if (!loom_ir_is_const_int(cb->iter_vars[i].dom.extent, &ext) ||
        !loom_ir_is_const_int(cb->iter_vars[i].dom.min, &mn))
      continue;
    /* The consumer's domain may start above 0 (a loop from 1). */
    bool low = !iv.is_bounded || iv.min < mn;
    bool high = !iv.is_bounded || iv.max >= mn + ext;
    if (!low && !high)
      continue;
    loom_expr *e = sched_subst_expr(a, inv[i], &bm);
    loom_arith_ctx *lc = sched_arith_for_path(&p, 0);
    e = e && lc ? sched_normalize(a, lc, e) : NULL;
    loom_arith_ctx_free(lc);
    loom_expr *cond = e && high ? bin(a, LOOM_EXPR_LT, e, mn + ext) : NULL;
    loom_expr *lo = e && low && (mn != 0 || (iv.is_bounded && iv.min < 0))
                        ? bin(a, LOOM_EXPR_GE, e, mn)
                        : NULL;
    if (cond)
      cond->dtype = LOOM_BOOL;
    if (lo) {
      lo->dtype = LOOM_BOOL;
      cond = cond ? loom_ir_binary(a, LOOM_EXPR_AND, lo, cond) : lo;
    }
    if (!cond)
      continue;
    pred = !pred || (loom_ir_is_const_int(pred, &t) && t)
               ? cond
               : loom_ir_binary(a, LOOM_EXPR_AND, pred, cond);
    if (!pred)
      st = sched_nomem(c);
  }
  loom_arith_ctx_free(ctx);
  if (st != LOOM_OK)
    goto out;
  loom_stmt *store = loom_arena_alloc(a, sizeof *store);
  loom_block *nb = loom_arena_alloc(a, sizeof *nb);
  loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
  if (!store || !nb || !nr) {
    st = sched_nomem(c);
    goto out;
  }
  *store = *cs;
  store->u.store.value = value;
  store->u.store.indices = idx;
  *nb = *pb;
  nb->body = store;
  *nr = *pr;
  nr->u.realize.block = nb;
  nr->u.realize.predicate = pred;
  loom_block *fin = sched_infer_regions(a, func, nb, buf);
  if (!fin) {
    st = sched_nomem(c);
    goto out;
  }
  nr->u.realize.block = fin;

  /* Replace the producer, drop the consumer's leaf and the buffer. */
  sched_find_block(func, pb->name, &pp);
  pp.func = p.func;
  int h = ri;
  while (h - 1 > sc && p.stmts[h - 1]->kind == LOOM_STMT_FOR)
    h--;
  if (h - 1 == sc || p.stmts[h - 1]->kind != LOOM_STMT_SEQ || pp.n == 0 ||
      pp.stmts[pp.n - 1] != pr) {
    st = sched_fail(c, "block '%s' is the only leaf of its scope", cb->name);
    goto out;
  }
  const loom_module *m1 = sched_replace(a, c->mod, &pp, pp.n - 1, nr);
  sched_path q = {0};
  q.func = p.func;
  bool found = m1 && sched_find_block(m1->funcs[p.func], cb->name, &q);
  loom_stmt *cur = NULL;
  int hq = h; /* the producer's rewrite kept the consumer's depth */
  if (found && q.n == p.n && hq > 0)
    cur = sched_with_child(a, q.stmts[hq - 1], q.stmts[hq], NULL);
  const loom_module *m2 = cur ? sched_replace(a, m1, &q, hq - 1, cur) : NULL;
  /* The scope no longer allocates the folded buffer. */
  sched_path s2 = {0};
  s2.func = p.func;
  const loom_stmt *scope_old = p.stmts[sc];
  const char *scope_name = scope_old->u.realize.block->name;
  if (m2 && sched_find_block(m2->funcs[p.func], scope_name, &s2)) {
    loom_stmt *sr = s2.stmts[s2.n - 1];
    const loom_block *sb = sr->u.realize.block;
    loom_block *b2 = loom_arena_alloc(a, sizeof *b2);
    loom_stmt *r2 = loom_arena_alloc(a, sizeof *r2);
    loom_buffer **al = loom_arena_alloc(
        a, (size_t)(sb->n_alloc_buffers ? sb->n_alloc_buffers : 1) * sizeof *al);
    if (b2 && r2 && al) {
      *b2 = *sb;
      b2->n_alloc_buffers = 0;
      for (int i = 0; i < sb->n_alloc_buffers; i++)
        if (sb->alloc_buffers[i] != buf)
          al[b2->n_alloc_buffers++] = sb->alloc_buffers[i];
      b2->alloc_buffers = al;
      *r2 = *sr;
      r2->u.realize.block = b2;
      m2 = sched_replace(a, m2, &s2, s2.n - 1, r2);
    } else
      m2 = NULL;
  } else
    m2 = NULL;
  sched_path_free(&q);
  sched_path_free(&s2);
  c->mod = m2;
  if (!c->mod)
    st = sched_nomem(c);
out:
  free(sib.items);
  sched_path_free(&p);
  sched_path_free(&pp);
  return st;
}
