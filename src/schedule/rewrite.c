/* Rewrites over the block realizes of a subtree, shared by the loop
 * primitives: re-simplifying bindings after a substitution, and appending
 * a predicate to the outermost blocks under a loop. */
#include "schedule/rewrite.h"

#include <string.h>

static loom_stmt *realize_pre(void *ctx, loom_stmt *s);
static loom_stmt *realize_post(void *ctx, loom_stmt *s);

/* r with the realizes in its block's init and body visited. */
static loom_stmt *enter_block(realize_visitor *v, loom_stmt *r) {
  loom_block *b = r->u.realize.block;
  loom_ir_mutator m = {.stmt_pre = realize_pre, .stmt_post = realize_post, .ctx = v};
  loom_stmt *body = loom_ir_mutate_stmt(v->a, &m, b->body);
  loom_stmt *init = b->init ? loom_ir_mutate_stmt(v->a, &m, b->init) : NULL;
  if (!body || (b->init && !init))
    return NULL;
  if (body == b->body && init == b->init)
    return r;
  loom_block *nb = loom_arena_dup(v->a, b, sizeof *b);
  loom_stmt *nr = loom_arena_dup(v->a, r, sizeof *r);
  if (!nb || !nr)
    return NULL;
  nb->body = body;
  nb->init = init;
  nr->u.realize.block = nb;
  return nr;
}

loom_stmt *sched_enter_realize(realize_visitor *v, loom_stmt *r) {
  return enter_block(v, r);
}

/* Loops bind their constant ranges in v->ctx (when set) on the way down;
 * a realize goes through fn, then (when v->descend_blocks) the realizes in
 * its block are visited. */
static loom_stmt *realize_pre(void *ctx, loom_stmt *s) {
  realize_visitor *v = ctx;
  if (s->kind == LOOM_STMT_FOR)
    sched_loop_push(&v->around, s->u.loop.var, s->u.loop.min, s->u.loop.extent);
  if (s->kind == LOOM_STMT_FOR && v->ctx)
    sched_arith_bind_loop(v->ctx, s);
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return NULL;
  if (v->has_failed)
    return s;
  loom_stmt *r = v->fn(v, s);
  if (r && v->descend_blocks)
    r = enter_block(v, r);
  v->has_failed |= !r;
  return r ? r : s;
}

static bool is_dependent(const sched_loop_stack *s, const loom_expr *min,
                         const loom_expr *extent) {
  for (int i = 0; i < s->n; i++)
    if ((min && sched_expr_uses(min, s->loops[i])) ||
        (extent && sched_expr_uses(extent, s->loops[i])))
      return true;
  return false;
}

bool sched_loop_push(sched_loop_stack *s, const loom_var *v, const loom_expr *min,
                     const loom_expr *extent) {
  if (s->n == SCHED_MAX_DEPTH)
    return false;
  s->n_dependent += is_dependent(s, min, extent);
  s->loops[s->n++] = v;
  return true;
}

void sched_loop_push_path(sched_loop_stack *s, const sched_path *p, int depth) {
  int top = depth < p->n ? depth : p->n;
  while (top > 0 && p->stmts[top - 1]->kind != LOOM_STMT_BLOCK_REALIZE)
    top--;
  for (int i = top; i < depth && i < p->n; i++)
    if (p->stmts[i]->kind == LOOM_STMT_FOR)
      sched_loop_push(s, p->stmts[i]->u.loop.var, p->stmts[i]->u.loop.min,
                      p->stmts[i]->u.loop.extent);
}

static loom_stmt *realize_post(void *ctx, loom_stmt *s) {
  realize_visitor *v = ctx;
  sched_loop_stack *l = &v->around;
  if (s->kind == LOOM_STMT_FOR && l->n > 0 && l->loops[l->n - 1] == s->u.loop.var) {
    l->n--;
    l->n_dependent -= is_dependent(l, s->u.loop.min, s->u.loop.extent);
  }
  return s;
}

