/* loop_partition: cuts a loop's range into consecutive pieces, each a copy
 * of the loop body under its own loop, as TVM's LoopPartition does. The
 * copies sit in opaque blocks `<B>_<i><k>_partition` inside one block
 * `<B>_<i>_common` (B the first block under the loop, i the loop); every
 * block of copy k is renamed `<name>_<i><k>`; a block with an iter bound to
 * the loop itself has its iter domains narrowed to the piece and its
 * regions indexed by iters alone widened to those domains. */
#include "schedule/rewrite.h"

#include <stdio.h>
#include <string.h>

#define MAX_PIECES 64

/* The variables a loop body defines (loops, block iters, lets), each with
 * the fresh variable that replaces it in one copy. */
typedef struct var_list {
  const loom_var **old;
  loom_expr **fresh; /* references to the new variables */
  int n, cap;
} var_list;

static bool vars_push(var_list *l, const loom_var *v, loom_expr *e) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    const loom_var **o = realloc(l->old, (size_t)cap * sizeof *o);
    if (!o)
      return false;
    l->old = o;
    loom_expr **f = realloc(l->fresh, (size_t)cap * sizeof *f);
    if (!f)
      return false;
    l->fresh = f;
    l->cap = cap;
  }
  l->old[l->n] = v;
  l->fresh[l->n++] = e;
  return true;
}

static void vars_free(var_list *l) {
  free(l->old);
  free(l->fresh);
}

typedef struct copy_check {
  const char *why;
  const char *who;
} copy_check;

/* The statements that define buffers; the switch names every kind, so
 * that a new kind is asked whether it defines one. */
static loom_visit check_copy(void *ctx, loom_stmt *s) {
  copy_check *k = ctx;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE: {
    const loom_block *b = s->u.realize.block;
    k->who = b->name;
    if (b->n_alloc_buffers)
      k->why = "allocates a buffer";
    else if (b->n_match_buffers)
      k->why = "declares a match_buffer";
    break;
  }
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    k->who = NULL;
    k->why = "allocates a buffer";
    break;
  case LOOM_STMT_FOR:
  case LOOM_STMT_STORE:
  case LOOM_STMT_IF:
  case LOOM_STMT_SEQ:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_LET:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_COUNT_: break;
  }
  return k->why ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

/* Why the body under a loop cannot be copied (a block that allocates or
 * views a buffer would define it twice); NULL when it can. Writes the
 * offending block's name to *who (NULL for a statement outside blocks). */
static const char *copy_problem(const loom_stmt *s, const char **who) {
  copy_check k = {NULL, *who};
  loom_ir_visitor v = {.stmt_pre = check_copy, .ctx = &k};
  loom_ir_visit_stmt(&v, s);
  *who = k.who;
  return k.why;
}

typedef struct def_list {
  loom_arena *a;
  var_list *l;
} def_list;

static bool add_def(const def_list *d, const loom_var *v) {
  loom_var *nv = loom_ir_var(d->a, v->name, v->dtype);
  loom_expr *r = nv ? loom_ir_ref(d->a, nv) : NULL;
  return r && vars_push(d->l, v, r);
}

/* The variables each statement defines; the switch names every kind, so
 * that a new kind is asked whether it defines some. */
static loom_visit take_defs(void *ctx, loom_stmt *s) {
  const def_list *d = ctx;
  bool ok = true;
  switch (s->kind) {
  case LOOM_STMT_FOR: ok = add_def(d, s->u.loop.var); break;
  case LOOM_STMT_LET: ok = add_def(d, s->u.let.var); break;
  case LOOM_STMT_BLOCK_REALIZE: {
    const loom_block *b = s->u.realize.block;
    for (int i = 0; i < b->n_iter_vars && ok; i++)
      ok = add_def(d, b->iter_vars[i].var);
    break;
  }
  case LOOM_STMT_STORE:
  case LOOM_STMT_IF:
  case LOOM_STMT_SEQ:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_COUNT_: break;
  }
  return ok ? LOOM_VISIT_GO : LOOM_VISIT_STOP;
}

/* Adds to l every variable s defines, each with a fresh variable of the
 * same name and type. */
