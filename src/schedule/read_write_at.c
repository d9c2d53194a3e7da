/* read_at and write_at: a copy of one buffer of a block in another storage
 * scope, filled (read_at) or written back (write_at) once per iteration of
 * a loop, by an `auto_copy` block placed in the loop's body, as TVM's
 * ReadAt / WriteAt do. The copy covers the part of the buffer the loop's
 * body touches in one iteration; the statements of the body after (before)
 * the copy block use the copy instead. */
#include "schedule/sched_impl.h"

#include <stdio.h>
#include <string.h>

#define MAX_DIMS 16

/* ---- replacing the buffer ------------------------------------------------------- */

typedef struct swap {
  const loom_buffer *old;
  loom_buffer *nb;
} swap;

static loom_expr *swap_load(const sched_map *m, loom_arena *a,
                            loom_expr *load) {
  const swap *w = m->ctx;
  if (load->u.load.buffer != w->old)
    return load;
  loom_expr *c = loom_arena_alloc(a, sizeof *c);
  if (c) {
    *c = *load;
    c->u.load.buffer = w->nb;
  }
  return c;
}

static loom_stmt *swap_store(const sched_map *m, loom_arena *a, loom_stmt *s) {
  const swap *w = m->ctx;
  if (s->kind != LOOM_STMT_STORE || s->u.store.buffer != w->old)
    return s;
  loom_stmt *c = loom_arena_alloc(a, sizeof *c);
  if (c) {
    *c = *s;
    c->u.store.buffer = w->nb;
  }
  return c;
}

static loom_buffer_region *swap_regions(loom_arena *a,
                                        const loom_buffer_region *r, int n,
                                        const swap *w) {
  loom_buffer_region *out =
      loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  for (int i = 0; out && i < n; i++) {
    out[i] = r[i];
    if (r[i].buffer == w->old)
      out[i].buffer = w->nb;
  }
  return out;
}

static loom_block *swap_block(const sched_map *m, loom_arena *a,
                              const loom_block *old, loom_block *b) {
  (void)old;
  const swap *w = m->ctx;
  loom_block *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *b;
  c->reads = swap_regions(a, b->reads, b->n_reads, w);
  c->writes = swap_regions(a, b->writes, b->n_writes, w);
  return c->reads && c->writes ? c : NULL;
}

/* ---- the part of the buffer one iteration touches ---------------------------- */

static bool declares(const loom_buffer_region *r, int n, const loom_buffer *b) {
  for (int i = 0; i < n; i++)
    if (r[i].buffer == b)
      return true;
  return false;
}

static loom_visit stop_at_load_of(void *ctx, loom_expr *e) {
  return e->kind == LOOM_EXPR_LOAD && e->u.load.buffer == ctx
             ? LOOM_VISIT_STOP
             : LOOM_VISIT_GO;
}

/* Whether anything in s loads b. */
static bool loads_buffer(const loom_stmt *s, const loom_buffer *b) {
  loom_ir_visitor v = {.expr_pre = stop_at_load_of, .ctx = (void *)b};
  return !loom_ir_visit_stmt(&v, s);
}

typedef struct at_state {
  sched_call *c;
  bool is_read;
  const loom_buffer *src;
  const char *scope;
  const sched_path *p; /* to the loop */
  loom_arith_ctx *ctx; /* the loops above the loop, bound */
  loom_buffer_region dom;
  bool has_dom;
  const char *bad; /* a block the copy cannot serve, and why */
  const char *bad_block;
  const char *uncovered; /* a writer that leaves part of the hull unwritten */
  char why[300];
} at_state;

/* Whether the block realize at the end of q runs once per iteration of the
 * loop q->stmts[li] (only unit loops between) and then writes one point of
 * buf: the hull of its writes is that point, written whole. */