/* Rebuilds s with every realize passed through fn. */
loom_stmt *sched_visit_realizes(realize_visitor *v, loom_stmt *s) {
  v->has_failed = false;
  loom_ir_mutator m = {.stmt_pre = realize_pre, .stmt_post = realize_post, .ctx = v};
  loom_stmt *r = loom_ir_mutate_stmt(v->a, &m, s);
  return v->has_failed ? NULL : r;
}

static bool uses_any(const loom_expr *e, loom_var *const *vars, int n) {
  for (int i = 0; i < n; i++)
    if (sched_expr_uses(e, vars[i]))
      return true;
  return false;
}

static bool is_int(const loom_expr *e, int64_t v) {
  return e->kind == LOOM_EXPR_INT && e->u.int_value == v;
}

/* Whether e holds an operation on two constants, or adds 0 or multiplies by
 * 0 or 1: what substituting a constant for a loop variable (a fused unit
 * loop's 0) leaves unfolded. */
static bool has_constant_op(const loom_expr *e) {
  if (e->kind < LOOM_EXPR_ADD || e->kind > LOOM_EXPR_MAX)
    return e->kind == LOOM_EXPR_CAST && has_constant_op(e->u.unary.a);
  const loom_expr *x = e->u.bin.a, *y = e->u.bin.b;
  if ((x->kind == LOOM_EXPR_INT && y->kind == LOOM_EXPR_INT) ||
      (e->kind == LOOM_EXPR_ADD && (is_int(x, 0) || is_int(y, 0))) ||
      (e->kind == LOOM_EXPR_SUB && is_int(y, 0)) ||
      (e->kind == LOOM_EXPR_MUL && (is_int(x, 0) || is_int(y, 0) || is_int(x, 1) ||
                                    is_int(y, 1))))
    return true;
  return has_constant_op(x) || has_constant_op(y);
}

loom_stmt *sched_map_bindings(realize_visitor *v, loom_stmt *r,
                              loom_expr *(*f)(realize_visitor *, loom_expr *)) {
  int n = r->u.realize.n_iter_values;
  loom_expr **vals = NULL;
  for (int i = 0; i < n; i++) {
    loom_expr *e = r->u.realize.iter_values[i];
    loom_expr *s = f(v, e);
    if (!s)
      return NULL;
    if (s == e)
      continue;
    if (!vals) {
      vals = loom_arena_alloc(v->a, (size_t)n * sizeof *vals);
      if (!vals)
        return NULL;
      memcpy(vals, r->u.realize.iter_values, (size_t)n * sizeof *vals);
    }
    vals[i] = s;
  }
  if (!vals)
    return r;
  loom_stmt *c = loom_arena_dup(v->a, r, sizeof *r);
  if (c)
    c->u.realize.iter_values = vals;
  return c;
}

static loom_expr *simplify_binding(realize_visitor *v, loom_expr *e) {
  if (v->n_vars >= 0 && !uses_any(e, v->vars, v->n_vars) && !has_constant_op(e))
    return e;
  return sched_normalize(v->a, v->ctx, e);
}

#define MAX_MAP_LOOPS 64

typedef struct loop_vars {
  loom_arith_relax iters[MAX_MAP_LOOPS];
  int n;
  bool is_unknown; /* a loop of symbolic extent, or too many loops */
  realize_visitor *v;
} loop_vars;

/* Notes each variable of a binding the context bounds: a loop. */
static loom_visit note_loop(void *ctx, loom_expr *e) {
  loop_vars *l = ctx;
  if (e->kind != LOOM_EXPR_VAR || l->is_unknown)
    return LOOM_VISIT_GO;
  for (int i = 0; i < l->n; i++)
    if (l->iters[i].var == e->u.var)
      return LOOM_VISIT_GO;
  loom_arith_interval r = loom_arith_bound(l->v->ctx, e);
  if (!r.is_bounded)
    return LOOM_VISIT_GO; /* not a loop: a parameter or an outer block's iter */
  if (r.max >= SCHED_SYMBOLIC_MAX || l->n == MAX_MAP_LOOPS) {
    l->is_unknown = true;
    return LOOM_VISIT_GO;
  }
  loom_range range = {loom_ir_int(l->v->a, e->dtype, r.min),
                      loom_ir_int(l->v->a, e->dtype, r.max - r.min + 1)};
  l->iters[l->n++] = (loom_arith_relax){e->u.var, range};
  return LOOM_VISIT_GO;
}

