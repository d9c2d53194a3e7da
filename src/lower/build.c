/* Small IR builders for the lowering passes. */
#include "lower/lower_impl.h"

static loom_expr *broadcast_to(loom_arena *a, loom_expr *x, int lanes) {
  if (!x || x->dtype.lanes == lanes)
    return x;
  return loom_ir_broadcast(a, x, lanes);
}

static int lanes_of(const loom_expr *x, const loom_expr *y) {
  int l = x ? x->dtype.lanes : 1;
  return y && y->dtype.lanes > l ? y->dtype.lanes : l;
}

loom_expr *lower_add(loom_arena *a, loom_expr *x, loom_expr *y) {
  int64_t cx, cy;
  bool kx = loom_ir_is_const_int(x, &cx), ky = loom_ir_is_const_int(y, &cy);
  if (kx && cx == 0)
    return y;
  if (ky && cy == 0)
    return x;
  if (kx && ky)
    return loom_ir_int(a, x->dtype, (int64_t)((uint64_t)cx + (uint64_t)cy));
  int l = lanes_of(x, y);
  return loom_ir_binary(a, LOOM_EXPR_ADD, broadcast_to(a, x, l),
                        broadcast_to(a, y, l));
}

loom_expr *lower_mul(loom_arena *a, loom_expr *x, loom_expr *y) {
  int64_t cx, cy;
  bool kx = loom_ir_is_const_int(x, &cx), ky = loom_ir_is_const_int(y, &cy);
  if (kx && cx == 1)
    return y;
  if (ky && cy == 1)
    return x;
  if (kx && ky)
    return loom_ir_int(a, x->dtype, (int64_t)((uint64_t)cx * (uint64_t)cy));
  int l = lanes_of(x, y);
  return loom_ir_binary(a, LOOM_EXPR_MUL, broadcast_to(a, x, l),
                        broadcast_to(a, y, l));
}

loom_expr *lower_to_index(loom_arena *a, loom_expr *x, loom_dtype t) {
  if (!x)
    return NULL;
  t.lanes = x->dtype.lanes;
  if (loom_dtype_eq(x->dtype, t))
    return x;
  int64_t c;
  if (loom_ir_is_const_int(x, &c) && t.lanes == 1)
    return loom_ir_int(a, t, c);
  return loom_ir_cast(a, t, x);
}

loom_stmt *lower_let(loom_arena *a, loom_var *v, loom_expr *value,
                     loom_stmt *body) {
  if (!v || !value || !body)
    return NULL;
  loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_LET, body->loc);
  if (s) {
    s->u.let.var = v;
    s->u.let.value = value;
    s->u.let.body = body;
  }
  return s;
}

loom_stmt *lower_if(loom_arena *a, loom_expr *cond, loom_stmt *then_case,
                    loom_loc loc) {
  if (!cond || !then_case)
    return NULL;
  loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_IF, loc);
  if (s) {
    s->u.if_.cond = cond;
    s->u.if_.then_case = then_case;
  }
  return s;
}

loom_stmt *lower_seq2(loom_arena *a, loom_stmt *x, loom_stmt *y) {
  if (!x || !y)
    return NULL;
  loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_SEQ, x->loc);
  loom_stmt **items = loom_arena_alloc(a, 2 * sizeof *items);
  if (!s || !items)
    return NULL;
  items[0] = x;
  items[1] = y;
  s->u.seq.stmts = items;
  s->u.seq.n_stmts = 2;
  return s;
}
