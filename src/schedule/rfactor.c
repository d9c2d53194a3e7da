/* rfactor: factor a reduction over one of its loops. The rfactor block
 * `<name>_rf` computes partial results into a buffer `<buf>_rf` with one
 * more dimension (at factor_axis) indexed by a new spatial iter for the
 * loop, under copies of all the block's loops; the write-back block, under
 * the original nest less the other reduction loops, reduces the partial
 * results into the original buffer. Follows TVM's RFactor, including the
 * order and names of the new iters, so that TVM's traces replay exactly. */
#include "schedule/reducer.h"

#include <string.h>

#define MAX_LOOPS 64
#define MAX_ITERS 128

typedef struct rf_state {
  sched_call *c;
  loom_arena *a;
  sched_path bp;           /* to the block */
  loom_stmt *r;            /* its realize */
  const loom_block *b;
  int si;                  /* the scope realize's index in bp */
  int loops[MAX_LOOPS];    /* indices in bp of the loops above the block */
  int nl;
  int rf;                  /* bp index of the rfactor loop */
  bool dp_touch[MAX_LOOPS], red_touch[MAX_LOOPS];
  sched_reduction red;
  int factor_axis;
  loom_buffer *rf_bufs[SCHED_MAX_REDUCE_BUFFERS];
} rf_state;

static loom_var *loop_var(const rf_state *s, int k) {
  return s->bp.stmts[s->loops[k]]->u.loop.var;
}

/* ---- checks ------------------------------------------------------------------ */

static bool store_uses_any(const loom_stmt *st, const loom_var *const *vars,
                           int n) {
  if (!st)
    return false;
  switch (st->kind) {
  case LOOM_STMT_STORE:
    for (int i = 0; i < st->u.store.n_indices; i++)
      for (int k = 0; k < n; k++)
        if (sched_expr_uses(st->u.store.indices[i], vars[k]))
          return true;
    return false;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < st->u.seq.n_stmts; i++)
      if (store_uses_any(st->u.seq.stmts[i], vars, n))
        return true;
    return false;
  case LOOM_STMT_LET:
    return store_uses_any(st->u.let.body, vars, n);
  case LOOM_STMT_IF:
    return store_uses_any(st->u.if_.then_case, vars, n) ||
           store_uses_any(st->u.if_.else_case, vars, n);
  case LOOM_STMT_FOR:
    return store_uses_any(st->u.loop.body, vars, n);
  case LOOM_STMT_BLOCK_REALIZE: /* a nested block's stores are its own */
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_COUNT_: break;
  }
  return false;
}

/* TVM's definition of a reduction block, condition by condition. */
static loom_status check_reduction_block(rf_state *s) {
  const loom_block *b = s->b;
  sched_call *c = s->c;
  if (!b->init)
    return sched_fail(c, "block '%s' is not a reduction block: it has no "
                         "init",
                      b->name);
  const char *why = sched_affine_problem(&s->bp, s->bp.n - 1);
  if (why)
    return sched_fail(c, "block '%s' is not a reduction block: %s", b->name,
                      why);
  const loom_var *reds[MAX_ITERS];
  int nr = 0;
  for (int i = 0; i < b->n_iter_vars; i++) {
    loom_iter_kind k = b->iter_vars[i].kind;
    if (k != LOOM_ITER_SPATIAL && k != LOOM_ITER_REDUCE)
      return sched_fail(c, "block '%s' is not a reduction block: iter '%s' "
                           "is neither spatial nor a reduction",
                        b->name, b->iter_vars[i].var->name);
    if (k == LOOM_ITER_REDUCE && nr < MAX_ITERS)
      reds[nr++] = b->iter_vars[i].var;
  }
  sched_stmt_list blocks = {0};
  if (!sched_collect_blocks(s->bp.stmts[s->si]->u.realize.block->body,
                            &blocks)) {
    free(blocks.items);
    return sched_nomem(c);
  }
  for (int i = 0; i < blocks.n; i++) {
    const loom_block *o = blocks.items[i]->u.realize.block;
    if (o == b)
      continue;
    for (int w = 0; w < o->n_writes; w++)
      for (int k = 0; k < b->n_writes; k++)
        if (o->writes[w].buffer == b->writes[k].buffer) {
          free(blocks.items);
          return sched_fail(c, "block '%s' is not a reduction block: it is "
                               "not the only writer of '%s' (block '%s' "
                               "writes it too)",
                            b->name, b->writes[k].buffer->name, o->name);
        }
  }
  free(blocks.items);
  if (store_uses_any(b->body, reds, nr) || store_uses_any(b->init, reds, nr))
    return sched_fail(c, "block '%s' is not a reduction block: a reduction "
                         "iter indexes the buffer it writes",
                      b->name);
  return LOOM_OK;
}

/* The loops of the block, from the outermost under its scope; which block
 * iters touch each; and TVM's four loop properties. */