static bool writes_its_point(const sched_path *q, int li,
                             const loom_buffer *buf) {
  const loom_stmt *r = q->stmts[q->n - 1];
  const loom_block *b = r->u.realize.block;
  int64_t v;
  if (sched_has_predicate(r))
    return false;
  for (int i = li + 1; i < q->n - 1; i++) {
    const loom_stmt *s = q->stmts[i];
    if (s->kind == LOOM_STMT_SEQ)
      continue;
    if (s->kind != LOOM_STMT_FOR ||
        !loom_ir_is_const_int(s->u.loop.extent, &v) || v != 1)
      return false;
  }
  for (int i = 0; i < b->n_writes; i++)
    for (int d = 0; b->writes[i].buffer == buf && d < b->writes[i].n_ranges;
         d++)
      if (!loom_ir_is_const_int(b->writes[i].ranges[d].extent, &v) || v != 1)
        return false;
  return true;
}

/* The write-back copies the whole hull of the writes in one iteration of
 * the loop: what a writer leaves unwritten there would be copied from a
 * copy nobody filled. Sets st->uncovered unless block realize r writes all
 * of its part: it runs once per iteration and writes a point (not when
 * the hull spans threads, is_shared), or its loops run over its iters one
 * to one. */
static void check_cover(at_state *st, const loom_stmt *r, bool is_shared) {
  const loom_block *b = r->u.realize.block;
  sched_path q = {0};
  char reason[200];
  const char *why = NULL;
  if (!sched_find_block(st->c->mod->funcs[st->p->func], b->name, &q) ||
      q.stmts[q.n - 1] != r) {
    snprintf(st->why, sizeof st->why,
             "is not the first block of its name, so whether it writes all "
             "of the part the write-back copies cannot be checked");
    st->uncovered = b->name;
  } else if (is_shared || !writes_its_point(&q, st->p->n - 1, st->src)) {
    why = sched_cover_problem(&q, q.n - 1, reason, sizeof reason);
  }
  sched_path_free(&q);
  if (!why)
    return;
  snprintf(st->why, sizeof st->why,
           "does not write every point of the part the write-back copies "
           "(%s); the copy would write back elements nobody wrote",
           why);
  st->uncovered = b->name;
}

/* Joins into st->dom the region of the buffer that the outermost blocks in
 * s declare (reads for read_at, writes for write_at), relaxed over the
 * loops between the loop and each block and over the thread loops above
 * the loop whose threads share the copy. Sets *reads / *writes when a
 * block there declares the buffer. */
static loom_status visit(at_state *st, loom_stmt *subtree, loom_stmt *s,
                         bool *reads, bool *writes) {
  if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
    const loom_block *b = s->u.realize.block;
    bool r = declares(b->reads, b->n_reads, st->src);
    bool w = declares(b->writes, b->n_writes, st->src);
    *reads |= r;
    *writes |= w;
    if (!st->is_read && !st->bad && !r && !b->init &&
        loads_buffer(s, st->src))
      r = true; /* an update whose init another block holds */
    if (!st->is_read && r && !st->bad) {
      st->bad = "reads the buffer, and would read the copy before it holds "
                "the buffer's values";
      st->bad_block = b->name;
    }
    if (!(st->is_read ? r : w))
      return LOOM_OK;
    loom_stmt *loops[SCHED_MAX_DEPTH];
    int n = 0;
    sched_find_under(subtree, s, loops, &n);
    loom_arith_relax rx[SCHED_MAX_DEPTH];
    int k = 0;
    for (int i = 0; i < n; i++)
      rx[k++] = (loom_arith_relax){loops[i]->u.loop.var,
                                   {loops[i]->u.loop.min,
                                    loops[i]->u.loop.extent}};
    for (int i = 0; i < st->p->n - 1 && k < SCHED_MAX_DEPTH; i++) {
      const loom_stmt *l = st->p->stmts[i];
      if (strcmp(st->scope, "global") && l->kind == LOOM_STMT_FOR &&
          l->u.loop.kind == LOOM_FOR_THREAD_BINDING &&
          loom_ir_scope_is_shared_by(st->scope, l->u.loop.thread))
        rx[k++] = (loom_arith_relax){l->u.loop.var,
                                     {l->u.loop.min, l->u.loop.extent}};
    }
    loom_arena *a = sched_arena(st->c->s);
    loom_buffer_region reg;
    bool found = false;
    loom_diag d;
    loom_diag_init(&d);
    loom_status rs = loom_arith_block_region(a, st->ctx, s, st->src,
                                             !st->is_read, rx, k, &reg, NULL,
                                             &found, &d);
    if (rs == LOOM_OK && found && st->has_dom)
      rs = loom_arith_region_union(a, st->ctx, &st->dom, &reg, &st->dom, &d);
    else if (rs == LOOM_OK && found) {
      st->dom = reg;
      st->has_dom = true;
    }
    loom_diag_free(&d);
    if (rs == LOOM_OK && !st->is_read && !st->uncovered)
      check_cover(st, s, k > n);
    return rs == LOOM_NOMEM ? LOOM_NOMEM : LOOM_OK;
  }
  loom_stmt *buf[4], **kids;
  int n = sched_kids_of(s, &kids, buf);
  for (int i = 0; i < n; i++)
    TRY(visit(st, subtree, kids[i], reads, writes));
  return LOOM_OK;
}

