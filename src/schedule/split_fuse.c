/* split, fuse and add_unit_loop: the primitives that change the loop nest
 * above a block and rewrite its bindings to match. Bindings are simplified
 * under the new loop ranges so the output reads as TVM prints it
 * (`v_i = T.axis.spatial(1024, i_0 * 16 + i_1)`). */
#include "schedule/rewrite.h"

#include <string.h>

static loom_stmt *new_loop(loom_arena *a, loom_var *v, loom_expr *min,
                           loom_expr *extent, loom_stmt *body, loom_loc loc) {
  loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_FOR, loc);
  if (!s)
    return NULL;
  s->u.loop.var = v;
  s->u.loop.min = min;
  s->u.loop.extent = extent;
  s->u.loop.kind = LOOM_FOR_SERIAL;
  s->u.loop.body = body;
  return s;
}

static bool is_plain(const loom_stmt *loop) {
  return loop->u.loop.n_annotations == 0 &&
         loop->u.loop.kind != LOOM_FOR_THREAD_BINDING;
}

static bool starts_at_zero(const loom_stmt *loop) {
  int64_t v;
  return loom_ir_is_const_int(loop->u.loop.min, &v) && v == 0;
}

/* start + e, or e when the loop starts at 0: the new loops start at 0 and
 * the old variable is recovered as its start plus their offset. (TVM
 * refuses split and fuse of such a loop; Loom takes it, as a user who
 * writes `for i in range(1, n)` expects.) */
static loom_expr *from_start(loom_arena *a, const loom_stmt *loop, loom_expr *e) {
  return !e || starts_at_zero(loop) ? e
                                    : loom_ir_binary(a, LOOM_EXPR_ADD, loop->u.loop.min, e);
}

/* ---- split -------------------------------------------------------------------- */

#define MAX_FACTORS 64

/* Under a guard, TVM's iterator maps keep the guarded sum whole inside a
 * binding, flattened within: `(k_0 * 32 + k_1 * 16) * 4 + j`. So each
 * binding is simplified with the old loop (v->vars[0]) still in it, then
 * the old loop becomes the flat sum (v->whole); where it was the only loop
 * of the binding, the result reads flat. */
static loom_expr *bind_guarded(realize_visitor *v, loom_expr *e) {
  /* Under a loop of dependent range the maps give up: the old loop
   * becomes the raw sum. Under an earlier guard, a binding without the old
   * loop keeps its form: the map's normal form keeps the guarded sum in it
   * whole, which normalizing would flatten. */
  if (v->around.n_dependent || (v->is_guarded && !sched_expr_uses(e, v->vars[0])))
    return e;
  const loom_var *old[1] = {v->vars[0]};
  loom_expr *flat[1] = {(loom_expr *)v->whole};
  sched_map m = {.vars = old, .values = flat, .n = 1};
  loom_expr *s = sched_normalize(v->a, v->ctx, e);
  return s ? sched_subst_expr(v->a, s, &m) : NULL;
}

/* The new loops' sum with symbolic factors, as TVM's iterator maps write
 * it: each loop times the product of the factors inside it, that product
 * whole (`i_0 * ((n + 9) // 10 * 2) + i_1 * 2 + i_2`). */
static loom_expr *scaled_sum(loom_arena *a, const loom_stmt *loop, loom_var *const *vars,
                             loom_expr *const *fx, int n) {
  loom_expr *scale[MAX_FACTORS], *sum = NULL;
  scale[n - 1] = NULL; /* 1 */
  for (int i = n - 2; i >= 0; i--) {
    int64_t x, y;
    loom_expr *f = fx[i + 1], *in = scale[i + 1];
    if (loom_ir_is_const_int(f, &x) && x == 1)
      scale[i] = in;
    else if (!in)
      scale[i] = f;
    else if (loom_ir_is_const_int(f, &x) && loom_ir_is_const_int(in, &y))
      scale[i] = loom_ir_int(a, f->dtype, x * y);
    else
      scale[i] = loom_ir_binary(a, LOOM_EXPR_MUL, f, in);
    if (!scale[i] && in)
      return NULL;
  }
  for (int i = 0; i < n; i++) {
    loom_expr *term = loom_ir_ref(a, vars[i]);
    if (term && scale[i])
      term = loom_ir_binary(a, LOOM_EXPR_MUL, term, scale[i]);
    sum = !term ? NULL : sum ? loom_ir_binary(a, LOOM_EXPR_ADD, sum, term) : term;
    if (!sum)
      return NULL;
  }
  return from_start(a, loop, sum);
}