static loom_status check_loops(rf_state *s) {
  sched_call *c = s->c;
  const loom_stmt *r = s->r;
  const loom_block *b = s->b;
  s->nl = 0;
  for (int i = s->si + 1; i < s->bp.n - 1; i++)
    if (s->bp.stmts[i]->kind == LOOM_STMT_FOR) {
      if (s->nl == MAX_LOOPS)
        return sched_fail(c, "block '%s' has too many loops (limit is %d)",
                          b->name, MAX_LOOPS);
      s->loops[s->nl++] = i;
    }
  for (int k = 0; k < s->nl; k++) {
    s->dp_touch[k] = s->red_touch[k] = false;
    for (int i = 0; i < b->n_iter_vars; i++)
      if (sched_expr_uses(r->u.realize.iter_values[i], loop_var(s, k))) {
        if (b->iter_vars[i].kind == LOOM_ITER_SPATIAL)
          s->dp_touch[k] = true;
        else
          s->red_touch[k] = true;
      }
  }
  /* The outermost loop's first block must be this one. */
  sched_stmt_list under = {0};
  loom_stmt *outer = s->bp.stmts[s->loops[0]];
  if (!sched_collect_blocks(outer, &under)) {
    free(under.items);
    return sched_nomem(c);
  }
  bool first = under.n > 0 && under.items[0] == r;
  free(under.items);
  if (!first)
    return sched_fail(c, "the first block under the outermost loop '%s' is "
                         "not block '%s'",
                      outer->u.loop.var->name, b->name);
  bool met_reduction = false;
  for (int k = 0; k < s->nl; k++) {
    loom_stmt *l = s->bp.stmts[s->loops[k]];
    int64_t ext;
    if (s->dp_touch[k] && s->red_touch[k])
      return sched_fail(c, "loop '%s' feeds both spatial and reduction "
                           "iters of block '%s'",
                        l->u.loop.var->name, b->name);
    if (s->dp_touch[k]) {
      if (s->loops[k] == s->rf)
        return sched_fail(c, "loop '%s' feeds a spatial iter of block '%s'; "
                             "rfactor needs a loop that only reduction "
                             "iters use",
                          l->u.loop.var->name, b->name);
      continue;
    }
    if (s->red_touch[k]) {
      if (!met_reduction) {
        sched_stmt_list kids = {0};
        if (!sched_collect_blocks(l, &kids)) {
          free(kids.items);
          return sched_nomem(c);
        }
        int n = kids.n;
        free(kids.items);
        if (n != 1)
          return sched_fail(c, "the outermost reduction loop '%s' of block "
                               "'%s' holds %d blocks; it must hold only "
                               "this one",
                            l->u.loop.var->name, b->name, n);
        met_reduction = true;
      }
      continue;
    }
    if (met_reduction &&
        !(loom_ir_is_const_int(l->u.loop.extent, &ext) && ext == 1))
      return sched_fail(c, "loop '%s' lies under a reduction loop of block "
                           "'%s' but feeds no iter and runs more than once",
                        l->u.loop.var->name, b->name);
  }
  return LOOM_OK;
}

/* ---- building ----------------------------------------------------------------- */

/* The variables of e in the order they first appear (TVM's UndefinedVars). */
static void vars_in_order(const loom_expr *e, const loom_var **out, int *n,
                          int max) {
  if (!e)
    return;
  switch (e->kind) {
  case LOOM_EXPR_VAR:
    for (int i = 0; i < *n; i++)
      if (out[i] == e->u.var)
        return;
    if (*n < max)
      out[(*n)++] = e->u.var;
    return;
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
    return;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    vars_in_order(e->u.unary.a, out, n, max);
    return;
  case LOOM_EXPR_SELECT:
    vars_in_order(e->u.select.cond, out, n, max);
    vars_in_order(e->u.select.t, out, n, max);
    vars_in_order(e->u.select.f, out, n, max);
    return;
  case LOOM_EXPR_LOAD:
    for (int i = 0; i < e->u.load.n_indices; i++)
      vars_in_order(e->u.load.indices[i], out, n, max);
    return;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      vars_in_order(e->u.call.args[i], out, n, max);
    return;
  case LOOM_EXPR_LET:
  case LOOM_EXPR_RAMP:
  case LOOM_EXPR_BROADCAST:
    return; /* not in the quasi-affine bindings rfactor accepts */
  default:
    vars_in_order(e->u.bin.a, out, n, max);
    vars_in_order(e->u.bin.b, out, n, max);
    return;
  }
}

/* A growable variable map in the arena. */
typedef struct vmap {
  const loom_var *vars[2 * MAX_ITERS + 2 * MAX_LOOPS];
  loom_expr *values[2 * MAX_ITERS + 2 * MAX_LOOPS];
  int n;
} vmap;