/* ---- the copy block --------------------------------------------------------------- */

/* The loop variables (of the loop and the loops above it up to the scope)
 * in e, in order of first appearance, appended to vars. */
static void collect_loop_vars(const loom_expr *e, const sched_path *p, int lo,
                              const loom_var **vars, int *n, int max) {
  if (!e)
    return;
  if (e->kind == LOOM_EXPR_VAR) {
    for (int i = 0; i < *n; i++)
      if (vars[i] == e->u.var)
        return;
    for (int i = lo; i < p->n; i++)
      if (p->stmts[i]->kind == LOOM_STMT_FOR &&
          p->stmts[i]->u.loop.var == e->u.var && *n < max)
        vars[(*n)++] = e->u.var;
    return;
  }
  switch (e->kind) {
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    collect_loop_vars(e->u.unary.a, p, lo, vars, n, max);
    return;
  case LOOM_EXPR_SELECT:
    collect_loop_vars(e->u.select.cond, p, lo, vars, n, max);
    collect_loop_vars(e->u.select.t, p, lo, vars, n, max);
    collect_loop_vars(e->u.select.f, p, lo, vars, n, max);
    return;
  case LOOM_EXPR_LOAD:
    for (int i = 0; i < e->u.load.n_indices; i++)
      collect_loop_vars(e->u.load.indices[i], p, lo, vars, n, max);
    return;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      collect_loop_vars(e->u.call.args[i], p, lo, vars, n, max);
    return;
  default:
    if (e->kind >= LOOM_EXPR_ADD && e->kind <= LOOM_EXPR_OR) {
      collect_loop_vars(e->u.bin.a, p, lo, vars, n, max);
      collect_loop_vars(e->u.bin.b, p, lo, vars, n, max);
    }
    return;
  }
}

static const loom_stmt *loop_of(const sched_path *p, const loom_var *v) {
  for (int i = 0; i < p->n; i++)
    if (p->stmts[i]->kind == LOOM_STMT_FOR && p->stmts[i]->u.loop.var == v)
      return p->stmts[i];
  return NULL;
}

/* The copy's loops run over int32 variables, as TVM's do. A constant
 * extent takes the loop's dtype; one that is not constant must already be
 * 32-bit (read_write_at checks). */
static loom_expr *copy_extent(loom_arena *a, loom_expr *extent) {
  int64_t v;
  if (extent->dtype.bits != 32 && loom_ir_is_const_int(extent, &v))
    return loom_ir_int(a, LOOM_INT32, v);
  return extent;
}