static bool collect_defs(loom_arena *a, const loom_stmt *s, var_list *l) {
  def_list d = {a, l};
  loom_ir_visitor v = {.stmt_pre = take_defs, .ctx = &d};
  return loom_ir_visit_stmt(&v, s);
}

typedef struct copier {
  const char *suffix; /* appended to every block name: "_i0" */
} copier;

static loom_var *fresh_of(const sched_map *m, const loom_var *v) {
  for (int i = 0; i < m->n; i++)
    if (m->vars[i] == v)
      return m->values[i]->u.var;
  return NULL;
}

/* Loops and lets of a copy define their fresh variables. */
static loom_stmt *copy_stmt(const sched_map *m, loom_arena *a, loom_stmt *s) {
  loom_var **slot = NULL;
  if (s->kind == LOOM_STMT_FOR)
    slot = &s->u.loop.var;
  else if (s->kind == LOOM_STMT_LET)
    slot = &s->u.let.var;
  loom_var *nv = slot ? fresh_of(m, *slot) : NULL;
  if (!nv)
    return s;
  loom_stmt *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *s;
  if (c->kind == LOOM_STMT_FOR)
    c->u.loop.var = nv;
  else
    c->u.let.var = nv;
  return c;
}

/* Blocks of a copy get their fresh iter vars and their new names. */
static loom_block *copy_block(const sched_map *m, loom_arena *a,
                              const loom_block *old, loom_block *b) {
  const copier *cp = m->ctx;
  loom_block *c = loom_arena_alloc(a, sizeof *c);
  if (!c)
    return NULL;
  *c = *b;
  (void)old;
  size_t n = strlen(b->name) + strlen(cp->suffix) + 1;
  char *name = loom_arena_alloc(a, n);
  if (!name)
    return NULL;
  snprintf(name, n, "%s%s", b->name, cp->suffix);
  c->name = name;
  if (b->n_iter_vars) {
    loom_iter_var *iv =
        loom_arena_alloc(a, (size_t)b->n_iter_vars * sizeof *iv);
    if (!iv)
      return NULL;
    for (int i = 0; i < b->n_iter_vars; i++) {
      iv[i] = b->iter_vars[i];
      loom_var *nv = fresh_of(m, iv[i].var);
      if (nv)
        iv[i].var = nv;
    }
    c->iter_vars = iv;
  }
  return c;
}

/* ---- narrowing each copy's blocks to its piece ------------------------------- */

typedef struct narrower {
  realize_visitor v;
  const loom_var *piece; /* the piece's loop variable */
} narrower;

/* The first access of a buffer in a block body, as TVM's partition finds
 * it: a store's indices before those of the loads in its value. */
typedef struct first_access {
  const loom_buffer *buffer;
  loom_expr **indices;
  int n;
  bool found;
} first_access;

static loom_visit first_store(void *ctx, loom_stmt *s) {
  first_access *f = ctx;
  if (s->kind == LOOM_STMT_STORE && s->u.store.buffer == f->buffer) {
    f->indices = s->u.store.indices;
    f->n = s->u.store.n_indices;
    f->found = true;
    return LOOM_VISIT_STOP;
  }
  return LOOM_VISIT_GO;
}

static loom_visit first_load(void *ctx, loom_expr *e) {
  first_access *f = ctx;
  if (e->kind == LOOM_EXPR_LOAD && e->u.load.buffer == f->buffer) {
    f->indices = e->u.load.indices;
    f->n = e->u.load.n_indices;
    f->found = true;
    return LOOM_VISIT_STOP;
  }
  return LOOM_VISIT_GO;
}

/* Where the block's body first reaches r's buffer through iters alone
 * (A[vi, vk]), TVM's region becomes their domains (rx, one per iter);
 * other regions stay. False when out of memory. */