/* As TVM's iterator maps, through opaque blocks, not into blocks with
 * iters. */
static loom_stmt *bind_guarded_realize(realize_visitor *v, loom_stmt *r) {
  if (r->u.realize.n_iter_values == 0)
    return sched_enter_realize(v, r);
  if (!sched_is_iter_map(v, r))
    return r; /* left as substituted */
  v->is_guarded = sched_has_predicate(r);
  return sched_map_bindings(v, r, bind_guarded);
}

loom_status sched_apply_split(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_loop(c, 0, &p));
  loom_stmt *loop = p.stmts[p.n - 1];
  const char *name = sched_stmt_name(loop);
  int n = c->n_inputs - 1;
  loom_status st = LOOM_OK;
  int64_t f[MAX_FACTORS];
  int none_at = -1;
  bool preserve = c->n_attrs < 1 || c->attrs[0].i;
  bool no_pred = c->n_attrs >= 2 && c->attrs[1].i;
  if (n < 1 || n > MAX_FACTORS) {
    st = sched_fail(c, "%d factors for loop '%s' (need 1 to %d)", n, name,
                    MAX_FACTORS);
    goto out;
  }
  for (int i = 0; i < n; i++) {
    bool is_none;
    if ((st = sched_input_int(c, i + 1, &f[i], &is_none)) != LOOM_OK)
      goto out;
    if (is_none && none_at >= 0) {
      st = sched_fail(c, "at most one factor may be None (factors %d and %d "
                         "are)", none_at, i);
      goto out;
    }
    if (is_none)
      none_at = i;
    else if (f[i] <= 0) {
      st = sched_fail(c, "every constant factor must be positive, but the "
                         "factor at position %d is %lld",
                      i, (long long)f[i]);
      goto out;
    }
  }
  if (!is_plain(loop)) {
    st = sched_fail(c, "loop '%s' has an annotation or a thread binding",
                    name);
    goto out;
  }
  loom_dtype t = loop->u.loop.var->dtype;
  int64_t extent = 0;
  bool const_extent = loom_ir_is_const_int(loop->u.loop.extent, &extent);
  int64_t prod = 1;
  for (int i = 0; i < n; i++)
    if (i != none_at) {
      if (prod > INT64_MAX / f[i]) {
        st = sched_fail(c, "the product of the factors overflows");
        goto out;
      }
      prod *= f[i];
    }
  loom_arith_ctx *ctx = sched_arith_for_path(&p, p.n - 1);
  if (!ctx) {
    st = sched_nomem(c);
    goto out;
  }
  /* The factors as expressions: a None on a symbolic extent is
   * (extent + prod - 1) // prod. */
  loom_expr *fx[MAX_FACTORS];
  bool is_divisible = false;
  if (none_at >= 0 && !const_extent) {
    fx[none_at] = sched_normalize(
        a, ctx,
        loom_ir_binary(a, LOOM_EXPR_FLOORDIV,
                       loom_ir_binary(a, LOOM_EXPR_ADD, loop->u.loop.extent,
                                      loom_ir_int(a, t, prod - 1)),
                       loom_ir_int(a, t, prod)));
    is_divisible = prod == 1;
    /* It may fold to a constant (the extent is bounded by outer loops);
     * f[none_at] then says whether it is a unit loop, as for the others. */
    int64_t v = 0;
    f[none_at] = fx[none_at] && loom_ir_is_const_int(fx[none_at], &v) ? v : 0;
  } else if (none_at >= 0) {
    f[none_at] = (extent + prod - 1) / prod;
    if (f[none_at] < 1)
      f[none_at] = 1;
    prod *= f[none_at];
  }
  if (const_extent && prod < extent) {
    loom_arith_ctx_free(ctx);
    st = sched_fail(c, "the product of the factors (%lld) is less than the "
                       "extent %lld of loop '%s'",
                    (long long)prod, (long long)extent, name);
    goto out;
  }
  /* An extent that depends on an outer loop (a triangular nest) must fit
   * in the factors at its largest. */
  loom_arith_interval ei = loom_arith_bound(ctx, loop->u.loop.extent);
  if (!const_extent && none_at < 0 && ei.is_bounded && ei.max > prod) {
    loom_arith_ctx_free(ctx);
    st = sched_fail(c, "the product of the factors (%lld) is less than the "
                       "largest extent %lld of loop '%s'",
                    (long long)prod, (long long)ei.max, name);
    goto out;
  }
  if (const_extent)
    is_divisible = prod == extent;
  for (int i = 0; i < n; i++)
    if (i != none_at || const_extent)
      fx[i] = loom_ir_int(a, t, f[i]);

  loom_var *vars[MAX_FACTORS] = {NULL};
  loom_expr *raw = NULL;
  for (int i = 0; i < n; i++) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s_%d", name, i);
    vars[i] = loom_ir_var(a, buf, t);
    if (!vars[i] || !fx[i])
      break;
    loom_expr *ref = loom_ir_ref(a, vars[i]);
    /* raw * 1 folds to raw, as TVM's operators fold constants. */
    int64_t one;
    bool is_one = loom_ir_is_const_int(fx[i], &one) && one == 1;
    raw = i == 0 ? ref
                 : loom_ir_binary(
                       a, LOOM_EXPR_ADD,
                       is_one ? raw : loom_ir_binary(a, LOOM_EXPR_MUL, raw, fx[i]),
                       ref);
    sched_arith_bind_range(ctx, vars[i], loom_ir_int(a, t, 0), fx[i]);
  }
  /* The old loop becomes the raw mixed-radix sum of the new ones
   * everywhere but in bindings, as TVM substitutes it; bindings are
   * simplified as TVM's iterator maps do (bind_guarded under a guard), with
   * unit loops dropped unless asked to stay. */
  loom_expr *value = from_start(a, loop, raw);
  loom_stmt *body = loop->u.loop.body;
  bool guarded = !no_pred && !is_divisible;
  /* The loops around the body, before and after the split. */
  sched_loop_stack before = {.n = 0}, after;
  sched_loop_push_path(&before, &p, p.n - 1);
  after = before;
  sched_loop_push(&before, loop->u.loop.var, loop->u.loop.min, loop->u.loop.extent);
  for (int i = 0; i < n; i++)
    sched_loop_push(&after, vars[i], NULL, fx[i]);
  if (guarded && value) {
    loom_var *old_var[1] = {loop->u.loop.var};
    sched_arith_bind_loop(ctx, loop);
    realize_visitor w = {.fn = bind_guarded_realize, .a = a, .ctx = ctx,
                         .vars = old_var, .n_vars = 1,
                         .whole = const_extent ? sched_normalize(a, ctx, value)
                                               : scaled_sum(a, loop, vars, fx, n)};
    w.around = before;
    body = w.whole ? sched_visit_realizes(&w, body) : NULL;
  }
  const loom_var *old[1] = {loop->u.loop.var};
  sched_map m = {.vars = old, .values = &value, .n = 1};
  body = value && body ? sched_subst_stmt(a, body, &m) : NULL;
  if (body && !guarded)
    body = sched_simplify_bindings(a, ctx, &after, body, NULL, -1, preserve);
  if (body && !preserve)
    body = sched_drop_unit_iters(a, ctx, body);
  if (body && guarded) {
    loom_expr *pred = loom_ir_binary(a, LOOM_EXPR_LT, raw, loop->u.loop.extent);
    if (pred)
      pred->dtype = LOOM_BOOL;
    body = pred ? sched_append_predicate(a, body, pred) : NULL;
  }
  for (int i = n - 1; i >= 0 && body; i--)
    body = new_loop(a, vars[i], loom_ir_int(a, t, 0), fx[i], body, loop->loc);
  loom_arith_ctx_free(ctx);
  c->mod = body ? sched_replace(a, c->mod, &p, p.n - 1, body) : NULL;
  if (!c->mod) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < n && st == LOOM_OK; i++)
    st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_LOOP, .func = p.func,
                                      .loop = vars[i]});
