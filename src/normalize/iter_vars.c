/* iter-vars: a block written without iter vars that uses the variables of
 * the loops around it directly (`with T.block("b"): A[i, j] = 1`) gets one
 * iter var per such loop, bound to the loop variable, and its body uses the
 * iter vars instead. The kind of each comes from the exact dependence
 * analysis, not from the shape of the body: spatial when no two iterations
 * of the loop touch an element one of them writes, otherwise reduction
 * when the written indices do not use the loop, ordered (T.axis.scan) when
 * they do (a prefix sum). Loops whose range the iter var's domain cannot
 * hold (bounds that are not known) stay in direct use. */
#include "normalize/normalize_impl.h"

#include <stdio.h>
#include <stdlib.h>

#define MAX_LOOPS 256

typedef struct iv_ctx {
  loom_arena *a;
  const loom_func *f;
  loom_arith_deps *deps; /* made on first need */
  bool has_deps_failed;
  loom_arith_ctx *ctx;
  loom_stmt *loops[MAX_LOOPS]; /* since the innermost enclosing block */
  int n_loops;
  bool has_failed;
} iv_ctx;

static bool uses_other_loops(const iv_ctx *c, const loom_expr *e) {
  for (int i = 0; i < c->n_loops; i++)
    if (loom_ir_expr_uses(e, c->loops[i]->u.loop.var))
      return true;
  return false;
}

/* The domain of the iter var for loop l: its own range when that uses no
 * other loop, else constant bounds of it, if known. */
static bool domain_of(iv_ctx *c, const loom_stmt *l, loom_range *dom) {
  if (!uses_other_loops(c, l->u.loop.min) &&
      !uses_other_loops(c, l->u.loop.extent)) {
    dom->min = l->u.loop.min;
    dom->extent = l->u.loop.extent;
    return true;
  }
  loom_expr *last = loom_ir_binary(
      c->a, LOOM_EXPR_SUB,
      loom_ir_binary(c->a, LOOM_EXPR_ADD, l->u.loop.min, l->u.loop.extent),
      loom_ir_int(c->a, l->u.loop.var->dtype, 1));
  if (!last) {
    c->has_failed = true;
    return false;
  }
  loom_arith_interval lo = loom_arith_bound(c->ctx, l->u.loop.min);
  loom_arith_interval hi = loom_arith_bound(c->ctx, last);
  if (!lo.is_bounded || !hi.is_bounded || hi.max < lo.min)
    return false;
  dom->min = loom_ir_int(c->a, l->u.loop.var->dtype, lo.min);
  dom->extent = loom_ir_int(c->a, l->u.loop.var->dtype, hi.max - lo.min + 1);
  c->has_failed |= !dom->min || !dom->extent;
  return !c->has_failed;
}

static bool writes_use(const loom_block *b, const loom_var *v) {
  for (int i = 0; i < b->n_writes; i++)
    for (int j = 0; j < b->writes[i].n_ranges; j++)
      if (loom_ir_expr_uses(b->writes[i].ranges[j].min, v) ||
          loom_ir_expr_uses(b->writes[i].ranges[j].extent, v))
        return true;
  return false;
}

/* The kind of the iter var for loop l, or false when the analysis is not
 * available (the block is then left as it is). */
static bool kind_of(iv_ctx *c, const loom_stmt *l, const loom_block *b,
                    loom_iter_kind *kind) {
  if (!c->deps && !c->has_deps_failed) {
    loom_diag d;
    loom_diag_init(&d);
    c->has_deps_failed = loom_arith_deps_new(c->f, &c->deps, &d) != LOOM_OK;
    loom_diag_free(&d);
  }
  if (!c->deps)
    return false;
  bool is_carried;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_arith_deps_loop_carried(c->deps, l->u.loop.var,
                                                &is_carried, NULL, &d);
  loom_diag_free(&d);
  if (st != LOOM_OK)
    return false;
  *kind = !is_carried                        ? LOOM_ITER_SPATIAL
          : writes_use(b, l->u.loop.var)     ? LOOM_ITER_SCAN
                                             : LOOM_ITER_REDUCE;
  return true;
}

