/* loop-zero: every loop starts at 0. `for i in range(m, n)` becomes
 * `for i in range(n - m)` with each use of i, bindings included, reading
 * i + m. split and fuse need this (TVM refuses such loops outright:
 * "does not start with 0"); nothing else about the loop changes. */
#include "normalize/normalize_impl.h"

typedef struct zero_ctx {
  loom_arena *a;
  loom_arith_ctx *ctx;
} zero_ctx;

static loom_stmt *visit(void *arg, loom_stmt *s);

static loom_stmt *shift_loop(zero_ctx *z, loom_stmt *s) {
  loom_arena *a = z->a;
  loom_var *old = s->u.loop.var;
  loom_var *v = loom_arena_dup(a, old, sizeof *old);
  loom_expr *zero = loom_ir_int(a, old->dtype, 0);
  loom_expr *min = s->u.loop.min;
  if (min && !loom_dtype_eq(min->dtype, old->dtype))
    min = loom_ir_cast(a, old->dtype, min);
  if (!v || !zero || !min)
    return NULL;
  int64_t e;
  if (loom_ir_is_const_int(s->u.loop.extent, &e) && e > 0) {
    loom_diag d;
    loom_diag_init(&d);
    loom_arith_bind(z->ctx, v, 0, e - 1, &d);
    loom_diag_free(&d);
  }
  loom_expr *shifted = loom_ir_binary(a, LOOM_EXPR_ADD, loom_ir_ref(a, v), min);
  if (!shifted)
    return NULL;
  const loom_var *vars[1] = {old};
  loom_stmt *body = norm_subst_stmt(a, z->ctx, s->u.loop.body, vars, &shifted, 1);
  loom_stmt *c = body ? norm_copy_stmt(a, s) : NULL;
  if (!c)
    return NULL;
  c->u.loop.var = v;
  c->u.loop.min = zero;
  c->u.loop.body = body;
  return c;
}

static loom_stmt *visit(void *arg, loom_stmt *s) {
  zero_ctx *z = arg;
  int64_t m;
  if (s->kind == LOOM_STMT_FOR &&
      !(loom_ir_is_const_int(s->u.loop.min, &m) && m == 0)) {
    s = shift_loop(z, s);
    if (!s)
      return NULL;
  }
  return norm_map_children(z->a, s, visit, z);
}

loom_status norm_loop_zero(loom_arena *a, const loom_func *f, loom_func **out,
                           loom_diag *d) {
  (void)d;
  zero_ctx z = {a, loom_arith_ctx_new()};
  if (!z.ctx)
    return LOOM_NOMEM;
  loom_stmt *body = f->body ? visit(&z, f->body) : NULL;
  loom_arith_ctx_free(z.ctx);
  if (f->body && !body)
    return LOOM_NOMEM;
  *out = body == f->body ? (loom_func *)f : norm_with_body(a, f, body);
  return *out ? LOOM_OK : LOOM_NOMEM;
}