out:
  sched_path_free(&p);
  return st;
}

/* ---- fuse ---------------------------------------------------------------------- */

loom_status sched_apply_fuse(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  int n = c->n_inputs;
  if (n < 1 || n > MAX_FACTORS)
    return sched_fail(c, "%d loops given (need 1 to %d)", n, MAX_FACTORS);
  bool preserve = c->n_attrs < 1 || c->attrs[0].i;
  sched_path p = {0};
  TRY(sched_input_loop(c, 0, &p));
  loom_status st = LOOM_OK;
  int top = p.n - 1;
  loom_stmt *loops[MAX_FACTORS];
  loops[0] = p.stmts[top];
  for (int i = 1; i < n; i++) {
    sched_path q = {0};
    if ((st = sched_input_loop(c, i, &q)) != LOOM_OK) {
      sched_path_free(&q);
      goto out;
    }
    loops[i] = q.stmts[q.n - 1];
    sched_path_free(&q);
    if (loops[i - 1]->u.loop.body != loops[i]) {
      st = sched_fail(c, "loop '%s' is not the only child of loop '%s'; "
                         "fused loops must be directly nested, outer first",
                      sched_stmt_name(loops[i]), sched_stmt_name(loops[i - 1]));
      goto out;
    }
  }
  loom_dtype t = loops[0]->u.loop.var->dtype;
  loom_buf name;
  loom_buf_init(&name);
  for (int i = 0; i < n; i++) {
    if (!is_plain(loops[i])) {
      st = sched_fail(c, "loop '%s' has an annotation or a thread binding",
                      sched_stmt_name(loops[i]));
      break;
    }
    for (int j = 0; j < i; j++)
      if (sched_expr_uses(loops[i]->u.loop.extent, loops[j]->u.loop.var) ||
          sched_expr_uses(loops[i]->u.loop.min, loops[j]->u.loop.var)) {
        st = sched_fail(c, "the %s of loop '%s' depends on loop '%s'",
                        sched_expr_uses(loops[i]->u.loop.extent, loops[j]->u.loop.var)
                            ? "extent" : "start",
                        sched_stmt_name(loops[i]), sched_stmt_name(loops[j]));
        break;
      }
    if (st != LOOM_OK)
      break;
    loom_buf_printf(&name, "%s_", sched_stmt_name(loops[i]));
  }
  loom_buf_puts(&name, "fused");
  if (st != LOOM_OK || name.has_failed) {
    loom_buf_free(&name);
    if (st == LOOM_OK)
      st = sched_nomem(c);
    goto out;
  }
  loom_var *fv = loom_ir_var(a, name.data, t);
  loom_buf_free(&name);
  loom_arith_ctx *ctx = sched_arith_for_path(&p, top);
  if (!ctx || !fv) {
    loom_arith_ctx_free(ctx);
    st = sched_nomem(c);
    goto out;
  }
  /* The fused extent and, for each loop, its value recovered from the fused
   * variable: fused // inner for the outermost, fused % (e * inner) // inner
   * below it (no division by a unit inner product); a loop of extent one is
   * 0, as TVM makes it whatever preserve_unit_iters says. */
  loom_expr *inner = loom_ir_int(a, t, 1);
  const loom_var *old[MAX_FACTORS];
  loom_expr *vals[MAX_FACTORS];
  loom_expr *fref = loom_ir_ref(a, fv);
  for (int i = n - 1; i >= 0 && inner; i--) {
    loom_expr *e = loops[i]->u.loop.extent;
    int64_t ic, ec;
    bool unit_inner = loom_ir_is_const_int(inner, &ic) && ic == 1;
    loom_expr *v;
    if (loom_ir_is_const_int(e, &ec) && ec == 1)
      v = loom_ir_int(a, t, 0);
    else if (i == 0)
      v = unit_inner ? fref : loom_ir_binary(a, LOOM_EXPR_FLOORDIV, fref, inner);
    else {
      loom_expr *span = sched_normalize(
          a, ctx, loom_ir_binary(a, LOOM_EXPR_MUL, e, inner));
      v = loom_ir_binary(a, LOOM_EXPR_FLOORMOD, fref, span);
      if (!unit_inner)
        v = loom_ir_binary(a, LOOM_EXPR_FLOORDIV, v, inner);
    }
    old[i] = loops[i]->u.loop.var;
    vals[i] = from_start(a, loops[i], v);
    inner = sched_normalize(a, ctx, loom_ir_binary(a, LOOM_EXPR_MUL, e,
                                                       inner));
  }
  sched_arith_bind_range(ctx, fv, loom_ir_int(a, t, 0), inner);
  for (int i = 0; i < n && inner; i++)
    vals[i] = vals[i] ? sched_normalize(a, ctx, vals[i]) : NULL;
  sched_map m = {.vars = old, .values = vals, .n = n};
  loom_stmt *body = NULL;
  bool ok = inner != NULL;
  for (int i = 0; i < n; i++)
    ok = ok && vals[i];
  if (ok)
    body = sched_subst_stmt(a, loops[n - 1]->u.loop.body, &m);
  loom_var *fvs[1] = {fv};
  sched_loop_stack around = {.n = 0};
  sched_loop_push_path(&around, &p, top);
  sched_loop_push(&around, fv, NULL, inner);
  if (body)
    body = sched_simplify_bindings(a, ctx, &around, body, fvs, 1, preserve);
  if (body && !preserve)
    body = sched_drop_unit_iters(a, ctx, body);
  loom_arith_ctx_free(ctx);
  if (body)
    body = new_loop(a, fv, loom_ir_int(a, t, 0), inner, body, loops[0]->loc);
  c->mod = body ? sched_replace(a, c->mod, &p, top, body) : NULL;
  if (!c->mod) {
    st = sched_nomem(c);
    goto out;
  }
  st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_LOOP, .func = p.func,
                                    .loop = fv});
out:
  sched_path_free(&p);
  return st;
}

/* ---- add_unit_loop ----------------------------------------------------------- */

loom_status sched_apply_add_unit_loop(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  bool is_loop;
  TRY(sched_input_target(c, 0, &p, &is_loop));
  loom_stmt *target = p.stmts[p.n - 1];
  loom_status st = LOOM_OK;
  if (!is_loop && sched_scope_index(&p, p.n - 1) < 0) {
    st = sched_fail(c, "block '%s' is the root block", sched_stmt_name(target));
    goto out;
  }
  loom_var *u = loom_ir_var(a, "u", LOOM_INT32);
  loom_stmt *loop = u ? new_loop(a, u, loom_ir_int(a, LOOM_INT32, 0),
                                 loom_ir_int(a, LOOM_INT32, 1), target,
                                 target->loc)
                      : NULL;
  c->mod = loop ? sched_replace(a, c->mod, &p, p.n - 1, loop) : NULL;
  if (!c->mod) {
    st = sched_nomem(c);
    goto out;
  }
  st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_LOOP, .func = p.func,
                                    .loop = u});
out:
  sched_path_free(&p);
  return st;
}
