/* fuse_reduction_epilogue: fold an elementwise epilogue (a bias add, a clip
 * with min/max, a relu) into the sum reduction that produces its input, the
 * way TVM does: the init stores the epilogue applied to zero, the update
 * stores the epilogue applied to the running sum with a bias addend dropped,
 * and the epilogue block goes away. Only a bias add keeps the values; a
 * min/max shell is applied at every step of the sum, as in TVM. */
#include "schedule/sched_impl.h"

#include <stdio.h>

#define MAX_ITERS 64

/* ---- expression walks over loads of one buffer ------------------------------- */

typedef struct load_walk {
  loom_arena *a;
  const loom_buffer *buf;
  int n_loads;
  bool is_scaled;
  const loom_expr *hit; /* the first load of buf */
} load_walk;

static loom_expr *count_hook(void *ctx, loom_expr *e) {
  load_walk *w = ctx;
  if (e->kind == LOOM_EXPR_LOAD && e->u.load.buffer == w->buf)
    w->n_loads++;
  return NULL;
}

static loom_expr *find_hook(void *ctx, loom_expr *e) {
  load_walk *w = ctx;
  if (e->kind == LOOM_EXPR_LOAD && e->u.load.buffer == w->buf && !w->hit)
    w->hit = e;
  return NULL;
}

static int count_loads(loom_arena *a, loom_expr *e, const loom_buffer *buf) {
  load_walk w = {a, buf, 0, false, NULL};
  loom_ir_rewrite_expr(a, e, count_hook, &w);
  return w.n_loads;
}

/* A product, quotient or remainder with the reduction result inside an
 * operand scales it: TVM refuses such an epilogue. */
static loom_expr *scale_hook(void *ctx, loom_expr *e) {
  load_walk *w = ctx;
  switch (e->kind) {
  case LOOM_EXPR_MUL:
  case LOOM_EXPR_DIV:
  case LOOM_EXPR_MOD:
  case LOOM_EXPR_FLOORDIV:
  case LOOM_EXPR_FLOORMOD: {
    load_walk in = {w->a, w->buf, 0, false, NULL};
    loom_ir_rewrite_expr(w->a, e->u.bin.a, count_hook, &in);
    loom_ir_rewrite_expr(w->a, e->u.bin.b, count_hook, &in);
    if (in.n_loads)
      w->is_scaled = true;
    return NULL;
  }
  default:
    return NULL;
  }
}

static bool is_scaled(loom_arena *a, loom_expr *e, const loom_buffer *buf) {
  load_walk w = {a, buf, 0, false, NULL};
  loom_ir_rewrite_expr(a, e, scale_hook, &w);
  return w.is_scaled;
}

static bool is_zero(const loom_expr *e) {
  return (e->kind == LOOM_EXPR_INT && e->u.int_value == 0) ||
         (e->kind == LOOM_EXPR_FLOAT && e->u.float_value == 0.0);
}

/* Replaces each load of buf by `by` (zero for the init), or by a load of
 * `to` at the same indices (the update's running sum). */
typedef struct swap {
  const loom_buffer *buf;
  loom_expr *by;
  loom_buffer *to;
  loom_arena *a;
  bool is_oom;
} swap;

static loom_expr *swap_hook(void *ctx, loom_expr *e) {
  swap *w = ctx;
  if (e->kind != LOOM_EXPR_LOAD || e->u.load.buffer != w->buf)
    return NULL;
  if (w->by)
    return w->by;
  loom_expr *r = loom_ir_load(w->a, w->to, e->u.load.indices,
                              e->u.load.n_indices);
  if (!r) {
    w->is_oom = true;
    return e;
  }
  return r;
}

static loom_expr *swap_loads(loom_arena *a, loom_expr *e, const loom_buffer *buf,
                             loom_expr *by, loom_buffer *to) {
  swap w = {buf, by, to, a, false};
  loom_expr *r = loom_ir_rewrite_expr(a, e, swap_hook, &w);
  return w.is_oom ? NULL : r;
}

/* Constant folding of the init value (0 + C[i] is C[i], min(5, max(0, -5))
 * is 0), leaving every other node in the order the epilogue wrote it. */