static loom_stmt *give_iter_vars(iv_ctx *c, loom_stmt *r) {
  const loom_block *b = r->u.realize.block;
  loom_iter_var ivs[MAX_LOOPS];
  const loom_var *olds[MAX_LOOPS];
  loom_expr *news[MAX_LOOPS], *binds[MAX_LOOPS];
  int n = 0;
  for (int i = 0; i < c->n_loops; i++) {
    const loom_stmt *l = c->loops[i];
    loom_var *lv = l->u.loop.var;
    loom_range dom;
    loom_iter_kind kind;
    if (!loom_ir_stmt_uses(r, lv) || !domain_of(c, l, &dom) ||
        !kind_of(c, l, b, &kind))
      continue;
    char name[128];
    snprintf(name, sizeof name, "v_%s", lv->name ? lv->name : "i");
    loom_var *v = loom_ir_var(c->a, name, lv->dtype);
    news[n] = loom_ir_ref(c->a, v);
    binds[n] = loom_ir_ref(c->a, lv);
    if (!news[n] || !binds[n]) {
      c->has_failed = true;
      return r;
    }
    ivs[n] = (loom_iter_var){v, dom, kind};
    olds[n++] = lv;
  }
  if (n == 0 || c->has_failed)
    return r;
  loom_stmt *s = norm_subst_stmt(c->a, c->ctx, r, olds, news, n);
  loom_stmt *out = s ? norm_copy_stmt(c->a, s) : NULL;
  loom_block *nb = out ? loom_arena_dup(c->a, s->u.realize.block, sizeof *nb) : NULL;
  if (nb) {
    nb->iter_vars = loom_arena_dup(c->a, ivs, (size_t)n * sizeof *ivs);
    nb->n_iter_vars = n;
    out->u.realize.iter_values = loom_arena_dup(c->a, binds, (size_t)n * sizeof *binds);
    out->u.realize.n_iter_values = n;
    out->u.realize.block = nb;
  }
  if (!nb || !nb->iter_vars || !out->u.realize.iter_values) {
    c->has_failed = true;
    return r;
  }
  return out;
}

static bool eligible(const iv_ctx *c, const loom_stmt *r) {
  const loom_block *b = r->u.realize.block;
  return r != c->f->body && b->n_iter_vars == 0 && !b->init && c->n_loops > 0;
}

static loom_stmt *visit(void *arg, loom_stmt *s) {
  iv_ctx *c = arg;
  if (c->has_failed)
    return NULL;
  if (s->kind == LOOM_STMT_FOR) {
    if (c->n_loops == MAX_LOOPS)
      return s; /* too deep to track: left as written */
    int64_t e;
    if (loom_ir_is_const_int(s->u.loop.min, &e) &&
        loom_ir_is_const_int(s->u.loop.extent, NULL)) {
      int64_t ext;
      loom_ir_is_const_int(s->u.loop.extent, &ext);
      if (ext > 0) {
        loom_diag d;
        loom_diag_init(&d);
        loom_arith_bind(c->ctx, s->u.loop.var, e, e + ext - 1, &d);
        loom_diag_free(&d);
      }
    }
    c->loops[c->n_loops++] = s;
    loom_stmt *r = norm_map_children(c->a, s, visit, c);
    c->n_loops--;
    return r;
  }
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return norm_map_children(c->a, s, visit, c);
  loom_stmt *r = eligible(c, s) ? give_iter_vars(c, s) : s;
  if (c->has_failed)
    return NULL;
  int saved = c->n_loops;
  c->n_loops = 0;
  loom_stmt *out = norm_map_children(c->a, r, visit, c);
  c->n_loops = saved;
  return out;
}

loom_status norm_iter_vars(loom_arena *a, const loom_func *f, loom_func **out,
                           loom_diag *d) {
  (void)d;
  iv_ctx *c = calloc(1, sizeof *c);
  if (!c)
    return LOOM_NOMEM;
  c->a = a;
  c->f = f;
  c->ctx = loom_arith_ctx_new();
  loom_stmt *body = c->ctx && f->body ? visit(c, f->body) : f->body;
  bool ok = c->ctx && !c->has_failed && (body || !f->body);
  loom_arith_deps_free(c->deps);
  loom_arith_ctx_free(c->ctx);
  free(c);
  if (!ok)
    return LOOM_NOMEM;
  *out = body == f->body ? (loom_func *)f : norm_with_body(a, f, body);
  return *out ? LOOM_OK : LOOM_NOMEM;
}