static loom_status detect_loops(realize_visitor *v, const loom_stmt *r, const loop_vars *l,
                                const loom_expr *pred, loom_iter_map *map, loom_diag *d) {
  loom_expr *const *b = r->u.realize.iter_values;
  int n = r->u.realize.n_iter_values;
  if (v->keep_units)
    return loom_arith_iter_map_detect_units(v->a, b, n, l->iters, l->n, pred,
                                            LOOM_ITER_MAP_SURJECTIVE, map, d);
  return loom_arith_iter_map_detect(v->a, b, n, l->iters, l->n, pred, LOOM_ITER_MAP_SURJECTIVE,
                                    map, d);
}

/* Whether the bindings of r, together, are an iterator map over the loops
 * (under its predicate, else without it), the map in *map: TVM's
 * IterMapSimplify rewrites them only then, to the map's normal form, and
 * otherwise leaves them as substituted. True with map->sums NULL where
 * Loom's maps cannot say (a loop of symbolic extent). */
static bool is_iter_map(realize_visitor *v, const loom_stmt *r, loom_iter_map *map) {
  map->sums = NULL;
  if (v->around.n_dependent)
    return false;
  loop_vars l = {.v = v};
  int n = r->u.realize.n_iter_values;
  loom_ir_visitor vis = {.expr_pre = note_loop, .ctx = &l};
  for (int i = 0; i < n; i++)
    loom_ir_visit_expr(&vis, r->u.realize.iter_values[i]);
  bool is_map = true;
  if (!l.is_unknown) {
    const loom_expr *pred = sched_has_predicate(r) ? r->u.realize.predicate : NULL;
    loom_diag d;
    loom_diag_init(&d);
    loom_status st = detect_loops(v, r, &l, pred, map, &d);
    if (st == LOOM_ERROR && pred) {
      loom_diag_free(&d);
      loom_diag_init(&d);
      st = detect_loops(v, r, &l, NULL, map, &d);
    }
    loom_diag_free(&d);
    is_map = st != LOOM_ERROR;
    if (st != LOOM_OK)
      map->sums = NULL;
  }
  return is_map;
}

bool sched_is_iter_map(realize_visitor *v, const loom_stmt *r) {
  loom_iter_map map;
  return is_iter_map(v, r, &map);
}

static loom_stmt *simplify_realize(realize_visitor *v, loom_stmt *r) {
  if (r->u.realize.n_iter_values == 0 && !v->descend_blocks)
    return enter_block(v, r);
  loom_iter_map map;
  if (!is_iter_map(v, r, &map))
    return r;
  if (!map.sums)
    return sched_map_bindings(v, r, simplify_binding);
  int n = r->u.realize.n_iter_values;
  loom_expr **vals = loom_arena_alloc(v->a, (size_t)(n ? n : 1) * sizeof *vals);
  loom_stmt *c = vals ? loom_arena_dup(v->a, r, sizeof *r) : NULL;
  if (!c)
    return NULL;
  for (int i = 0; i < n; i++)
    if (!(vals[i] = loom_arith_iter_sum_normal(v->a, &map.sums[i],
                                               r->u.realize.iter_values[i]->dtype)))
      return NULL;
  c->u.realize.iter_values = vals;
  return c;
}