static bool vmap_put(vmap *m, const loom_var *v, loom_expr *e) {
  if (!e || m->n == (int)(sizeof m->vars / sizeof m->vars[0]))
    return false;
  m->vars[m->n] = v;
  m->values[m->n++] = e;
  return true;
}

static sched_map as_map(const vmap *m) {
  return (sched_map){.vars = (const loom_var **)m->vars,
                     .values = (loom_expr **)m->values,
                     .n = m->n};
}

static loom_expr *subst(loom_arena *a, loom_expr *e, const vmap *m) {
  sched_map sm = as_map(m);
  return sched_subst_expr(a, e, &sm);
}

static loom_stmt *store(loom_arena *a, loom_buffer *buf, loom_expr *value,
                        loom_expr **idx, int n) {
  loom_stmt *st = loom_ir_stmt(a, LOOM_STMT_STORE, (loom_loc){0});
  if (!st || !value)
    return NULL;
  st->u.store.buffer = buf;
  st->u.store.value = value;
  st->u.store.indices = idx;
  st->u.store.n_indices = n;
  return st;
}

static loom_stmt *seq_of(loom_arena *a, loom_stmt **items, int n) {
  if (n == 1)
    return items[0];
  loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_SEQ, (loom_loc){0});
  loom_stmt **copy = loom_arena_alloc(a, (size_t)n * sizeof *copy);
  if (!s || !copy)
    return NULL;
  for (int i = 0; i < n; i++) {
    if (!items[i])
      return NULL;
    copy[i] = items[i];
  }
  s->u.seq.stmts = copy;
  s->u.seq.n_stmts = n;
  return s;
}

/* The update of a block: buffer i gets combine(lhs[i], rhs[i]) (or rhs[i]
 * alone when combine is false) at idx; several buffers go through let
 * variables `v_<buffer>` so that each combination reads the old values. */
static loom_stmt *update_body(rf_state *s, loom_buffer *const *bufs,
                              loom_expr **lhs, loom_expr **rhs,
                              loom_expr **idx, int n_idx, bool combine) {
  loom_arena *a = s->a;
  int n = s->red.n;
  loom_expr *vals[SCHED_MAX_REDUCE_BUFFERS];
  loom_stmt *stores[SCHED_MAX_REDUCE_BUFFERS];
  if (!combine) {
    for (int i = 0; i < n; i++)
      stores[i] = store(a, bufs[i], rhs[i], idx, n_idx);
    return seq_of(a, stores, n);
  }
  if (!sched_reducer_combine(a, s->red.reducer, lhs, rhs, vals))
    return NULL;
  if (n == 1)
    return store(a, bufs[0], vals[0], idx, n_idx);
  loom_var *lets[SCHED_MAX_REDUCE_BUFFERS];
  for (int i = 0; i < n; i++) {
    char name[256];
    snprintf(name, sizeof name, "v_%s", bufs[i]->name);
    lets[i] = loom_ir_var(a, name, vals[i]->dtype);
    loom_expr *ref = lets[i] ? loom_ir_ref(a, lets[i]) : NULL;
    stores[i] = store(a, bufs[i], ref, idx, n_idx);
  }
  loom_stmt *body = seq_of(a, stores, n);
  for (int i = n - 1; i >= 0 && body; i--) {
    loom_stmt *l = loom_ir_stmt(a, LOOM_STMT_LET, (loom_loc){0});
    if (!l || !lets[i])
      return NULL;
    l->u.let.var = lets[i];
    l->u.let.value = vals[i];
    l->u.let.body = body;
    body = l;
  }
  return body;
}

static loom_stmt *init_body(rf_state *s, loom_buffer *const *bufs,
                            loom_expr **idx, int n_idx) {
  loom_stmt *stores[SCHED_MAX_REDUCE_BUFFERS];
  for (int i = 0; i < s->red.n; i++)
    stores[i] = store(s->a, bufs[i], s->red.identity[i], idx, n_idx);
  return seq_of(s->a, stores, s->red.n);
}

/* idx with e inserted at position at. */
static loom_expr **insert_index(loom_arena *a, loom_expr **idx, int n, int at,
                                loom_expr *e) {
  loom_expr **out = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *out);
  if (!out || !e)
    return NULL;
  for (int i = 0, k = 0; i <= n; i++)
    out[i] = i == at ? e : idx[k++];
  return out;
}