static bool widen_region(loom_arena *a, const loom_block *b,
                         const loom_arith_relax *rx,
                         const loom_buffer_region *r, loom_buffer_region *out) {
  *out = *r;
  first_access f = {.buffer = r->buffer};
  loom_ir_visitor v = {.stmt_pre = first_store, .expr_pre = first_load, .ctx = &f};
  loom_ir_visit_stmt(&v, b->body);
  int at[16];
  if (!f.found || f.n != r->n_ranges || f.n > 16)
    return true;
  for (int k = 0; k < f.n; k++) {
    at[k] = -1;
    for (int i = 0; f.indices[k]->kind == LOOM_EXPR_VAR && i < b->n_iter_vars; i++)
      if (f.indices[k]->u.var == b->iter_vars[i].var)
        at[k] = i;
    /* a domain over outer loops (a triangular nest) would put loops in a
     * block's region */
    if (at[k] < 0 || !loom_ir_is_const_int(rx[at[k]].range.min, NULL) ||
        !loom_ir_is_const_int(rx[at[k]].range.extent, NULL))
      return true;
  }
  loom_range *ranges = loom_arena_alloc(a, (size_t)(f.n ? f.n : 1) * sizeof *ranges);
  if (!ranges)
    return false;
  for (int k = 0; k < f.n; k++)
    ranges[k] = rx[at[k]].range;
  out->ranges = ranges;
  return true;
}

/* An iter domain whose binding depends on the piece shrinks to the values
 * the binding takes there; a region indexed by iters alone widens to their
 * domains, as TVM's does. */
static loom_stmt *narrow_realize(realize_visitor *v, loom_stmt *r) {
  narrower *nw = (narrower *)v;
  loom_arena *a = v->a;
  loom_block *b = r->u.realize.block;
  /* As TVM, only a block with an iter bound to the piece's loop itself is
   * narrowed; the others keep their domains and regions. */
  bool bound_to_piece = false;
  for (int i = 0; i < r->u.realize.n_iter_values; i++) {
    const loom_expr *e = r->u.realize.iter_values[i];
    bound_to_piece |= e->kind == LOOM_EXPR_VAR && e->u.var == nw->piece;
  }
  if (!b->n_iter_vars || !bound_to_piece)
    return r;
  loom_block *c = loom_arena_alloc(a, sizeof *c);
  loom_iter_var *iv =
      loom_arena_alloc(a, (size_t)b->n_iter_vars * sizeof *iv);
  loom_arith_relax *rx =
      loom_arena_alloc(a, (size_t)b->n_iter_vars * sizeof *rx);
  if (!c || !iv || !rx)
    return NULL;
  *c = *b;
  for (int i = 0; i < b->n_iter_vars; i++) {
    iv[i] = b->iter_vars[i];
    loom_expr *bind = i < r->u.realize.n_iter_values
                          ? r->u.realize.iter_values[i]
                          : NULL;
    int64_t mn, ext;
    if (bind && sched_expr_uses(bind, nw->piece) &&
        loom_ir_is_const_int(iv[i].dom.min, &mn) &&
        loom_ir_is_const_int(iv[i].dom.extent, &ext)) {
      loom_arith_interval in = loom_arith_bound(v->ctx, bind);
      if (in.is_bounded) {
        int64_t lo = in.min > mn ? in.min : mn;
        int64_t hi = in.max < mn + ext - 1 ? in.max : mn + ext - 1;
        if (lo <= hi) {
          loom_dtype t = iv[i].var->dtype;
          loom_range nr = {loom_ir_int(a, t, lo),
                           loom_ir_int(a, t, hi - lo + 1)};
          if (!nr.min || !nr.extent)
            return NULL;
          rx[i] = (loom_arith_relax){iv[i].var, nr};
          /* The init of a reduction runs where its reduction iters are
           * at their domain's start: those domains stay whole, or every
           * piece would start the reduction over. */
          if (!(b->init && iv[i].kind == LOOM_ITER_REDUCE))
            iv[i].dom = nr;
          continue;
        }
      }
    }
    rx[i] = (loom_arith_relax){iv[i].var, iv[i].dom};
  }
  c->iter_vars = iv;
  bool ok = true;
  for (int pass = 0; pass < 2 && ok; pass++) {
    int n = pass ? c->n_writes : c->n_reads;
    const loom_buffer_region *src = pass ? c->writes : c->reads;
    loom_buffer_region *out = n ? loom_arena_alloc(a, (size_t)n * sizeof *out)
                                : NULL;
    if (n && !out) {
      ok = false;
      break;
    }
    for (int i = 0; i < n && ok; i++)
      ok = widen_region(a, b, rx, &src[i], &out[i]);
    if (pass)
      c->writes = out;
    else
      c->reads = out;
  }
  if (!ok)
    return NULL;
  loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
  if (!nr)
    return NULL;
  *nr = *r;
  nr->u.realize.block = c;
  return nr;
}