loom_stmt *sched_simplify_bindings(loom_arena *a, loom_arith_ctx *ctx,
                                   const sched_loop_stack *around, loom_stmt *s,
                                   loom_var *const *vars, int n_vars, bool keep_units) {
  /* Every binding: TVM's way, which stops at blocks with iters */
  realize_visitor v = {.fn = simplify_realize, .a = a, .ctx = ctx,
                       .descend_blocks = n_vars >= 0, .vars = vars,
                       .n_vars = n_vars, .keep_units = keep_units};
  if (around)
    v.around = *around;
  return sched_visit_realizes(&v, s);
}

/* A loop variable the context pins to one value becomes that value. */
static loom_expr *pin_unit(void *ctx, loom_expr *e) {
  realize_visitor *v = ctx;
  if (e->kind != LOOM_EXPR_VAR)
    return NULL;
  loom_arith_interval r = loom_arith_bound(v->ctx, e);
  if (!r.is_bounded || r.min != r.max)
    return NULL;
  loom_expr *k = loom_ir_int(v->a, e->dtype, r.min);
  v->has_failed |= !k;
  return k ? k : e;
}

/* e with the zeros a pinned unit loop leaves (0 * 8, x + 0) folded away
 * and nothing else changed: TVM's maps leave a unit iter out of the form
 * they give, they do not give another form. */
static loom_expr *fold_zeros(loom_arena *a, loom_expr *e) {
  if (e->kind != LOOM_EXPR_ADD && e->kind != LOOM_EXPR_SUB && e->kind != LOOM_EXPR_MUL)
    return e;
  loom_expr *x = fold_zeros(a, e->u.bin.a), *y = x ? fold_zeros(a, e->u.bin.b) : NULL;
  if (!y)
    return NULL;
  if (e->kind == LOOM_EXPR_MUL && (is_int(x, 0) || is_int(y, 0)))
    return loom_ir_int(a, e->dtype, 0);
  if (e->kind == LOOM_EXPR_ADD && is_int(x, 0))
    return y;
  if (e->kind != LOOM_EXPR_MUL && is_int(y, 0))
    return x;
  if (x == e->u.bin.a && y == e->u.bin.b)
    return e;
  return loom_ir_binary(a, e->kind, x, y);
}

static loom_expr *drop_units(realize_visitor *v, loom_expr *e) {
  loom_expr *z = loom_ir_rewrite_expr(v->a, e, pin_unit, v);
  if (!z || v->has_failed)
    return NULL;
  return z == e ? e : fold_zeros(v->a, z);
}

static loom_stmt *drop_unit_iters(realize_visitor *v, loom_stmt *r) {
  /* TVM simplifies through opaque blocks, not into blocks with iters, and
   * drops unit loops only from bindings that form an iterator map */
  if (r->u.realize.n_iter_values == 0)
    return enter_block(v, r);
  if (!sched_is_iter_map(v, r))
    return r;
  return sched_map_bindings(v, r, drop_units);
}

loom_stmt *sched_drop_unit_iters(loom_arena *a, loom_arith_ctx *ctx,
                                 loom_stmt *s) {
  realize_visitor v = {.fn = drop_unit_iters, .a = a, .ctx = ctx};
  return sched_visit_realizes(&v, s);
}

static loom_stmt *append_predicate(realize_visitor *v, loom_stmt *r) {
  loom_stmt *c = loom_arena_alloc(v->a, sizeof *c);
  if (!c)
    return NULL;
  *c = *r;
  loom_expr *old = r->u.realize.predicate;
  int64_t t;
  if (!old || (loom_ir_is_const_int(old, &t) && t))
    c->u.realize.predicate = v->pred;
  else
    c->u.realize.predicate = loom_ir_binary(v->a, LOOM_EXPR_AND, old, v->pred);
  return c->u.realize.predicate ? c : NULL;
}

loom_stmt *sched_append_predicate(loom_arena *a, loom_stmt *s,
                                  loom_expr *pred) {
  realize_visitor v = {.fn = append_predicate, .a = a, .pred = pred};
  return sched_visit_realizes(&v, s);
}