static loom_buffer *rf_buffer(rf_state *s, loom_buffer *buf) {
  loom_arena *a = s->a;
  loom_stmt *l = s->bp.stmts[s->rf];
  loom_buffer *nb = loom_arena_alloc(a, sizeof *nb);
  loom_expr **shape = insert_index(a, buf->shape, buf->ndim, s->factor_axis,
                                   l->u.loop.extent);
  char name[256];
  snprintf(name, sizeof name, "%s_rf", buf->name);
  if (!nb || !shape)
    return NULL;
  *nb = *buf;
  nb->shape = shape;
  nb->ndim = buf->ndim + 1;
  nb->strides = NULL;
  nb->n_strides = 0;
  nb->name = loom_arena_strdup(a, name);
  nb->data = loom_ir_var(a, name, buf->data ? buf->data->dtype : LOOM_HANDLE);
  if (!nb->name || !nb->data)
    return NULL;
  if (buf->data)
    *nb->data = *buf->data, nb->data->name = nb->name;
  return sched_keep_offset_type(a, buf, nb) ? nb : NULL;
}

static loom_buffer_region point_region(loom_arena *a, const loom_expr *load,
                                       bool *ok) {
  loom_buffer_region r = {load->u.load.buffer, NULL, load->u.load.n_indices};
  r.ranges = loom_arena_alloc(a, (size_t)(r.n_ranges ? r.n_ranges : 1) *
                                     sizeof *r.ranges);
  if (!r.ranges) {
    *ok = false;
    return r;
  }
  for (int i = 0; i < r.n_ranges; i++) {
    loom_expr *ix = load->u.load.indices[i];
    r.ranges[i].min = ix;
    r.ranges[i].extent = loom_ir_int(a, ix->dtype, 1);
    *ok &= r.ranges[i].extent != NULL;
  }
  return r;
}

static loom_buffer_region *subst_regions(loom_arena *a,
                                         const loom_buffer_region *rs, int n,
                                         const vmap *m) {
  loom_buffer_region *out = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++) {
    out[i] = rs[i];
    out[i].ranges = loom_arena_alloc(
        a, (size_t)(rs[i].n_ranges ? rs[i].n_ranges : 1) * sizeof *out[i].ranges);
    if (!out[i].ranges)
      return NULL;
    for (int d = 0; d < rs[i].n_ranges; d++) {
      out[i].ranges[d].min = subst(a, rs[i].ranges[d].min, m);
      out[i].ranges[d].extent = subst(a, rs[i].ranges[d].extent, m);
      if (!out[i].ranges[d].min || !out[i].ranges[d].extent)
        return NULL;
    }
  }
  return out;
}

static loom_iter_var iter_from_loop(loom_arena *a, const loom_stmt *l,
                                    loom_iter_kind kind) {
  char name[256];
  snprintf(name, sizeof name, "v%s", l->u.loop.var->name);
  loom_iter_var iv = {loom_ir_var(a, name, l->u.loop.var->dtype),
                      {l->u.loop.min, l->u.loop.extent}, kind};
  return iv;
}

/* The rfactor block, with bindings over the original loop variables (the
 * caller moves them to the copied loops). *add is its iter for the rfactor
 * loop; *rf_idx the indices of the rfactor buffers. */