static loom_expr *fold(loom_arena *a, loom_expr *e);

static loom_expr *fold_hook(void *ctx, loom_expr *e) {
  switch (e->kind) {
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB:
  case LOOM_EXPR_MUL:
  case LOOM_EXPR_MIN:
  case LOOM_EXPR_MAX: {
    loom_expr *r = fold(ctx, e);
    return r ? r : e; /* out of memory: leave the node, still correct */
  }
  default:
    return NULL;
  }
}

static double fold_float(loom_expr_kind k, double x, double y) {
  switch (k) {
  case LOOM_EXPR_ADD: return x + y;
  case LOOM_EXPR_SUB: return x - y;
  case LOOM_EXPR_MUL: return x * y;
  case LOOM_EXPR_MIN: return x < y ? x : y;
  default: return x > y ? x : y;
  }
}

static loom_expr *fold(loom_arena *a, loom_expr *e) {
  loom_expr *x = loom_ir_rewrite_expr(a, e->u.bin.a, fold_hook, a);
  loom_expr *y = loom_ir_rewrite_expr(a, e->u.bin.b, fold_hook, a);
  if (!x || !y)
    return NULL;
  loom_expr_kind k = e->kind;
  if (x->kind == LOOM_EXPR_FLOAT && y->kind == LOOM_EXPR_FLOAT)
    return loom_ir_float(a, e->dtype,
                         fold_float(k, x->u.float_value, y->u.float_value));
  if (x->kind == LOOM_EXPR_INT && y->kind == LOOM_EXPR_INT &&
      k != LOOM_EXPR_MUL)
    return loom_ir_int(a, e->dtype,
                       (int64_t)fold_float(k, (double)x->u.int_value,
                                           (double)y->u.int_value));
  if (k == LOOM_EXPR_ADD && is_zero(x))
    return y;
  if ((k == LOOM_EXPR_ADD || k == LOOM_EXPR_SUB) && is_zero(y))
    return x;
  if (x == e->u.bin.a && y == e->u.bin.b)
    return e;
  return loom_ir_binary(a, k, x, y);
}

/* The update value: the epilogue with its load of the reduction buffer
 * replaced by the running sum. Like TVM, an addition whose operand held that
 * load keeps only that operand (the bias is already in the init). The
 * `found` flag follows TVM's walk exactly: it survives a non-addition parent
 * and an addition that took the load from its right operand, but an
 * addition that took it from the left clears it. */
typedef struct apply {
  loom_arena *a;
  const loom_buffer *buf;
  loom_expr *update;
  bool found, is_oom;
} apply;

static loom_expr *apply_hook(void *ctx, loom_expr *e) {
  apply *w = ctx;
  if (e->kind == LOOM_EXPR_LOAD && e->u.load.buffer == w->buf) {
    w->found = true;
    return w->update;
  }
  if (e->kind != LOOM_EXPR_ADD)
    return NULL;
  bool before = w->found;
  w->found = false;
  loom_expr *x = loom_ir_rewrite_expr(w->a, e->u.bin.a, apply_hook, w);
  bool in_a = w->found;
  w->found = false;
  loom_expr *y = loom_ir_rewrite_expr(w->a, e->u.bin.b, apply_hook, w);
  bool in_b = w->found;
  if (!x || !y) {
    w->is_oom = true;
    return e;
  }
  if (in_a && !(y->kind == LOOM_EXPR_LOAD && y->u.load.buffer == w->buf))
    return x;
  if (!in_a && in_b &&
      !(x->kind == LOOM_EXPR_LOAD && x->u.load.buffer == w->buf))
    return y;
  if (!in_a && !in_b)
    w->found = before;
  if (x == e->u.bin.a && y == e->u.bin.b)
    return e;
  loom_expr *r = loom_ir_binary(w->a, LOOM_EXPR_ADD, x, y);
  if (!r) {
    w->is_oom = true;
    return e;
  }
  return r;
}

/* ---- checks ------------------------------------------------------------------- */