/* ---- the primitive ------------------------------------------------------------- */

static loom_stmt *opaque_realize(loom_arena *a, const char *name,
                                 loom_stmt *body, loom_loc loc) {
  loom_stmt *r = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, loc);
  loom_block *b = loom_ir_block(a, name);
  if (!r || !b)
    return NULL;
  b->body = body;
  b->loc = loc;
  r->u.realize.block = b;
  return r;
}

/* Piece k of loop: a loop `<i><k>` over [lo, lo + extent) holding a copy of
 * the body, inside its `_partition` block. */
static loom_stmt *make_piece(sched_call *c, const sched_path *p,
                             const char *first, int k, int64_t lo,
                             int64_t extent, loom_var **piece_var) {
  loom_arena *a = sched_arena(c->s);
  loom_stmt *loop = p->stmts[p->n - 1];
  const loom_var *iv = loop->u.loop.var;
  char buf[256];
  snprintf(buf, sizeof buf, "%s%d", iv->name, k);
  loom_var *pv = loom_ir_var(a, buf, iv->dtype);
  loom_expr *pref = pv ? loom_ir_ref(a, pv) : NULL;
  var_list defs = {0};
  loom_stmt *out = NULL;
  if (!pref || !vars_push(&defs, iv, pref) ||
      !collect_defs(a, loop->u.loop.body, &defs))
    goto done;
  snprintf(buf, sizeof buf, "_%s%d", iv->name, k);
  copier cp = {buf};
  sched_map m = {.vars = defs.old, .values = defs.fresh, .n = defs.n,
                 .on_stmt = copy_stmt, .on_block = copy_block, .ctx = &cp};
  loom_stmt *body = sched_subst_stmt(a, loop->u.loop.body, &m);
  loom_stmt *nl = body ? loom_ir_stmt(a, LOOM_STMT_FOR, loop->loc) : NULL;
  if (!nl)
    goto done;
  nl->u.loop.var = pv;
  nl->u.loop.min = loom_ir_int(a, iv->dtype, lo);
  nl->u.loop.extent = loom_ir_int(a, iv->dtype, extent);
  nl->u.loop.kind = LOOM_FOR_SERIAL;
  nl->u.loop.body = body;
  if (!nl->u.loop.min || !nl->u.loop.extent)
    goto done;
  loom_arith_ctx *ctx = sched_arith_for_path(p, p->n - 1);
  if (!ctx)
    goto done;
  narrower nw = {.v = {.fn = narrow_realize, .a = a, .ctx = ctx,
                       .descend_blocks = true},
                 .piece = pv};
  nl = sched_visit_realizes(&nw.v, nl);
  loom_arith_ctx_free(ctx);
  snprintf(buf, sizeof buf, "%s_%s%d_partition", first, iv->name, k);
  out = nl ? opaque_realize(a, buf, nl, loop->loc) : NULL;
  *piece_var = pv;
done:
  vars_free(&defs);
  return out;
}

