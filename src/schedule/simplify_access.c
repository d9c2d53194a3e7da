/* Simplifying a block's accesses after a primitive substituted into them:
 * each index alone under an arithmetic context, or by iterator maps, as
 * TVM's BlockBufferAccessSimplifier does after transform_block_layout. */
#include "schedule/sched_impl.h"

#define MAX_CONDS 16
#define MAX_DIMS 32

typedef struct access_simplifier {
  loom_arena *a;
  loom_arith_ctx *ctx;
  const loom_arith_relax *iters; /* NULL: each index alone */
  int n_iters;
  /* The conditions of the if_then_else branches around the access that
   * use the iters: TVM detects the maps under them first. */
  const loom_expr *conds[MAX_CONDS];
  int n_conds;
  bool is_nomem;
} access_simplifier;

static bool uses_iter(const access_simplifier *as, const loom_expr *e) {
  for (int i = 0; i < as->n_iters; i++)
    if (loom_ir_expr_uses(e, as->iters[i].var))
      return true;
  return false;
}

static int find_iter(const loom_arith_relax *iters, int n, const loom_expr *e) {
  if (e->kind != LOOM_EXPR_VAR)
    return -1;
  for (int i = 0; i < n; i++)
    if (iters[i].var == e->u.var)
      return i;
  return -1;
}

/* One conjunct that bounds an iter by a constant narrows its range, as
 * TVM's detection takes such a bound (a bound of anything else is a
 * constraint on a fused or split iter: Loom's maps take only upper ones,
 * and TVM's form for an index that subtracts the lower bound is the one
 * without it, so those are left out). False when the conjunct is not a
 * comparison, which makes TVM detect without the conditions. */
static bool narrow(const loom_arith_relax *iters, int n, int64_t *lo, int64_t *hi,
                   const loom_expr *e, int depth) {
  if (depth > 32)
    return false;
  if (e->kind == LOOM_EXPR_AND)
    return narrow(iters, n, lo, hi, e->u.bin.a, depth + 1) &&
           narrow(iters, n, lo, hi, e->u.bin.b, depth + 1);
  bool is_lt = e->kind == LOOM_EXPR_LT || e->kind == LOOM_EXPR_LE;
  if (!is_lt && e->kind != LOOM_EXPR_GT && e->kind != LOOM_EXPR_GE)
    return false;
  bool is_eq = e->kind == LOOM_EXPR_LE || e->kind == LOOM_EXPR_GE;
  int64_t c;
  int k = find_iter(iters, n, e->u.bin.a);
  bool iter_left = k >= 0 && loom_ir_is_const_int(e->u.bin.b, &c);
  if (!iter_left) {
    k = find_iter(iters, n, e->u.bin.b);
    if (k < 0 || !loom_ir_is_const_int(e->u.bin.a, &c))
      return true;
  }
  /* iter < c, iter <= c, c > iter, c >= iter bound it above. */
  if (is_lt == iter_left) {
    int64_t u = is_eq ? c + 1 : c;
    hi[k] = u < hi[k] ? u : hi[k];
  } else {
    int64_t l = is_eq ? c : c + 1;
    lo[k] = l > lo[k] ? l : lo[k];
  }
  return true;
}

static loom_status detect(const access_simplifier *as, loom_expr **es, int n,
                          const loom_arith_relax *iters, loom_iter_map *map) {
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_arith_iter_map_detect(as->a, es, n, iters, as->n_iters, NULL,
                                              LOOM_ITER_MAP_SURJECTIVE, map, &d);
  loom_diag_free(&d);
  return st;
}

/* The map of es[0..n): under the conditions where they narrow the iters,
 * else without them. */