static bool same_indices(loom_expr *const *x, int nx, loom_expr *const *y,
                         int ny) {
  if (nx != ny)
    return false;
  for (int i = 0; i < nx; i++)
    if (!loom_ir_same_expr(x[i], y[i]))
      return false;
  return true;
}

/* The rewrite TVM makes keeps the values only for a sum from zero: the init
 * is replaced by the epilogue of zero, the update adds to the output. Why
 * the reduction block is not such a sum, or NULL. */
static const char *sum_problem(const loom_block *rb, const loom_buffer *buf) {
  const loom_stmt *in = rb->init, *up = rb->body;
  if (!in || in->kind != LOOM_STMT_STORE || in->u.store.buffer != buf ||
      !is_zero(in->u.store.value))
    return "its init is not a store of zero";
  if (up->kind != LOOM_STMT_STORE || up->u.store.buffer != buf ||
      !same_indices(in->u.store.indices, in->u.store.n_indices,
                    up->u.store.indices, up->u.store.n_indices))
    return "its body is not a single store to the buffer its init stores";
  const loom_expr *v = up->u.store.value;
  if (v->kind != LOOM_EXPR_ADD)
    return "its update is not a sum";
  const loom_expr *acc = v->u.bin.a;
  if (acc->kind != LOOM_EXPR_LOAD || acc->u.load.buffer != buf)
    acc = v->u.bin.b;
  if (acc->kind != LOOM_EXPR_LOAD || acc->u.load.buffer != buf ||
      !same_indices(acc->u.load.indices, acc->u.load.n_indices,
                    up->u.store.indices, up->u.store.n_indices))
    return "its update does not add to the value it stores";
  return NULL;
}

/* The blocks of the scope in program order, and where two of them are. */
static loom_status scope_blocks(sched_call *c, loom_stmt *scope_body,
                                sched_stmt_list *out) {
  if (!sched_collect_blocks(scope_body, out))
    return sched_nomem(c);
  return LOOM_OK;
}

static int index_of(const sched_stmt_list *l, const loom_stmt *s) {
  for (int i = 0; i < l->n; i++)
    if (l->items[i] == s)
      return i;
  return -1;
}

/* ---- the primitive ------------------------------------------------------------- */

typedef struct fusion {
  const loom_block *rb, *eb;
  loom_buffer *buf;        /* what the reduction writes, the epilogue reads */
  loom_buffer *out;        /* what the epilogue writes */
  const loom_expr *load;   /* the epilogue's one load of buf */
  const loom_var *evars[MAX_ITERS];
  loom_expr *rvals[MAX_ITERS];
  int n_vars;
} fusion;