loom_status sched_apply_loop_partition(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_loop(c, 0, &p));
  loom_stmt *loop = p.stmts[p.n - 1];
  const char *name = sched_stmt_name(loop);
  int n = c->n_inputs - 1;
  loom_status st = LOOM_OK;
  int64_t f[MAX_PIECES + 1];
  int none_at = -1;
  sched_stmt_list blocks = {0};
  if (n < 1 || n > MAX_PIECES) {
    st = sched_fail(c, "%d factors for loop '%s' (need 1 to %d)", n, name,
                    MAX_PIECES);
    goto out;
  }
  for (int i = 0; i < n; i++) {
    bool is_none;
    if ((st = sched_input_int(c, i + 1, &f[i], &is_none)) != LOOM_OK)
      goto out;
    if (is_none && none_at >= 0) {
      st = sched_fail(c, "at most one factor for loop '%s' may be None "
                         "(factors %d and %d are)",
                      name, none_at, i);
      goto out;
    }
    if (is_none)
      none_at = i;
    else if (f[i] <= 0) {
      st = sched_fail(c, "every constant factor for loop '%s' must be "
                         "positive, but the factor at position %d is %lld",
                      name, i, (long long)f[i]);
      goto out;
    }
  }
  if (loop->u.loop.n_annotations ||
      loop->u.loop.kind == LOOM_FOR_THREAD_BINDING) {
    st = sched_fail(c, "loop '%s' has an annotation or a thread binding",
                    name);
    goto out;
  }
  int64_t lo, extent;
  if (!loom_ir_is_const_int(loop->u.loop.min, &lo) ||
      !loom_ir_is_const_int(loop->u.loop.extent, &extent)) {
    st = sched_fail(c, "loop '%s' has a range that is not constant; only a "
                       "constant range can be partitioned",
                    name);
    goto out;
  }
  int64_t sum = 0;
  bool is_over = false;
  for (int i = 0; i < n && !is_over; i++)
    if (i != none_at) {
      is_over = f[i] >= extent - sum;
      sum += is_over ? 0 : f[i];
    }
  if (is_over) {
    st = sched_fail(c, "the constant factors sum to at least the extent "
                       "%lld of loop '%s'; they must leave a last piece "
                       "(the None factor, or the rest after the factors)",
                    (long long)extent, name);
    goto out;
  }
  /* A None takes the rest; without one, the rest is a last piece. */
  int np = n;
  if (none_at >= 0)
    f[none_at] = extent - sum;
  else
    f[np++] = extent - sum;
  if (!sched_collect_blocks(loop->u.loop.body, &blocks)) {
    st = sched_nomem(c);
    goto out;
  }
  if (blocks.n == 0) {
    st = sched_fail(c, "loop '%s' holds no block; there is nothing to name "
                       "the partitions after",
                    name);
    goto out;
  }
  const char *who = NULL;
  const char *why = copy_problem(loop->u.loop.body, &who);
  if (why && who) {
    st = sched_fail(c, "block '%s' under loop '%s' %s, which the copies of "
                       "the loop body would define more than once",
                    who, name, why);
    goto out;
  }
  if (why) {
    st = sched_fail(c, "a statement under loop '%s' %s, which the copies of "
                       "the loop body would define more than once",
                    name, why);
    goto out;
  }
  const char *first = blocks.items[0]->u.realize.block->name;
  loom_stmt **pieces = loom_arena_alloc(a, (size_t)np * sizeof *pieces);
  loom_var *vars[MAX_PIECES + 1];
  if (!pieces) {
    st = sched_nomem(c);
    goto out;
  }
  int64_t at = lo;
  for (int k = 0; k < np; k++) {
    pieces[k] = make_piece(c, &p, first, k, at, f[k], &vars[k]);
    if (!pieces[k]) {
      st = sched_nomem(c);
      goto out;
    }
    at += f[k];
  }
  loom_stmt *seq = pieces[0];
  if (np > 1 && (seq = loom_ir_stmt(a, LOOM_STMT_SEQ, loop->loc))) {
    seq->u.seq.stmts = pieces;
    seq->u.seq.n_stmts = np;
  }
  char buf[256];
  snprintf(buf, sizeof buf, "%s_%s_common", first, name);
  loom_stmt *common = seq ? opaque_realize(a, buf, seq, loop->loc) : NULL;
  if (!common) {
    st = sched_nomem(c);
    goto out;
  }
  c->mod = sched_replace(a, c->mod, &p, p.n - 1, common);
  if (!c->mod) {
    st = sched_nomem(c);
    goto out;
  }
  for (int k = 0; k < np && st == LOOM_OK; k++)
    st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_LOOP, .func = p.func,
                                      .loop = vars[k]});
out:
  free(blocks.items);
  sched_path_free(&p);
  return st;
}