static loom_status detect_map(const access_simplifier *as, loom_expr **es, int n,
                              loom_iter_map *map) {
  loom_arith_relax narrowed[MAX_DIMS];
  int64_t lo[MAX_DIMS], hi[MAX_DIMS];
  bool is_narrowed = as->n_conds > 0 && as->n_iters <= MAX_DIMS;
  for (int i = 0; is_narrowed && i < as->n_iters; i++) {
    int64_t mn = 0, ext = 0;
    narrowed[i] = as->iters[i];
    is_narrowed = loom_ir_is_const_int(as->iters[i].range.min, &mn) &&
                  loom_ir_is_const_int(as->iters[i].range.extent, &ext);
    lo[i] = mn;
    hi[i] = mn + ext;
  }
  for (int k = 0; is_narrowed && k < as->n_conds; k++)
    is_narrowed = narrow(narrowed, as->n_iters, lo, hi, as->conds[k], 0);
  for (int i = 0; is_narrowed && i < as->n_iters; i++) {
    loom_dtype t = as->iters[i].var->dtype;
    is_narrowed = hi[i] > lo[i];
    narrowed[i].range = (loom_range){loom_ir_int(as->a, t, lo[i]),
                                     loom_ir_int(as->a, t, hi[i] - lo[i])};
  }
  if (is_narrowed) {
    loom_status st = detect(as, es, n, narrowed, map);
    if (st != LOOM_ERROR)
      return st;
  }
  return detect(as, es, n, as->iters, map);
}

/* The tuple es[0..n) as an iterator map in normal form, or es itself. An
 * index that is a variable stays one where the map makes it a constant (an
 * iter of extent 1), as TVM's non_trivial_only keeps it. */
static loom_expr **by_map(access_simplifier *as, loom_expr **es, int n) {
  loom_iter_map map;
  loom_status st = detect_map(as, es, n, &map);
  if (st == LOOM_ERROR)
    return es;
  loom_expr **out = st == LOOM_OK ? loom_arena_alloc(as->a, (size_t)(n ? n : 1) * sizeof *out)
                                  : NULL;
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++) {
    if (!(out[i] = loom_arith_iter_sum_normal(as->a, &map.sums[i], es[i]->dtype)))
      return NULL;
    if (out[i]->kind == LOOM_EXPR_INT && es[i]->kind == LOOM_EXPR_VAR)
      out[i] = es[i];
  }
  return out;
}

static loom_expr **simplify_all(access_simplifier *as, loom_expr **es, int n) {
  if (as->iters)
    return by_map(as, es, n);
  loom_expr **out = loom_arena_alloc(as->a, (size_t)(n ? n : 1) * sizeof *out);
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++)
    if (!(out[i] = loom_arith_simplify(as->a, as->ctx, es[i])))
      return NULL;
  return out;
}

static loom_expr *on_load(void *ctx, loom_expr *e) {
  access_simplifier *as = ctx;
  if (e->kind != LOOM_EXPR_LOAD)
    return e;
  loom_expr **idx = simplify_all(as, e->u.load.indices, e->u.load.n_indices);
  loom_expr *n = idx ? loom_arena_dup(as->a, e, sizeof *e) : NULL;
  if (!n)
    return NULL;
  n->u.load.indices = idx;
  return n;
}

static loom_stmt *on_store(void *ctx, loom_stmt *s) {
  access_simplifier *as = ctx;
  if (s->kind != LOOM_STMT_STORE)
    return s;
  loom_expr **idx = simplify_all(as, s->u.store.indices, s->u.store.n_indices);
  loom_stmt *n = idx ? loom_arena_dup(as->a, s, sizeof *s) : NULL;
  if (!n)
    return NULL;
  n->u.store.indices = idx;
  return n;
}