/* Why the epilogue cannot be folded, written into why; NULL when it can. */
static const char *epilogue_problem(loom_arena *a, const loom_stmt *er,
                                    fusion *fu, char *why, size_t n_why) {
  const loom_block *eb = fu->eb, *rb = fu->rb;
  if (sched_has_predicate(er))
    return "it has a predicate";
  const loom_stmt *st = eb->body;
  if (st->kind != LOOM_STMT_STORE)
    return "its body is not a single store";
  if (st->u.store.buffer == fu->buf)
    return "it writes the reduction's buffer";
  int n = 0;
  for (int i = 0; i < st->u.store.n_indices; i++)
    n += count_loads(a, st->u.store.indices[i], fu->buf);
  if (n) {
    snprintf(why, n_why, "it loads '%s' in a store index", fu->buf->name);
    return why;
  }
  n = count_loads(a, st->u.store.value, fu->buf);
  if (n != 1) {
    snprintf(why, n_why,
             "it must load '%s' exactly once but loads it %d times",
             fu->buf->name, n);
    return why;
  }
  if (is_scaled(a, st->u.store.value, fu->buf)) {
    snprintf(why, n_why,
             "it multiplies, divides or takes a remainder of '%s'; only "
             "additions, min and max may combine the reduction's result",
             fu->buf->name);
    return why;
  }
  fu->out = st->u.store.buffer;
  /* Epilogue iter i stands for the reduction's i-th spatial iter. */
  fu->n_vars = 0;
  for (int i = 0; i < rb->n_iter_vars; i++) {
    if (rb->iter_vars[i].kind != LOOM_ITER_SPATIAL)
      continue;
    if (fu->n_vars == eb->n_iter_vars)
      return "it has fewer iters than the reduction has spatial iters";
    const loom_iter_var *ev = &eb->iter_vars[fu->n_vars];
    const loom_iter_var *rv = &rb->iter_vars[i];
    if (!loom_ir_same_expr(ev->dom.min, rv->dom.min) ||
        !loom_ir_same_expr(ev->dom.extent, rv->dom.extent)) {
      snprintf(why, n_why,
               "its iter '%s' does not have the domain of the reduction's "
               "spatial iter '%s'",
               ev->var->name, rv->var->name);
      return why;
    }
    fu->evars[fu->n_vars] = ev->var;
    fu->rvals[fu->n_vars] = loom_ir_ref(a, rv->var);
    if (!fu->rvals[fu->n_vars])
      return "out of memory";
    fu->n_vars++;
  }
  if (fu->n_vars != eb->n_iter_vars)
    return "its iters are not the reduction's spatial iters";
  /* The load of buf and the store must be at the point the reduction
   * stores: TVM maps them by position only, and anything else would read
   * or write the wrong element. */
  sched_map vm = {.vars = fu->evars, .values = fu->rvals, .n = fu->n_vars};
  const loom_stmt *rs = rb->body;
  load_walk lw = {a, fu->buf, 0, false, NULL};
  loom_ir_rewrite_expr(a, st->u.store.value, find_hook, &lw);
  fu->load = lw.hit;
  loom_expr *mapped[MAX_ITERS];
  int nl = fu->load->u.load.n_indices, ns = st->u.store.n_indices;
  if (nl > MAX_ITERS || ns > MAX_ITERS)
    return "it indexes buffers of too many dimensions";
  for (int i = 0; i < nl; i++)
    if (!(mapped[i] = sched_subst_expr(a, fu->load->u.load.indices[i], &vm)))
      return "out of memory";
  if (!same_indices(mapped, nl, rs->u.store.indices, rs->u.store.n_indices)) {
    snprintf(why, n_why,
             "it loads '%s' at another point than the reduction stores",
             fu->buf->name);
    return why;
  }
  for (int i = 0; i < ns; i++)
    if (!(mapped[i] = sched_subst_expr(a, st->u.store.indices[i], &vm)))
      return "out of memory";
  if (!same_indices(mapped, ns, rs->u.store.indices, rs->u.store.n_indices)) {
    snprintf(why, n_why,
             "it stores '%s' at another point than it loads '%s'",
             fu->out->name, fu->buf->name);
    return why;
  }
  return NULL;
}

/* The fused block: the reduction's block storing to the epilogue's output,
 * its init the epilogue of zero, its update the epilogue of the running
 * sum; reads are the epilogue's other reads, then the reduction's. */
