/* Vector expressions to loops over lanes. A statement that stores a vector
 * (A[T.Ramp(b, 1, 8)] = B[T.Ramp(b, 1, 8)] + T.Broadcast(x, 8)) becomes
 *
 *   for lane in T.vectorized(8):
 *       A[b + lane] = B[b + lane] + x
 *
 * which keeps the meaning for the programs schedules produce (lanes that do
 * not read what other lanes write) and which C compilers vectorize. */
#include "lower/lower_impl.h"

typedef struct scal {
  loom_arena *a;
  loom_diag *d;
  loom_loc loc;
  loom_var *lane;
  loom_status st;
} scal;

static loom_expr *refuse(scal *S, const char *what) {
  if (S->st == LOOM_OK)
    S->st = loom_diag_error(S->d, S->loc, "the C backend cannot lower %s", what);
  return NULL;
}

/* Lane `lane` of the vector expression e, as a scalar expression. */
static loom_expr *lane_of(scal *S, loom_expr *e) {
  if (!e)
    return NULL;
  if (e->dtype.lanes == 1)
    return e;
  loom_arena *a = S->a;
  loom_expr *c;
  switch (e->kind) {
  case LOOM_EXPR_RAMP: {
    loom_expr *base = lane_of(S, e->u.ramp.base);
    loom_expr *i = lower_to_index(a, loom_ir_ref(a, S->lane), base ? base->dtype : LOOM_INT32);
    return lower_add(a, base, lower_mul(a, i, lane_of(S, e->u.ramp.stride)));
  }
  case LOOM_EXPR_BROADCAST:
    if (e->u.broadcast.value->dtype.lanes != 1)
      return refuse(S, "a broadcast of a vector");
    return e->u.broadcast.value;
  case LOOM_EXPR_VAR:
    return refuse(S, "a vector variable");
  case LOOM_EXPR_LET:
    return refuse(S, "a vector let");
  default: break;
  }
  if (!(c = loom_arena_dup(a, e, sizeof *e)))
    return NULL;
  c->dtype.lanes = 1;
  switch (e->kind) {
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    c->u.unary.a = lane_of(S, e->u.unary.a);
    return c->u.unary.a ? c : NULL;
  case LOOM_EXPR_SELECT:
    c->u.select.cond = lane_of(S, e->u.select.cond);
    c->u.select.t = lane_of(S, e->u.select.t);
    c->u.select.f = lane_of(S, e->u.select.f);
    return c->u.select.cond && c->u.select.t && c->u.select.f ? c : NULL;
  case LOOM_EXPR_LOAD:
    if (e->u.load.n_indices != 1)
      return refuse(S, "a vector access to a buffer that is not flat");
    if (!(c->u.load.indices = loom_arena_alloc(a, sizeof *c->u.load.indices)))
      return NULL;
    c->u.load.indices[0] = lane_of(S, e->u.load.indices[0]);
    return c->u.load.indices[0] ? c : NULL;
  case LOOM_EXPR_CALL: {
    int n = e->u.call.n_args;
    if (!(c->u.call.args = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *c->u.call.args)))
      return NULL;
    for (int i = 0; i < n; i++)
      if (!(c->u.call.args[i] = lane_of(S, e->u.call.args[i])))
        return NULL;
    return c;
  }
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
    return c;
  default: /* binary operators */
    c->u.bin.a = lane_of(S, e->u.bin.a);
    c->u.bin.b = lane_of(S, e->u.bin.b);
    return c->u.bin.a && c->u.bin.b ? c : NULL;
  }
}

static int lanes(const loom_expr *e) { return e ? e->dtype.lanes : 1; }

/* for lane in T.vectorized(n): body */
static loom_stmt *lane_loop(scal *S, int n, loom_stmt *body) {
  loom_stmt *s = body ? loom_ir_stmt(S->a, LOOM_STMT_FOR, body->loc) : NULL;
  if (!s)
    return NULL;
  s->u.loop.var = S->lane;
  s->u.loop.min = loom_ir_int(S->a, LOOM_INT32, 0);
  s->u.loop.extent = loom_ir_int(S->a, LOOM_INT32, n);
  s->u.loop.kind = LOOM_FOR_VECTORIZED;
  s->u.loop.body = body;
  return s;
}

static loom_stmt *scalarize(scal *S, loom_stmt *s);