static loom_stmt *make_rf_block(rf_state *s, loom_var **add,
                                loom_expr ***rf_idx) {
  loom_arena *a = s->a;
  const loom_block *b = s->b;
  const loom_stmt *r = s->r;
  loom_stmt *rfl = s->bp.stmts[s->rf];
  int cap = b->n_iter_vars + s->nl + 1;
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)cap * sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)cap * sizeof *vals);
  if (!iters || !vals)
    return NULL;
  int ni = 0;
  /* Loop variables to the iters made for them; old iters to expressions. */
  vmap *loop2iter = calloc(1, sizeof *loop2iter);
  vmap *var_map = calloc(1, sizeof *var_map);
  loom_stmt *result = NULL;
  if (!loop2iter || !var_map)
    goto out;
  iters[ni] = iter_from_loop(a, rfl, LOOM_ITER_SPATIAL);
  vals[ni] = loom_ir_ref(a, rfl->u.loop.var);
  if (!iters[ni].var || !vals[ni] ||
      !vmap_put(loop2iter, rfl->u.loop.var, loom_ir_ref(a, iters[ni].var)))
    goto out;
  *add = iters[ni++].var;
  for (int i = 0; i < b->n_iter_vars; i++) {
    loom_expr *bind = r->u.realize.iter_values[i];
    if (b->iter_vars[i].kind == LOOM_ITER_SPATIAL ||
        !sched_expr_uses(bind, rfl->u.loop.var)) {
      iters[ni] = b->iter_vars[i];
      vals[ni++] = bind;
      continue;
    }
    const loom_var *vs[MAX_LOOPS + 8];
    int nv = 0;
    vars_in_order(bind, vs, &nv, MAX_LOOPS + 8);
    for (int j = 0; j < nv; j++) {
      int k = -1;
      for (int q = 0; q < s->nl; q++)
        if (loop_var(s, q) == vs[j])
          k = q;
      if (k < 0)
        continue;
      bool made = false;
      for (int q = 0; q < loop2iter->n; q++)
        made |= loop2iter->vars[q] == vs[j];
      if (made)
        continue;
      const loom_stmt *l = s->bp.stmts[s->loops[k]];
      iters[ni] = iter_from_loop(a, l, LOOM_ITER_REDUCE);
      vals[ni] = loom_ir_ref(a, l->u.loop.var);
      if (!iters[ni].var || !vals[ni] ||
          !vmap_put(loop2iter, vs[j], loom_ir_ref(a, iters[ni].var)))
        goto out;
      ni++;
    }
    if (!vmap_put(var_map, b->iter_vars[i].var, subst(a, bind, loop2iter)))
      goto out;
  }
  bool has_reduce = false;
  for (int i = 0; i < ni; i++)
    has_reduce |= iters[i].kind == LOOM_ITER_REDUCE;

  int n = s->red.n, nidx = s->red.n_indices + 1;
  loom_expr **idx = insert_index(a, s->red.indices, s->red.n_indices,
                                 s->factor_axis, loom_ir_ref(a, *add));
  if (!idx)
    goto out;
  *rf_idx = idx;
  loom_expr *lhs[SCHED_MAX_REDUCE_BUFFERS], *rhs[SCHED_MAX_REDUCE_BUFFERS];
  for (int i = 0; i < n; i++) {
    lhs[i] = loom_ir_load(a, s->rf_bufs[i], idx, nidx);
    rhs[i] = s->red.rhs[i];
    if (!lhs[i])
      goto out;
  }
  sched_map sm = as_map(var_map);
  loom_block *nb = loom_ir_block(a, "");
  loom_stmt *body = update_body(s, s->rf_bufs, lhs, rhs, idx, nidx, has_reduce);
  if (!nb || !body || !(nb->body = sched_subst_stmt(a, body, &sm)))
    goto out;
  if (has_reduce) {
    loom_stmt *init = init_body(s, s->rf_bufs, idx, nidx);
    if (!init || !(nb->init = sched_subst_stmt(a, init, &sm)))
      goto out;
  }
  char name[256];
  snprintf(name, sizeof name, "%s_rf", b->name);
  nb->name = loom_arena_strdup(a, name);
  nb->iter_vars = iters;
  nb->n_iter_vars = ni;
  nb->reads = subst_regions(a, b->reads, b->n_reads, var_map);
  nb->n_reads = b->n_reads;
  loom_buffer_region *writes = loom_arena_alloc(
      a, (size_t)(b->n_writes ? b->n_writes : 1) * sizeof *writes);
  if (!nb->name || !nb->reads || !writes)
    goto out;
  for (int w = 0; w < b->n_writes; w++) {
    const loom_buffer_region *old = &b->writes[w];
    int k = 0;
    while (s->red.buffers[k] != old->buffer)
      k++; /* checked: every written buffer is reduced */
    loom_range *rs = loom_arena_alloc(a, (size_t)(old->n_ranges + 1) * sizeof *rs);
    loom_expr *one = loom_ir_int(a, (*add)->dtype, 1);
    loom_expr *at = loom_ir_ref(a, *add);
    if (!rs || !one || !at)
      goto out;
    for (int d = 0, q = 0; d <= old->n_ranges; d++)
      rs[d] = d == s->factor_axis ? (loom_range){at, one} : old->ranges[q++];
    loom_buffer_region nr = {s->rf_bufs[k], rs, old->n_ranges + 1};
    loom_buffer_region *sub = subst_regions(a, &nr, 1, var_map);
    if (!sub)
      goto out;
    writes[w] = *sub;
  }
  nb->writes = writes;
  nb->n_writes = b->n_writes;
  nb->annotations = b->annotations;
  nb->n_annotations = b->n_annotations;
  nb->loc = b->loc;
  loom_stmt *nr = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, r->loc);
  if (!nr)
    goto out;
  nr->u.realize.block = nb;
  nr->u.realize.iter_values = vals;
  nr->u.realize.n_iter_values = ni;
  nr->u.realize.predicate = r->u.realize.predicate;
  result = nr;
out:
  free(loop2iter);
  free(var_map);
  return result;
}

static bool is_reduction_loop(const rf_state *s, int bp_index);

/* The conjuncts of pred that use no loop the write-back nest drops. TVM
 * gives the write-back block no predicate at all, which lets it run past
 * the iteration space of a split that does not divide; keeping the bounds
 * on the loops it keeps is what the original program computes. */
static loom_expr *kept_conjuncts(rf_state *s, loom_expr *pred, bool *oom) {
  const loom_var *dropped[MAX_LOOPS];
  int n = 0;
  for (int k = 0; k < s->nl; k++)
    if (s->loops[k] != s->rf && is_reduction_loop(s, s->loops[k]))
      dropped[n++] = loop_var(s, k);
  return sched_conjuncts_without(s->a, pred, dropped, n, oom);
}

/* The write-back block: a reduction over the rfactor loop of the partial
 * results, with fresh copies of the spatial iters. */