static loom_block *fused_block(loom_arena *a, const fusion *fu) {
  const loom_block *rb = fu->rb, *eb = fu->eb;
  const loom_stmt *es = eb->body, *rs = rb->body;
  sched_map vm = {.vars = (const loom_var **)fu->evars,
                  .values = (loom_expr **)fu->rvals, .n = fu->n_vars};
  loom_expr *zero = fu->out->dtype.code == LOOM_DT_FLOAT ||
                        fu->out->dtype.code == LOOM_DT_BFLOAT
                        ? loom_ir_float(a, fu->out->dtype, 0.0)
                        : loom_ir_int(a, fu->out->dtype, 0);
  loom_expr *epi = sched_subst_expr(a, es->u.store.value, &vm);
  if (!zero || !epi)
    return NULL;
  loom_expr *init_v = swap_loads(a, epi, fu->buf, zero, NULL);
  init_v = init_v ? loom_ir_rewrite_expr(a, init_v, fold_hook, a) : NULL;
  loom_expr *sum = swap_loads(a, rs->u.store.value, fu->buf, NULL, fu->out);
  if (!init_v || !sum)
    return NULL;
  apply w = {a, fu->buf, sum, false, false};
  loom_expr *up_v = loom_ir_rewrite_expr(a, epi, apply_hook, &w);
  if (!up_v || w.is_oom)
    return NULL;

  loom_stmt *init = loom_arena_dup(a, rb->init, sizeof *init);
  loom_stmt *body = loom_arena_dup(a, rs, sizeof *body);
  loom_block *nb = loom_arena_dup(a, rb, sizeof *nb);
  if (!init || !body || !nb)
    return NULL;
  init->u.store.buffer = fu->out;
  init->u.store.value = init_v;
  init->u.store.indices = rs->u.store.indices;
  body->u.store.buffer = fu->out;
  body->u.store.value = up_v;
  nb->init = init;
  nb->body = body;

  loom_buffer_region *wr = loom_arena_dup(a, rb->writes,
                                          (size_t)rb->n_writes * sizeof *wr);
  int cap = eb->n_reads + rb->n_reads;
  loom_buffer_region *rd = loom_arena_alloc(a, (size_t)(cap ? cap : 1) *
                                                   sizeof *rd);
  if (!wr || !rd)
    return NULL;
  wr[0].buffer = fu->out;
  int n = 0;
  for (int i = 0; i < eb->n_reads; i++) {
    const loom_buffer_region *r = &eb->reads[i];
    if (r->buffer == fu->buf)
      continue;
    loom_range *rg = loom_arena_alloc(a, (size_t)(r->n_ranges ? r->n_ranges : 1) *
                                             sizeof *rg);
    if (!rg)
      return NULL;
    for (int k = 0; k < r->n_ranges; k++) {
      rg[k].min = sched_subst_expr(a, r->ranges[k].min, &vm);
      rg[k].extent = sched_subst_expr(a, r->ranges[k].extent, &vm);
      if (!rg[k].min || !rg[k].extent)
        return NULL;
    }
    rd[n] = *r;
    rd[n++].ranges = rg;
  }
  int n_epi = n;
  for (int i = 0; i < rb->n_reads; i++) {
    const loom_buffer_region *r = &rb->reads[i];
    bool seen = r->buffer == fu->buf;
    for (int k = 0; k < n_epi && !seen; k++)
      seen = rd[k].buffer == r->buffer;
    if (!seen)
      rd[n++] = *r;
  }
  nb->writes = wr;
  nb->reads = rd;
  nb->n_reads = n;
  return nb;
}

/* Drops the leaf at p's end and the loops that held only it. */
static const loom_module *remove_leaf(loom_arena *a, const loom_module *m,
                                      const sched_path *p, int sc) {
  int h = p->n - 1;
  while (h - 1 > sc && p->stmts[h - 1]->kind == LOOM_STMT_FOR)
    h--;
  if (h - 1 <= sc || p->stmts[h - 1]->kind != LOOM_STMT_SEQ)
    return NULL;
  loom_stmt *cur = sched_with_child(a, p->stmts[h - 1], p->stmts[h], NULL);
  return cur ? sched_replace(a, m, p, h - 1, cur) : NULL;
}