static loom_stmt *scalar_store(scal *S, loom_stmt *s) {
  int n = lanes(s->u.store.value);
  if (s->u.store.n_indices == 1 && lanes(s->u.store.indices[0]) > n)
    n = lanes(s->u.store.indices[0]);
  if (n == 1)
    return s;
  if (n > LOOM_LOWER_MAX_LANES)
    return refuse(S, "a vector of more than 64 lanes"), NULL;
  if (s->u.store.n_indices != 1)
    return refuse(S, "a vector store to a buffer that is not flat"), NULL;
  loom_stmt *c = loom_arena_dup(S->a, s, sizeof *s);
  loom_expr **idx = loom_arena_alloc(S->a, sizeof *idx);
  if (!c || !idx || !(S->lane = loom_ir_var(S->a, "lane", LOOM_INT32)))
    return NULL;
  loom_expr *v = s->u.store.value;
  /* A scalar stored to a vector of places is the same value in each. */
  idx[0] = lane_of(S, s->u.store.indices[0]);
  c->u.store.value = lanes(v) == 1 ? v : lane_of(S, v);
  c->u.store.indices = idx;
  if (!idx[0] || !c->u.store.value)
    return NULL;
  return lane_loop(S, n, c);
}

static loom_stmt *scalarize(scal *S, loom_stmt *s) {
  if (!s || S->st != LOOM_OK)
    return NULL;
  S->loc = s->loc;
  loom_stmt *c = loom_arena_dup(S->a, s, sizeof *s);
  if (!c)
    return NULL;
  switch (s->kind) {
  case LOOM_STMT_STORE:
    return scalar_store(S, s);
  case LOOM_STMT_EVALUATE:
    if (lanes(s->u.evaluate.value) == 1)
      return s;
    if (!(S->lane = loom_ir_var(S->a, "lane", LOOM_INT32)))
      return NULL;
    c->u.evaluate.value = lane_of(S, s->u.evaluate.value);
    return c->u.evaluate.value ? lane_loop(S, lanes(s->u.evaluate.value), c) : NULL;
  case LOOM_STMT_SEQ: {
    int n = s->u.seq.n_stmts;
    if (!(c->u.seq.stmts = loom_arena_alloc(S->a, (size_t)(n + 1) * sizeof *c->u.seq.stmts)))
      return NULL;
    for (int k = 0; k < n; k++)
      if (!(c->u.seq.stmts[k] = scalarize(S, s->u.seq.stmts[k])))
        return NULL;
    return c;
  }
  case LOOM_STMT_FOR:
    if (lanes(s->u.loop.min) > 1 || lanes(s->u.loop.extent) > 1)
      return refuse(S, "a loop with vector bounds"), NULL;
    c->u.loop.body = scalarize(S, s->u.loop.body);
    return c->u.loop.body ? c : NULL;
  case LOOM_STMT_IF:
    if (lanes(s->u.if_.cond) > 1)
      return refuse(S, "an if statement with a vector condition"), NULL;
    c->u.if_.then_case = scalarize(S, s->u.if_.then_case);
    if (s->u.if_.else_case && !(c->u.if_.else_case = scalarize(S, s->u.if_.else_case)))
      return NULL;
    return c->u.if_.then_case ? c : NULL;
  case LOOM_STMT_LET:
    if (lanes(s->u.let.value) > 1)
      return refuse(S, "a let statement of a vector"), NULL;
    c->u.let.body = scalarize(S, s->u.let.body);
    return c->u.let.body ? c : NULL;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    c->u.alloc.body = scalarize(S, s->u.alloc.body);
    return c->u.alloc.body ? c : NULL;
  case LOOM_STMT_ATTR:
    c->u.attr.body = scalarize(S, s->u.attr.body);
    return c->u.attr.body ? c : NULL;
  case LOOM_STMT_ASSERT:
    c->u.assert_.body = scalarize(S, s->u.assert_.body);
    return c->u.assert_.body ? c : NULL;
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_COUNT_:
    return s;
  }
  return s;
}

loom_status lower_scalarize(loom_arena *a, loom_stmt *s, loom_stmt **out,
                            loom_diag *d) {
  scal S = {.a = a, .d = d};
  *out = scalarize(&S, s);
  if (S.st != LOOM_OK)
    return S.st;
  return *out ? LOOM_OK : LOOM_NOMEM;
}