static loom_stmt *make_wb_block(rf_state *s, loom_var *add, loom_expr **rf_idx) {
  loom_arena *a = s->a;
  const loom_block *b = s->b;
  const loom_stmt *r = s->r;
  loom_stmt *rfl = s->bp.stmts[s->rf];
  loom_iter_var *iters = loom_arena_alloc(a, (size_t)(b->n_iter_vars + 1) *
                                                 sizeof *iters);
  loom_expr **vals = loom_arena_alloc(a, (size_t)(b->n_iter_vars + 1) *
                                             sizeof *vals);
  vmap *m = calloc(1, sizeof *m);
  loom_stmt *result = NULL;
  if (!iters || !vals || !m)
    goto out;
  int ni = 0;
  iters[ni] = iter_from_loop(a, rfl, LOOM_ITER_REDUCE);
  vals[ni] = loom_ir_ref(a, rfl->u.loop.var);
  if (!iters[ni].var || !vals[ni] ||
      !vmap_put(m, add, loom_ir_ref(a, iters[ni].var)))
    goto out;
  ni++;
  for (int i = 0; i < b->n_iter_vars; i++) {
    const loom_iter_var *old = &b->iter_vars[i];
    if (old->kind != LOOM_ITER_SPATIAL)
      continue;
    iters[ni] = *old;
    iters[ni].var = loom_ir_var(a, old->var->name, old->var->dtype);
    vals[ni] = r->u.realize.iter_values[i];
    if (!iters[ni].var || !vmap_put(m, old->var, loom_ir_ref(a, iters[ni].var)))
      goto out;
    ni++;
  }
  int n = s->red.n;
  loom_expr *lhs[SCHED_MAX_REDUCE_BUFFERS], *rhs[SCHED_MAX_REDUCE_BUFFERS];
  loom_buffer *bufs[SCHED_MAX_REDUCE_BUFFERS];
  loom_expr **idx = loom_arena_alloc(
      a, (size_t)(s->red.n_indices ? s->red.n_indices : 1) * sizeof *idx);
  if (!idx)
    goto out;
  for (int d = 0; d < s->red.n_indices; d++)
    if (!(idx[d] = subst(a, s->red.indices[d], m)))
      goto out;
  loom_buffer_region *reads = loom_arena_alloc(a, (size_t)n * sizeof *reads);
  loom_buffer_region *writes = loom_arena_alloc(a, (size_t)n * sizeof *writes);
  if (!reads || !writes)
    goto out;
  bool ok = true;
  for (int i = 0; i < n; i++) {
    bufs[i] = s->red.buffers[i];
    lhs[i] = subst(a, s->red.lhs[i], m);
    loom_expr *load = loom_ir_load(a, s->rf_bufs[i], rf_idx, s->red.n_indices + 1);
    rhs[i] = load ? subst(a, load, m) : NULL;
    if (!lhs[i] || !rhs[i])
      goto out;
    reads[i] = point_region(a, rhs[i], &ok);
    writes[i] = point_region(a, lhs[i], &ok);
  }
  loom_block *nb = loom_ir_block(a, b->name);
  loom_stmt *nr = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, r->loc);
  if (!ok || !nb || !nr ||
      !(nb->body = update_body(s, bufs, lhs, rhs, idx, s->red.n_indices, true)) ||
      !(nb->init = init_body(s, bufs, idx, s->red.n_indices)))
    goto out;
  nb->iter_vars = iters;
  nb->n_iter_vars = ni;
  nb->reads = reads;
  nb->n_reads = n;
  nb->writes = writes;
  nb->n_writes = n;
  nb->annotations = b->annotations;
  nb->n_annotations = b->n_annotations;
  nb->loc = b->loc;
  nr->u.realize.block = nb;
  nr->u.realize.iter_values = vals;
  nr->u.realize.n_iter_values = ni;
  bool oom = false;
  nr->u.realize.predicate = kept_conjuncts(s, r->u.realize.predicate, &oom);
  if (!oom)
    result = nr;
out:
  free(m);
  return result;
}

/* Copies of all the block's loops, with fresh variables, around the
 * rfactor block. */