/* min + ax, the int32 loop variable cast up to a wider min's dtype the way
 * TVM's arithmetic promotes the narrower operand; a zero min folds away. */
static loom_expr *copy_index(loom_arena *a, loom_expr *min, loom_var *ax) {
  loom_expr *r = loom_ir_ref(a, ax);
  if (r && min->dtype.bits > r->dtype.bits)
    r = loom_ir_cast(a, min->dtype, r);
  int64_t z;
  if (loom_ir_is_const_int(min, &z) && z == 0)
    return r;
  return loom_ir_binary(a, LOOM_EXPR_ADD, min, r);
}

/* The block `name` copying from[dom] into to[dom] under loops ax<k>, with
 * one spatial iter v<k> per loop variable dom uses, bound to that loop. */
static loom_stmt *copy_block(loom_arena *a, const sched_path *p, int lo,
                             const char *name, const loom_buffer_region *dom,
                             loom_buffer *from, loom_buffer *to,
                             loom_loc loc) {
  int nd = dom->n_ranges;
  const loom_var *lv[2 * MAX_DIMS];
  int nv = 0;
  for (int i = 0; i < nd; i++) {
    collect_loop_vars(dom->ranges[i].min, p, lo, lv, &nv, 2 * MAX_DIMS);
    collect_loop_vars(dom->ranges[i].extent, p, lo, lv, &nv, 2 * MAX_DIMS);
  }
  loom_iter_var *iv = loom_arena_alloc(a, (size_t)(nv ? nv : 1) * sizeof *iv);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(nv ? nv : 1) * sizeof *vals);
  loom_expr **refs = loom_arena_alloc(a, (size_t)(nv ? nv : 1) * sizeof *refs);
  if (!iv || !vals || !refs)
    return NULL;
  for (int i = 0; i < nv; i++) {
    const loom_stmt *l = loop_of(p, lv[i]);
    char vname[16];
    snprintf(vname, sizeof vname, "v%d", i);
    loom_var *v = loom_ir_var(a, vname, lv[i]->dtype);
    vals[i] = loom_ir_ref(a, (loom_var *)lv[i]);
    refs[i] = v ? loom_ir_ref(a, v) : NULL;
    if (!v || !vals[i] || !refs[i])
      return NULL;
    iv[i] = (loom_iter_var){v, {l->u.loop.min, l->u.loop.extent},
                            LOOM_ITER_SPATIAL};
  }
  sched_map m = {.vars = lv, .values = refs, .n = nv};
  loom_range *rg = loom_arena_alloc(a, (size_t)nd * sizeof *rg);
  loom_expr **idx = loom_arena_alloc(a, (size_t)nd * sizeof *idx);
  loom_var *ax[MAX_DIMS];
  if (!rg || !idx)
    return NULL;
  for (int i = 0; i < nd; i++) {
    rg[i].min = sched_subst_expr(a, dom->ranges[i].min, &m);
    rg[i].extent = sched_subst_expr(a, dom->ranges[i].extent, &m);
    char axn[16];
    snprintf(axn, sizeof axn, "ax%d", i);
    ax[i] = loom_ir_var(a, axn, LOOM_INT32);
    if (!rg[i].min || !rg[i].extent || !ax[i])
      return NULL;
    idx[i] = copy_index(a, rg[i].min, ax[i]);
    if (!idx[i])
      return NULL;
  }
  loom_stmt *body = loom_ir_stmt(a, LOOM_STMT_STORE, loc);
  if (!body)
    return NULL;
  body->u.store.buffer = to;
  body->u.store.indices = idx;
  body->u.store.n_indices = nd;
  body->u.store.value = loom_ir_load(a, from, idx, nd);
  if (!body->u.store.value)
    return NULL;
  for (int i = nd - 1; i >= 0; i--) {
    loom_stmt *f = loom_ir_stmt(a, LOOM_STMT_FOR, loc);
    if (!f)
      return NULL;
    f->u.loop.var = ax[i];
    f->u.loop.min = loom_ir_int(a, LOOM_INT32, 0);
    f->u.loop.extent = copy_extent(a, rg[i].extent);
    f->u.loop.kind = LOOM_FOR_SERIAL;
    f->u.loop.body = body;
    if (!f->u.loop.min || !f->u.loop.extent)
      return NULL;
    body = f;
  }
  loom_block *b = loom_ir_block(a, name);
  loom_buffer_region *rd = loom_arena_alloc(a, sizeof *rd);
  loom_buffer_region *wr = loom_arena_alloc(a, sizeof *wr);
  loom_attr *ann = loom_arena_alloc(a, sizeof *ann);
  loom_expr *yes = loom_ir_int(a, LOOM_BOOL, 1);
  loom_stmt *r = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, loc);
  if (!b || !rd || !wr || !ann || !yes || !r)
    return NULL;
  *rd = (loom_buffer_region){from, rg, nd};
  *wr = (loom_buffer_region){to, rg, nd};
  *ann = (loom_attr){"auto_copy", loom_ir_value_expr(a, yes)};
  if (!ann->value)
    return NULL;
  b->iter_vars = nv ? iv : NULL;
  b->n_iter_vars = nv;
  b->reads = rd;
  b->n_reads = 1;
  b->writes = wr;
  b->n_writes = 1;
  b->body = body;
  b->annotations = ann;
  b->n_annotations = 1;
  b->loc = loc;
  r->u.realize.iter_values = nv ? vals : NULL;
  r->u.realize.n_iter_values = nv;
  r->u.realize.block = b;
  return r;
}