loom_status sched_apply_fuse_reduction_epilogue(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path rp = {0}, ep = {0}, q = {0};
  sched_stmt_list sib = {0};
  char why[256];
  const char *problem;
  TRY(sched_input_block(c, 0, &rp));
  loom_status st = sched_input_block(c, 1, &ep);
  if (st != LOOM_OK)
    goto out;
  int ri = rp.n - 1, ei = ep.n - 1;
  loom_stmt *rr = rp.stmts[ri], *er = ep.stmts[ei];
  fusion fu = {.rb = rr->u.realize.block, .eb = er->u.realize.block};
  const loom_func *func = c->mod->funcs[ep.func];
  int sc = sched_scope_index(&ep, ei), rsc = sched_scope_index(&rp, ri);
  if (rp.func != ep.func || sc < 0 || rsc < 0 ||
      rp.stmts[rsc] != ep.stmts[sc] || rr == er) {
    st = sched_fail(c, "blocks '%s' and '%s' are not two blocks of one scope",
                    fu.rb->name, fu.eb->name);
    goto out;
  }
  if ((problem = sched_stage_pipeline_problem(&ep, sc, why, sizeof why))) {
    st = sched_fail(c, "the scope of block '%s' is not a stage pipeline: %s",
                    fu.eb->name, problem);
    goto out;
  }
  if (fu.rb->n_writes != 1) {
    st = sched_fail(c, "block '%s' writes %d buffers; a reduction block to "
                       "fuse into must write exactly one",
                    fu.rb->name, fu.rb->n_writes);
    goto out;
  }
  fu.buf = fu.rb->writes[0].buffer;
  if (!sched_is_reduction(&rp, ri)) {
    st = sched_fail(c, "block '%s' is not a reduction block (an init, "
                       "spatial and reduction iters with affine bindings)",
                    fu.rb->name);
    goto out;
  }
  if ((problem = sum_problem(fu.rb, fu.buf))) {
    st = sched_fail(c, "block '%s' is not a sum from zero: %s", fu.rb->name,
                    problem);
    goto out;
  }
  if (fu.rb->n_iter_vars > MAX_ITERS) {
    st = sched_fail(c, "block '%s' has too many iters (limit is %d)",
                    fu.rb->name, MAX_ITERS);
    goto out;
  }
  if (!sched_is_complete(fu.eb)) {
    st = sched_fail(c, "block '%s' is not a complete block (every iter "
                       "spatial, no init, writing what it does not read)",
                    fu.eb->name);
    goto out;
  }
  if (sched_is_param_buffer(func, fu.buf)) {
    st = sched_fail(c, "block '%s' is an output block: '%s' is a parameter "
                       "of the function",
                    fu.rb->name, fu.buf->name);
    goto out;
  }
  if ((problem = epilogue_problem(a, er, &fu, why, sizeof why))) {
    st = sched_fail(c, "block '%s' cannot be fused into '%s': %s",
                    fu.eb->name, fu.rb->name, problem);
    goto out;
  }
  /* The fused block writes the output and reads the epilogue's other
   * inputs where the reduction stood: no block in between may touch them. */
  st = scope_blocks(c, ep.stmts[sc]->u.realize.block->body, &sib);
  if (st != LOOM_OK)
    goto out;
  int at_r = index_of(&sib, rr), at_e = index_of(&sib, er);
  if (at_r < 0 || at_e < 0 || at_r > at_e) {
    st = sched_fail(c, "block '%s' does not come after block '%s'",
                    fu.eb->name, fu.rb->name);
    goto out;
  }
  if (sched_block_reads(fu.rb, fu.out)) {
    st = sched_fail(c, "block '%s' reads '%s', which block '%s' writes",
                    fu.rb->name, fu.out->name, fu.eb->name);
    goto out;
  }
  for (int i = at_r + 1; i < at_e; i++) {
    const loom_block *o = sib.items[i]->u.realize.block;
    bool clash = sched_block_reads(o, fu.out) || sched_block_writes(o, fu.out);
    for (int k = 0; k < fu.eb->n_reads && !clash; k++)
      clash = fu.eb->reads[k].buffer != fu.buf &&
              sched_block_writes(o, fu.eb->reads[k].buffer);
    if (clash) {
      st = sched_fail(c, "block '%s', between '%s' and '%s', accesses what "
                         "the fused block would read or write",
                      o->name, fu.rb->name, fu.eb->name);
      goto out;
    }
  }

  loom_block *nb = fused_block(a, &fu);
  loom_stmt *nr = nb ? loom_arena_dup(a, rr, sizeof *nr) : NULL;
  if (!nr) {
    st = sched_nomem(c);
    goto out;
  }
  nr->u.realize.block = nb;
  const loom_module *m1 = sched_replace(a, c->mod, &rp, ri, nr);
  q.func = ep.func;
  if (!m1 || !sched_find_block(m1->funcs[ep.func], fu.eb->name, &q)) {
    st = sched_nomem(c);
    goto out;
  }
  const loom_module *m2 = remove_leaf(a, m1, &q, sc);
  if (!m2) {
    st = sched_fail(c, "block '%s' is the only statement of its scope",
                    fu.eb->name);
    goto out;
  }
  c->mod = m2;
out:
  free(sib.items);
  sched_path_free(&rp);
  sched_path_free(&ep);
  sched_path_free(&q);
  return st;
}