static loom_stmt *wrap_rf_loops(rf_state *s, loom_stmt *rf_realize) {
  loom_arena *a = s->a;
  vmap *m = calloc(1, sizeof *m);
  loom_stmt *cur = NULL;
  if (!m)
    return NULL;
  for (int k = 0; k < s->nl; k++) {
    loom_var *old = loop_var(s, k);
    loom_var *nv = loom_ir_var(a, old->name, old->dtype);
    if (!nv || !vmap_put(m, old, loom_ir_ref(a, nv)))
      goto out;
  }
  sched_map sm = as_map(m);
  loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
  loom_expr **vals = loom_arena_alloc(
      a, (size_t)(rf_realize->u.realize.n_iter_values + 1) * sizeof *vals);
  if (!nr || !vals)
    goto out;
  *nr = *rf_realize;
  for (int i = 0; i < rf_realize->u.realize.n_iter_values; i++)
    if (!(vals[i] = sched_subst_expr(a, rf_realize->u.realize.iter_values[i],
                                     &sm)))
      goto out;
  nr->u.realize.iter_values = vals;
  if (nr->u.realize.predicate &&
      !(nr->u.realize.predicate =
            sched_subst_expr(a, nr->u.realize.predicate, &sm)))
    goto out;
  cur = nr;
  for (int k = s->nl - 1; k >= 0 && cur; k--) {
    const loom_stmt *old = s->bp.stmts[s->loops[k]];
    loom_stmt *l = loom_arena_alloc(a, sizeof *l);
    if (!l) {
      cur = NULL;
      break;
    }
    *l = *old;
    l->u.loop.var = m->values[k]->u.var;
    l->u.loop.min = sched_subst_expr(a, old->u.loop.min, &sm);
    l->u.loop.extent = sched_subst_expr(a, old->u.loop.extent, &sm);
    l->u.loop.body = cur;
    cur = l->u.loop.min && l->u.loop.extent ? l : NULL;
  }
out:
  free(m);
  return cur;
}

static bool is_reduction_loop(const rf_state *s, int bp_index) {
  for (int k = 0; k < s->nl; k++)
    if (s->loops[k] == bp_index)
      return s->red_touch[k];
  return false;
}

/* The scope with the original nest rebuilt around the write-back block
 * (reduction loops other than the rfactor loop dropped), the rfactor nest
 * placed just before it, and the rfactor buffers allocated. */
static loom_stmt *rebuild_scope(rf_state *s, loom_stmt *rf_nest,
                                loom_stmt *wb) {
  loom_arena *a = s->a;
  const sched_path *p = &s->bp;
  int o = s->loops[0];
  loom_stmt *cur = wb;
  for (int i = p->n - 2; i >= o && cur; i--) {
    const loom_stmt *st = p->stmts[i];
    if (st->kind == LOOM_STMT_FOR && i != s->rf && is_reduction_loop(s, i))
      continue;
    /* The child on the path may have been dropped: link to what is left. */
    loom_stmt *c2 = loom_arena_alloc(a, sizeof *c2);
    if (!c2)
      return NULL;
    if (st->kind == LOOM_STMT_FOR) {
      *c2 = *st;
      c2->u.loop.body = cur;
      cur = c2;
    } else {
      cur = sched_with_child(a, st, p->stmts[i + 1], cur);
    }
  }
  if (!cur)
    return NULL;
  /* The rfactor nest goes right before the outermost loop. */
  const loom_stmt *parent = p->stmts[o - 1];
  loom_stmt *seq = loom_ir_stmt(a, LOOM_STMT_SEQ, p->stmts[o]->loc);
  if (!seq)
    return NULL;
  int depth = o;
  if (parent->kind == LOOM_STMT_SEQ) {
    int n = parent->u.seq.n_stmts + 1;
    loom_stmt **items = loom_arena_alloc(a, (size_t)n * sizeof *items);
    if (!items)
      return NULL;
    for (int i = 0, k = 0; i < parent->u.seq.n_stmts; i++) {
      if (parent->u.seq.stmts[i] == p->stmts[o]) {
        items[k++] = rf_nest;
        items[k++] = cur;
      } else {
        items[k++] = parent->u.seq.stmts[i];
      }
    }
    *seq = *parent;
    seq->u.seq.stmts = items;
    seq->u.seq.n_stmts = n;
    depth = o - 1;
  } else {
    loom_stmt *items[2] = {rf_nest, cur};
    seq = seq_of(a, items, 2);
    if (!seq)
      return NULL;
  }
  cur = seq;
  for (int i = depth - 1; i > s->si && cur; i--)
    cur = sched_with_child(a, p->stmts[i], p->stmts[i + 1], cur);
  if (!cur)
    return NULL;
  loom_stmt *sr = sched_with_child(a, p->stmts[s->si], p->stmts[s->si + 1], cur);
  if (!sr)
    return NULL;
  loom_block *sb = sr->u.realize.block; /* a fresh copy */
  int na = sb->n_alloc_buffers + s->red.n;
  loom_buffer **allocs = loom_arena_alloc(a, (size_t)na * sizeof *allocs);
  if (!allocs)
    return NULL;
  for (int i = 0; i < sb->n_alloc_buffers; i++)
    allocs[i] = sb->alloc_buffers[i];
  for (int i = 0; i < s->red.n; i++)
    allocs[sb->n_alloc_buffers + i] = s->rf_bufs[i];
  sb->alloc_buffers = allocs;
  sb->n_alloc_buffers = na;
  return sr;
}