/* ---- the primitives ---------------------------------------------------------------- */

static loom_status read_write_at(sched_call *c, bool is_read) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0}, bp = {0};
  loom_arith_ctx *ctx = NULL;
  loom_status st;
  if ((st = sched_input_loop(c, 0, &p)) != LOOM_OK ||
      (st = sched_input_block(c, 1, &bp)) != LOOM_OK)
    goto out;
  loom_stmt *loop = p.stmts[p.n - 1];
  const char *lname = sched_stmt_name(loop);
  const loom_block *blk = bp.stmts[bp.n - 1]->u.realize.block;
  int64_t index = sched_attr_int(c, 0, -1);
  const char *scope = sched_attr_str(c, 1, NULL);
  int nbuf = is_read ? blk->n_reads : blk->n_writes;
  if (index < 0 || index >= nbuf) {
    st = sched_fail(c, "block '%s' %s %d buffer%s, so the index must be in "
                       "[0, %d), not %lld",
                    blk->name, is_read ? "reads" : "writes", nbuf,
                    nbuf == 1 ? "" : "s", nbuf, (long long)index);
    goto out;
  }
  if (!scope || !sched_is_storage_scope(scope)) {
    st = sched_fail(c, "'%s' is not a storage scope", scope ? scope : "");
    goto out;
  }
  loom_buffer *src = is_read ? blk->reads[index].buffer
                             : blk->writes[index].buffer;
  bool is_under = bp.n > p.n && bp.func == p.func;
  for (int i = 0; is_under && i < p.n; i++)
    is_under = bp.stmts[i] == p.stmts[i];
  if (!is_under) {
    st = sched_fail(c, "block '%s' is not under loop '%s'", blk->name, lname);
    goto out;
  }
  int si = sched_scope_index(&p, p.n - 1);
  if (si < 0) {
    st = sched_fail(c, "loop '%s' is not under a block that could allocate "
                       "the copy",
                    lname);
    goto out;
  }
  char why[256];
  const char *problem = sched_stage_pipeline_problem(&p, si, why, sizeof why);
  if (problem) {
    st = sched_fail(c, "the scope of loop '%s' is not a stage pipeline: %s",
                    lname, problem);
    goto out;
  }
  ctx = sched_arith_for_path(&p, p.n);
  if (!ctx) {
    st = sched_nomem(c);
    goto out;
  }
  loom_stmt *body = loop->u.loop.body;
  loom_stmt **items = body->kind == LOOM_STMT_SEQ ? body->u.seq.stmts : &body;
  int n_items = body->kind == LOOM_STMT_SEQ ? body->u.seq.n_stmts : 1;
  at_state as = {.c = c, .is_read = is_read, .src = src, .scope = scope,
                 .p = &p, .ctx = ctx};
  int first_r = -1, last_r = -1, last_w = -1;
  for (int i = 0; i < n_items; i++) {
    bool r = false, w = false;
    if ((st = visit(&as, items[i], items[i], &r, &w)) != LOOM_OK) {
      st = sched_nomem(c);
      goto out;
    }
    if (r && first_r < 0)
      first_r = i;
    if (r)
      last_r = i;
    if (w)
      last_w = i;
  }
  int used = is_read ? first_r : last_w;
  if (used < 0 || !as.has_dom) {
    st = sched_fail(c, "no block under loop '%s' %s buffer '%s'", lname,
                    is_read ? "reads" : "writes", src->name);
    goto out;
  }
  if (is_read && last_w >= first_r) {
    st = sched_fail(c, "buffer '%s' is written under loop '%s' after it is "
                       "first read there; the copy would miss what is written",
                    src->name, lname);
    goto out;
  }
  if (!is_read && last_r > last_w) {
    st = sched_fail(c, "buffer '%s' is read under loop '%s' after it is last "
                       "written there; the write-back would come too late",
                    src->name, lname);
    goto out;
  }
  if (as.bad) {
    st = sched_fail(c, "block '%s' under loop '%s' %s", as.bad_block, lname,
                    as.bad);
    goto out;
  }
  /* The copy block accesses the buffer over the whole hull: it must stay
   * inside the buffer (a guarded, non-divisible split would leave it). */
  loom_buffer_region *dom = &as.dom;
  if (dom->n_ranges > MAX_DIMS) {
    st = sched_fail(c, "buffer '%s' has %d dimensions (limit is %d)",
                    src->name, dom->n_ranges, MAX_DIMS);
    goto out;
  }
  for (int i = 0; i < dom->n_ranges; i++) {
    dom->ranges[i].min = sched_normalize(a, ctx, dom->ranges[i].min);
    dom->ranges[i].extent = sched_normalize(a, ctx, dom->ranges[i].extent);
    if (!dom->ranges[i].min || !dom->ranges[i].extent) {
      st = sched_nomem(c);
      goto out;
    }
    loom_arith_interval lo = loom_arith_bound(ctx, dom->ranges[i].min);
    loom_expr *end = loom_ir_binary(a, LOOM_EXPR_ADD, dom->ranges[i].min,
                                    dom->ranges[i].extent);
    loom_arith_interval hi = end ? loom_arith_bound(ctx, end)
                                 : (loom_arith_interval){0};
    int64_t shape;
    if (!lo.is_bounded || !hi.is_bounded || lo.min < 0 ||
        !loom_ir_is_const_int(src->shape[i], &shape) || hi.max > shape) {
      st = sched_fail(c, "the part of buffer '%s' that loop '%s' touches may "
                         "leave the buffer in dimension %d; the copy would "
                         "access it out of bounds",
                      src->name, lname, i);
      goto out;
    }
    int64_t ext;
    if (dom->ranges[i].extent->dtype.bits > 32 &&
        !loom_ir_is_const_int(dom->ranges[i].extent, &ext)) {
      st = sched_fail(c, "the part of buffer '%s' that loop '%s' touches has "
                         "a %d-bit extent in dimension %d that is not "
                         "constant; the copy's int32 loops cannot run over it",
                      src->name, lname, dom->ranges[i].extent->dtype.bits, i);
      goto out;
    }
  }
  if (as.uncovered) {
    st = sched_fail(c, "block '%s' under loop '%s' %s", as.uncovered, lname,
                    as.why);
    goto out;
  }
  char name[256];
  snprintf(name, sizeof name, "%s_%s", src->name, scope);
  loom_buffer *dst = loom_arena_alloc(a, sizeof *dst);
  loom_var *data = loom_arena_alloc(a, sizeof *data);
  if (!dst || !data) {
    st = sched_nomem(c);
    goto out;
  }
  *dst = *src;
  *data = *src->data;
  dst->name = loom_arena_strdup(a, name);
  dst->scope = loom_arena_strdup(a, scope);
  data->name = dst->name;
  data->scope = dst->scope;
  dst->data = data;
  int lo = si + 1;
  loom_stmt *copy = dst->name && dst->scope
                        ? copy_block(a, &p, lo, name, dom, is_read ? src : dst,
                                     is_read ? dst : src, loop->loc)
                        : NULL;
  /* The statements of the body after the copy (read) or before it (write)
   * use the copy. */
  int at = is_read ? first_r : last_w + 1;
  loom_stmt **nitems = loom_arena_alloc(a, (size_t)(n_items + 1) * sizeof *nitems);
  if (!copy || !nitems) {
    st = sched_nomem(c);
    goto out;
  }
  swap w = {src, dst};
  sched_map m = {.on_load = swap_load, .on_stmt = swap_store,
                 .on_block = swap_block, .ctx = &w};
  int k = 0;
  for (int i = 0; i <= n_items; i++) {
    if (i == at)
      nitems[k++] = copy;
    if (i == n_items)
      break;
    bool swaps = is_read ? i >= at : i < at;
    nitems[k] = swaps ? sched_subst_stmt(a, items[i], &m) : items[i];
    if (!nitems[k++]) {
      st = sched_nomem(c);
      goto out;
    }
  }
  loom_stmt *seq = loom_ir_stmt(a, LOOM_STMT_SEQ, body->loc);
  loom_stmt *nl = loom_arena_alloc(a, sizeof *nl);
  if (!seq || !nl) {
    st = sched_nomem(c);
    goto out;
  }
  seq->u.seq.stmts = nitems;
  seq->u.seq.n_stmts = k;
  *nl = *loop;
  nl->u.loop.body = seq;
  /* Rebuild up to the scope block, which allocates the copy. */
  loom_stmt *cur = nl;
  for (int i = p.n - 2; i > si && cur; i--)
    cur = sched_with_child(a, p.stmts[i], p.stmts[i + 1], cur);
  loom_stmt *sr = cur ? sched_with_child(a, p.stmts[si], p.stmts[si + 1], cur)
                      : NULL;
  loom_block *sb = sr ? sr->u.realize.block : NULL;
  loom_buffer **allocs =
      sb ? loom_arena_alloc(a, (size_t)(sb->n_alloc_buffers + 1) *
                                   sizeof *allocs)
         : NULL;
  if (!allocs) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < sb->n_alloc_buffers; i++)
    allocs[i] = sb->alloc_buffers[i];
  allocs[sb->n_alloc_buffers] = dst;
  sb->alloc_buffers = allocs;
  sb->n_alloc_buffers++;
  c->mod = sched_replace(a, c->mod, &p, si, sr);
  if (!c->mod) {
    st = sched_nomem(c);
    goto out;
  }
  st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = p.func,
                                    .block = copy->u.realize.block->name});
out:
  loom_arith_ctx_free(ctx);
  sched_path_free(&p);
  sched_path_free(&bp);
  return st;
}

loom_status sched_apply_read_at(sched_call *c) { return read_write_at(c, true); }

loom_status sched_apply_write_at(sched_call *c) {
  return read_write_at(c, false);
}