static loom_buffer_region *regions(access_simplifier *as, const loom_buffer_region *rs, int n) {
  loom_arena *a = as->a;
  loom_buffer_region *out = loom_arena_alloc(a, (size_t)(n ? n : 1) * sizeof *out);
  if (!out)
    return NULL;
  for (int i = 0; i < n; i++) {
    int nr = rs[i].n_ranges;
    loom_expr *mins[MAX_DIMS], **smin = NULL;
    out[i] = rs[i];
    out[i].ranges = loom_arena_alloc(a, (size_t)(nr ? nr : 1) * sizeof *out[i].ranges);
    if (!out[i].ranges)
      return NULL;
    if (as->iters && nr <= MAX_DIMS) {
      for (int d = 0; d < nr; d++)
        mins[d] = rs[i].ranges[d].min;
      if (!(smin = by_map(as, mins, nr)))
        return NULL;
    }
    for (int d = 0; d < nr; d++) {
      out[i].ranges[d].min =
          smin ? smin[d] : loom_arith_simplify(a, as->ctx, rs[i].ranges[d].min);
      out[i].ranges[d].extent = loom_arith_simplify(a, as->ctx, rs[i].ranges[d].extent);
      if (!out[i].ranges[d].min || !out[i].ranges[d].extent)
        return NULL;
    }
  }
  return out;
}

static loom_block *on_block(void *ctx, const loom_block *old, loom_block *b) {
  access_simplifier *as = ctx;
  (void)old;
  loom_block *c = loom_arena_dup(as->a, b, sizeof *b);
  if (!c)
    return NULL;
  c->reads = regions(as, b->reads, b->n_reads);
  c->writes = regions(as, b->writes, b->n_writes);
  return c->reads && c->writes ? c : NULL;
}

static loom_ir_mutator mutator(access_simplifier *as);

static loom_expr *branch(access_simplifier *as, const loom_expr *cond, loom_expr *e) {
  loom_ir_mutator m = mutator(as);
  bool is_pushed = cond && as->n_conds < MAX_CONDS && uses_iter(as, cond);
  if (is_pushed)
    as->conds[as->n_conds++] = cond;
  loom_expr *r = loom_ir_mutate_expr(as->a, &m, e);
  if (is_pushed)
    as->n_conds--;
  return r;
}

/* An if_then_else: its true value's accesses under its condition. The
 * false value's condition is a negation, which TVM's detection does not
 * take, so it is simplified without one. */
static loom_expr *on_if_then_else(void *ctx, loom_expr *e) {
  access_simplifier *as = ctx;
  if (!as->iters || e->kind != LOOM_EXPR_CALL || e->u.call.op != LOOM_OP_IF_THEN_ELSE ||
      e->u.call.n_args != 3 || as->is_nomem)
    return NULL;
  loom_expr *c = loom_arena_dup(as->a, e, sizeof *e);
  loom_expr **args = loom_arena_alloc(as->a, 3 * sizeof *args);
  if (c && args) {
    args[0] = branch(as, NULL, e->u.call.args[0]);
    args[1] = branch(as, args[0], e->u.call.args[1]);
    args[2] = branch(as, NULL, e->u.call.args[2]);
  }
  if (!c || !args || !args[0] || !args[1] || !args[2]) {
    as->is_nomem = true;
    return NULL;
  }
  c->u.call.args = args;
  return c;
}

static loom_ir_mutator mutator(access_simplifier *as) {
  return (loom_ir_mutator){.expr_pre = on_if_then_else,
                           .expr_post = on_load,
                           .stmt_post = on_store,
                           .block_post = on_block,
                           .ctx = as};
}

static loom_stmt *simplify(access_simplifier *as, loom_stmt *s) {
  loom_ir_mutator m = mutator(as);
  loom_stmt *r = loom_ir_mutate_stmt(as->a, &m, s);
  return as->is_nomem ? NULL : r;
}

loom_stmt *sched_simplify_accesses(loom_arena *a, loom_arith_ctx *ctx, loom_stmt *s) {
  access_simplifier as = {.a = a, .ctx = ctx};
  return simplify(&as, s);
}

loom_stmt *sched_simplify_accesses_by_map(loom_arena *a, loom_arith_ctx *ctx, loom_stmt *s,
                                          const loom_arith_relax *iters, int n) {
  access_simplifier as = {.a = a, .ctx = ctx, .iters = iters, .n_iters = n};
  return simplify(&as, s);
}