static loom_status rfactor(rf_state *s) {
  sched_call *c = s->c;
  const loom_block *b = s->b;
  char why[640];
  const char *problem = sched_stage_pipeline_problem(&s->bp, s->si, why,
                                                     sizeof why);
  if (problem)
    return sched_fail(c, "%s", problem);
  TRY(check_reduction_block(s));
  loom_stmt *rfl = s->bp.stmts[s->rf];
  if (rfl->u.loop.kind != LOOM_FOR_SERIAL)
    return sched_fail(c, "loop '%s' must be serial; it is %s",
                      rfl->u.loop.var->name,
                      rfl->u.loop.kind == LOOM_FOR_PARALLEL     ? "parallel"
                      : rfl->u.loop.kind == LOOM_FOR_VECTORIZED ? "vectorized"
                      : rfl->u.loop.kind == LOOM_FOR_UNROLLED   ? "unrolled"
                                                               : "thread-bound");
  TRY(check_loops(s));
  problem = sched_match_reduction(b, &s->red, why, sizeof why);
  if (problem)
    return sched_fail(c, "%s", problem);
  for (int w = 0; w < b->n_writes; w++) {
    bool found = false;
    for (int k = 0; k < s->red.n; k++)
      found |= s->red.buffers[k] == b->writes[w].buffer;
    if (!found)
      return sched_fail(c, "block '%s' writes '%s', which its reduction does "
                           "not update",
                        b->name, b->writes[w].buffer->name);
  }
  int64_t fa = c->n_attrs > 0 ? c->attrs[0].i : 0;
  int ndim = s->red.buffers[0]->ndim;
  if (fa < -(ndim + 1) || fa > ndim)
    return sched_fail(c, "factor_axis %lld is out of range: buffer '%s' has "
                         "%d dimension(s), so it must lie in [%d, %d]",
                      (long long)fa, s->red.buffers[0]->name, ndim,
                      -(ndim + 1), ndim);
  s->factor_axis = (int)(fa < 0 ? fa + ndim + 1 : fa);

  for (int i = 0; i < s->red.n; i++)
    if (!(s->rf_bufs[i] = rf_buffer(s, s->red.buffers[i])))
      return sched_nomem(c);
  loom_var *add = NULL;
  loom_expr **rf_idx = NULL;
  loom_stmt *rf_block = make_rf_block(s, &add, &rf_idx);
  loom_stmt *wb = rf_block ? make_wb_block(s, add, rf_idx) : NULL;
  loom_stmt *rf_nest = rf_block ? wrap_rf_loops(s, rf_block) : NULL;
  loom_stmt *scope = wb && rf_nest ? rebuild_scope(s, rf_nest, wb) : NULL;
  if (!scope || !(c->mod = sched_replace(s->a, c->mod, &s->bp, s->si, scope)))
    return sched_nomem(c);
  return sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = s->bp.func,
                                      .block = rf_block->u.realize.block->name});
}

loom_status sched_apply_rfactor(sched_call *c) {
  rf_state s = {.c = c, .a = sched_arena(c->s)};
  sched_path p = {0};
  sched_stmt_list kids = {0};
  TRY(sched_input_loop(c, 0, &p));
  loom_stmt *loop = p.stmts[p.n - 1];
  loom_status st = LOOM_OK;
  if (!sched_collect_blocks(loop, &kids)) {
    st = sched_nomem(c);
    goto out;
  }
  if (kids.n != 1) {
    st = sched_fail(c, "loop '%s' must hold exactly one block; it holds %d",
                    loop->u.loop.var->name, kids.n);
    goto out;
  }
  s.bp.func = p.func;
  for (int i = 0; i < p.n; i++)
    if (!sched_path_push(&s.bp, p.stmts[i])) {
      st = sched_nomem(c);
      goto out;
    }
  /* Extend the path from the loop down to its block. */
  for (loom_stmt *cur = loop; cur != kids.items[0];) {
    loom_stmt *buf[4], **ch;
    int n = sched_kids_of(cur, &ch, buf);
    loom_stmt *next = NULL;
    for (int i = 0; i < n && !next; i++) {
      loom_stmt *ls[SCHED_MAX_DEPTH];
      int nl = 0;
      if (sched_find_under(ch[i], kids.items[0], ls, &nl))
        next = ch[i];
    }
    if (!next || !sched_path_push(&s.bp, next)) {
      st = next ? sched_nomem(c) : sched_fail(c, "internal: lost the block");
      goto out;
    }
    cur = next;
  }
  s.r = kids.items[0];
  s.b = s.r->u.realize.block;
  s.rf = p.n - 1;
  s.si = sched_scope_index(&s.bp, s.bp.n - 1);
  if (s.si < 0) {
    st = sched_fail(c, "block '%s' has no scope block", s.b->name);
    goto out;
  }
  st = rfactor(&s);
out:
  free(kids.items);
  sched_path_free(&p);
  sched_path_free(&s.bp);
  return st;
}
