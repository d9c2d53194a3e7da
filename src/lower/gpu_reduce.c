/* Cross-thread reductions: a reduction block under a loop bound to threadIdx
 * whose variable enters the block's reduce bindings. TensorIR runs the
 * threads one after another, each adding its part into the output; on a GPU
 * they run at once, so (as TVM's LowerCrossThreadReduction does) each thread
 * reduces its part into a register first, the block's threads then combine
 * their registers, and one thread writes the output. With the reduce loops
 * from loop `top` down (L itself, or serial loops around it too):
 *
 *   for tx in thread_binding(T, "threadIdx.x"):   (a copy of L)
 *     acc[0] = identity
 *   <the loops from top down to the block, L among them>:
 *     acc[0] = combine(acc[0], value)              (the block, without init)
 *   for tx in thread_binding(T, "threadIdx.x"):   (another copy)
 *     <acc combined across the T threads>
 *     if tx == 0:
 *       out[...] = combine(init, acc[0])           (a block of the spatial iters)
 *
 * acc is a local buffer allocated around the three: in the kernel, each
 * thread keeps its own across the serial loops. (With no serial loop
 * around L, the three go in L's body, as one.)
 * Across threads: when L is threadIdx.x (and the block whole warps) and T
 * is a power of two up to 32, warp shuffles within segments of T lanes;
 * when T is a multiple of 32, a shuffle reduction per warp, then thread 0
 * combines the warps' results through shared memory; otherwise every
 * thread's value goes through shared memory and thread 0 combines them. The barriers come from
 * gpu_sync.c. The rewritten program means the same only on a GPU: it runs
 * after every check the interpreter makes. */
#include "lower/lower_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#define MAX_LOOPS 64
#define MAX_FOUND 64

/* One cross-thread reduction: the loops from the root down to its block. */
typedef struct found {
  const loom_stmt *loops[MAX_LOOPS];
  int n_loops;
  int at;                  /* loops[at] is L */
  int top;                 /* loops[top] is the outermost reduce loop (L, or
                              a serial loop around it) */
  const loom_stmt *realize;
  loom_expr_kind op;       /* ADD, MUL, MIN or MAX */
  loom_expr *rhs;          /* the value combined in */
  loom_expr *init;         /* the init's value */
  const loom_stmt *update; /* the body's store */
} found;

typedef struct reduce_ctx {
  loom_arena *a;
  loom_diag *d;
  const loom_stmt *stack[MAX_LOOPS];
  int n_stack;
  found found[MAX_FOUND];
  int n_found;
  loom_status st;
} reduce_ctx;

static void fail(reduce_ctx *R, loom_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(reduce_ctx *R, loom_loc loc, const char *fmt, ...) {
  if (R->st != LOOM_OK)
    return;
  va_list ap;
  va_start(ap, fmt);
  R->st = loom_diag_verror(R->d, loc, fmt, ap);
  va_end(ap);
}

static bool is_thread_axis(const loom_stmt *s) {
  return s->kind == LOOM_STMT_FOR && s->u.loop.kind == LOOM_FOR_THREAD_BINDING &&
         s->u.loop.thread && !strncmp(s->u.loop.thread, "threadIdx.", 10);
}

/* Does the binding of one of the realized block's reduce iter vars (with
 * reduce), or of one of its other iter vars, use v? */
static bool binding_uses(const loom_stmt *realize, const loom_var *v, bool reduce) {
  const loom_block *b = realize->u.realize.block;
  for (int k = 0; k < b->n_iter_vars; k++)
    if ((b->iter_vars[k].kind == LOOM_ITER_REDUCE) == reduce &&
        loom_ir_expr_uses(realize->u.realize.iter_values[k], v))
      return true;
  return false;
}

static bool same_indices(loom_expr *const *x, loom_expr *const *y, int n) {
  for (int i = 0; i < n; i++)
    if (!loom_ir_same_expr(x[i], y[i]))
      return false;
  return true;
}

/* The block's init and update as out = init; out = op(out, rhs). */
static bool match_block(const loom_block *b, found *F) {
  const loom_stmt *init = b->init, *up = b->body;
  if (!init || init->kind != LOOM_STMT_STORE || !up || up->kind != LOOM_STMT_STORE ||
      init->u.store.buffer != up->u.store.buffer ||
      init->u.store.n_indices != up->u.store.n_indices ||
      !same_indices(init->u.store.indices, up->u.store.indices, up->u.store.n_indices))
    return false;
  loom_expr *e = up->u.store.value;
  if (e->kind != LOOM_EXPR_ADD && e->kind != LOOM_EXPR_MUL && e->kind != LOOM_EXPR_MIN &&
      e->kind != LOOM_EXPR_MAX)
    return false;
  for (int side = 0; side < 2; side++) {
    loom_expr *self = side ? e->u.bin.b : e->u.bin.a, *other = side ? e->u.bin.a : e->u.bin.b;
    if (self->kind == LOOM_EXPR_LOAD && self->u.load.buffer == up->u.store.buffer &&
        self->u.load.n_indices == up->u.store.n_indices &&
        same_indices(self->u.load.indices, up->u.store.indices, up->u.store.n_indices) &&
        !loom_ir_expr_uses(other, up->u.store.buffer->data)) {
      F->op = e->kind;
      F->rhs = other;
      F->init = init->u.store.value;
      F->update = up;
      return true;
    }
  }
  return false;
}

static bool match_update(found *F) {
  return match_block(F->realize->u.realize.block, F);
}

bool loom_lower_gpu_can_reduce(const loom_block *b) {
  found F;
  return match_block(b, &F);
}

/* Checks a reduction block under the loops on the stack; records it when
 * it reduces across threads. */
static void consider(reduce_ctx *R, const loom_stmt *realize) {
  const loom_block *b = realize->u.realize.block;
  /* Without an init there is no reduction to lower, only an update that
   * every thread of the axis would make to the same element at once. */
  for (int i = 0; !b->init && i < R->n_stack; i++)
    if (is_thread_axis(R->stack[i]) && binding_uses(realize, R->stack[i]->u.loop.var, true))
      fail(R, b->loc, "block '%s' updates across %s without an init: the threads "
                      "would race on one element (keep the init in the block, "
                      "for a cross-thread reduction, or bind a spatial loop)",
           b->name, R->stack[i]->u.loop.thread);
  if (!b->init)
    return;
  int at = -1;
  for (int i = 0; i < R->n_stack; i++) {
    if (!is_thread_axis(R->stack[i]) ||
        !binding_uses(realize, R->stack[i]->u.loop.var, true))
      continue;
    if (at >= 0) {
      fail(R, b->loc, "block '%s' reduces across two thread axes (%s and %s); a "
           "cross-thread reduction binds one", b->name, R->stack[at]->u.loop.thread,
           R->stack[i]->u.loop.thread);
      return;
    }
    at = i;
  }
  if (at < 0)
    return;
  const loom_stmt *L = R->stack[at];
  /* Serial reduce loops may lie around L (MetaSchedule's form): each
   * thread's register then lives across them, in one kernel. */
  int top = at;
  for (int i = 0; i < at && top == at; i++)
    if (binding_uses(realize, R->stack[i]->u.loop.var, true))
      top = i;
  for (int i = top; i < at; i++)
    if (R->stack[i]->u.loop.kind == LOOM_FOR_THREAD_BINDING) {
      fail(R, b->loc, "block '%s' reduces across %s and over loop '%s' outside it, "
           "with loop '%s' bound to %s between them; bind the loops around the "
           "reduction outside its reduce loops", b->name, L->u.loop.thread,
           R->stack[top]->u.loop.var->name, R->stack[i]->u.loop.var->name,
           R->stack[i]->u.loop.thread);
      return;
    }
  bool is_in_kernel = false;
  for (int i = 0; i < top; i++)
    is_in_kernel |= R->stack[i]->u.loop.kind == LOOM_FOR_THREAD_BINDING;
  if (top < at && !is_in_kernel) {
    fail(R, b->loc, "block '%s' reduces across %s and over loop '%s' outside it, "
         "with no loop bound to blockIdx around both; bind one", b->name,
         L->u.loop.thread, R->stack[top]->u.loop.var->name);
    return;
  }
  for (int i = top; i < R->n_stack; i++)
    if (binding_uses(realize, R->stack[i]->u.loop.var, false)) {
      fail(R, b->loc, "block '%s' reduces across %s, and loop '%s' inside it also "
           "indexes its output; one thread writes each output", b->name,
           L->u.loop.thread, R->stack[i]->u.loop.var->name);
      return;
    }
  for (int i = top; i < R->n_stack; i++) {
    const loom_stmt *next = i + 1 < R->n_stack ? R->stack[i + 1] : realize;
    if (R->stack[i]->u.loop.body != next) {
      fail(R, b->loc, "block '%s' reduces across %s, whose loop holds more than the "
           "block's own loops; a cross-thread reduction is alone under its thread loop",
           b->name, L->u.loop.thread);
      return;
    }
  }
  if (R->n_found == MAX_FOUND) {
    fail(R, b->loc, "more than %d cross-thread reductions in one function", MAX_FOUND);
    return;
  }
  found *F = &R->found[R->n_found];
  memset(F, 0, sizeof *F);
  memcpy(F->loops, R->stack, (size_t)R->n_stack * sizeof *F->loops);
  F->n_loops = R->n_stack;
  F->at = at;
  F->top = top;
  F->realize = realize;
  if (!match_update(F)) {
    fail(R, b->loc, "block '%s' reduces across %s, but its update is not "
         "out = out + x (or *, min, max) after out = init: no cross-thread "
         "reduction for it", b->name, L->u.loop.thread);
    return;
  }
  R->n_found++;
}

static loom_visit find_pre(void *ctx, loom_stmt *s) {
  reduce_ctx *R = ctx;
  if (s->kind == LOOM_STMT_FOR) {
    if (R->n_stack == MAX_LOOPS) {
      fail(R, s->loc, "loops nested more than %d deep", MAX_LOOPS);
      return LOOM_VISIT_STOP;
    }
    R->stack[R->n_stack++] = s;
  } else if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
    consider(R, s);
  }
  return R->st == LOOM_OK ? LOOM_VISIT_GO : LOOM_VISIT_STOP;
}

static loom_visit find_post(void *ctx, loom_stmt *s) {
  reduce_ctx *R = ctx;
  if (s->kind == LOOM_STMT_FOR && R->n_stack > 0)
    R->n_stack--;
  return LOOM_VISIT_GO;
}

/* ---- the rewrite -------------------------------------------------------------- */

typedef struct builder {
  loom_arena *a;
  bool is_nomem;
} builder;

static void *check(builder *B, void *p) {
  if (!p)
    B->is_nomem = true;
  return p;
}

static loom_expr *i32(builder *B, int64_t v) { return check(B, loom_ir_int(B->a, LOOM_INT32, v)); }

static loom_expr *bin(builder *B, loom_expr_kind k, loom_expr *x, loom_expr *y) {
  return check(B, loom_ir_binary(B->a, k, x, y));
}

/* The identity of op on dtype t. */
static loom_expr *identity(builder *B, loom_expr_kind op, loom_dtype t) {
  bool is_float = loom_dtype_is_float(t);
  if (op == LOOM_EXPR_ADD || op == LOOM_EXPR_MUL) {
    int v = op == LOOM_EXPR_MUL;
    return check(B, is_float ? loom_ir_float(B->a, t, v) : loom_ir_int(B->a, t, v));
  }
  bool is_min = op == LOOM_EXPR_MIN; /* min starts from the largest value */
  if (is_float)
    return check(B, loom_ir_float(B->a, t, is_min ? INFINITY : -INFINITY));
  if (t.code == LOOM_DT_BOOL)
    return check(B, loom_ir_int(B->a, t, is_min));
  if (t.code == LOOM_DT_UINT)
    return check(B, loom_ir_int(B->a, t, is_min ? (int64_t)(t.bits >= 64 ? UINT64_MAX
                                                           : (UINT64_C(1) << t.bits) - 1)
                                               : 0));
  int64_t hi = t.bits >= 64 ? INT64_MAX : (INT64_C(1) << (t.bits - 1)) - 1;
  return check(B, loom_ir_int(B->a, t, is_min ? hi : -hi - 1));
}

static loom_stmt *store(builder *B, loom_buffer *buf, loom_expr *idx, loom_expr *value) {
  loom_stmt *s = check(B, loom_ir_stmt(B->a, LOOM_STMT_STORE, (loom_loc){0}));
  loom_expr **ix = check(B, loom_arena_alloc(B->a, sizeof *ix));
  if (!s || !ix)
    return NULL;
  ix[0] = idx;
  s->u.store.buffer = buf;
  s->u.store.value = value;
  s->u.store.indices = ix;
  s->u.store.n_indices = 1;
  return s;
}

static loom_expr *load(builder *B, loom_buffer *buf, loom_expr *idx) {
  loom_expr **ix = check(B, loom_arena_alloc(B->a, sizeof *ix));
  if (!ix)
    return NULL;
  ix[0] = idx;
  return check(B, loom_ir_load(B->a, buf, ix, 1));
}

static loom_stmt *seq(builder *B, loom_stmt **items, int n) {
  loom_stmt *s = check(B, loom_ir_stmt(B->a, LOOM_STMT_SEQ, (loom_loc){0}));
  loom_stmt **copy = check(B, loom_arena_alloc(B->a, (size_t)(n ? n : 1) * sizeof *copy));
  if (!s || !copy)
    return NULL;
  memcpy(copy, items, (size_t)n * sizeof *copy);
  s->u.seq.stmts = copy;
  s->u.seq.n_stmts = n;
  return s;
}

static loom_stmt *when(builder *B, loom_expr *cond, loom_stmt *then) {
  loom_stmt *s = check(B, loom_ir_stmt(B->a, LOOM_STMT_IF, (loom_loc){0}));
  if (!s)
    return NULL;
  s->u.if_.cond = cond;
  s->u.if_.then_case = then;
  return s;
}

static loom_stmt *loop(builder *B, loom_var *v, int64_t from, int64_t to, loom_stmt *body) {
  loom_stmt *s = check(B, loom_ir_stmt(B->a, LOOM_STMT_FOR, (loom_loc){0}));
  if (!s)
    return NULL;
  s->u.loop.var = v;
  s->u.loop.min = i32(B, from);
  s->u.loop.extent = i32(B, to - from);
  s->u.loop.kind = LOOM_FOR_SERIAL;
  s->u.loop.body = body;
  return s;
}

static loom_stmt *alloc(builder *B, loom_buffer *buf, loom_stmt *body) {
  loom_stmt *s = check(B, loom_ir_stmt(B->a, LOOM_STMT_ALLOCATE, (loom_loc){0}));
  if (!s)
    return NULL;
  s->u.alloc.buffer = buf;
  s->u.alloc.body = body;
  return s;
}

static loom_buffer *buffer(builder *B, const char *name, loom_dtype t, int64_t n,
                           const char *scope) {
  loom_expr **shape = check(B, loom_arena_alloc(B->a, sizeof *shape));
  if (!shape)
    return NULL;
  shape[0] = i32(B, n);
  loom_buffer *b = check(B, loom_ir_buffer(B->a, name, t, shape, 1));
  if (b)
    b->scope = scope;
  return b;
}

static loom_expr *call(builder *B, loom_dtype t, const char *fn, loom_expr **args, int n) {
  loom_expr *all[8];
  all[0] = check(B, loom_ir_str(B->a, fn));
  memcpy(all + 1, args, (size_t)n * sizeof *args);
  return check(B, loom_ir_call(B->a, t, LOOM_OP_CALL_EXTERN, all, n + 1));
}

/* acc[0] = op(acc[0], __shfl_down_sync(all, acc[0], off, width)) for off
 * from width / 2 down to 1. */
static int shuffles(builder *B, const found *F, loom_buffer *acc, int width,
                    loom_stmt **out) {
  int n = 0;
  for (int off = width / 2; off >= 1; off /= 2) {
    loom_expr *cur = load(B, acc, i32(B, 0));
    loom_expr *args[4] = {check(B, loom_ir_int(B->a, LOOM_DTYPE(LOOM_DT_UINT, 32, 1),
                                                0xffffffffLL)),
                          load(B, acc, i32(B, 0)), i32(B, off), i32(B, width)};
    loom_expr *other = call(B, acc->dtype, "__shfl_down_sync", args, 4);
    out[n++] = store(B, acc, i32(B, 0), bin(B, F->op, cur, other));
  }
  return n;
}

/* The index of the thread's group: the other thread loops around L,
 * linearized; NULL when there are none. */
static loom_expr *group_of(builder *B, const found *F, int64_t *n_groups) {
  loom_expr *g = NULL;
  *n_groups = 1;
  for (int i = 0; i < F->top; i++) {
    const loom_stmt *s = F->loops[i];
    int64_t e;
    if (!is_thread_axis(s) || !loom_ir_is_const_int(s->u.loop.extent, &e))
      continue;
    loom_expr *v = check(B, loom_ir_ref(B->a, s->u.loop.var));
    if (v && !loom_dtype_eq(v->dtype, LOOM_INT32))
      v = check(B, loom_ir_cast(B->a, LOOM_INT32, v));
    g = g ? bin(B, LOOM_EXPR_ADD, bin(B, LOOM_EXPR_MUL, g, i32(B, e)), v) : v;
    *n_groups *= e;
  }
  return g;
}

/* g * per + i, or i alone when there is one group (g NULL). */
static loom_expr *slot_at(builder *B, loom_expr *g, int64_t per, loom_expr *i) {
  return g ? bin(B, LOOM_EXPR_ADD, bin(B, LOOM_EXPR_MUL, g, i32(B, per)), i) : i;
}

/* The statements that combine acc across L's threads (whose index is tv)
 * into thread 0's acc. */
static loom_stmt *across(builder *B, const found *F, loom_buffer *acc, loom_var *tv) {
  const loom_stmt *L = F->loops[F->at];
  int64_t T;
  loom_ir_is_const_int(L->u.loop.extent, &T);
  loom_expr *t = check(B, loom_ir_ref(B->a, tv));
  if (t && !loom_dtype_eq(t->dtype, LOOM_INT32))
    t = check(B, loom_ir_cast(B->a, LOOM_INT32, t));
  /* Shuffles need whole warps: every lane of a warp they name must run. */
  int64_t threads = 1, e;
  for (int i = 0; i <= F->at; i++)
    if ((i < F->top || i == F->at) && is_thread_axis(F->loops[i]) &&
        loom_ir_is_const_int(F->loops[i]->u.loop.extent, &e))
      threads *= e;
  bool is_x = !strcmp(L->u.loop.thread, "threadIdx.x") && threads % 32 == 0;
  bool is_pow2 = T > 0 && (T & (T - 1)) == 0;
  loom_stmt *items[16];
  int n = 0;
  if (is_x && is_pow2 && T <= 32) {
    n = shuffles(B, F, acc, (int)T, items);
    return seq(B, items, n);
  }
  int64_t groups;
  loom_expr *g = group_of(B, F, &groups);
  bool by_warp = is_x && T % 32 == 0;
  int64_t per = by_warp ? T / 32 : T; /* values each group leaves in shared memory */
  loom_buffer *red = buffer(B, "red_buf", acc->dtype, groups * per, "shared");
  if (!red)
    return NULL;
  loom_expr *slot = by_warp ? bin(B, LOOM_EXPR_FLOORDIV, t, i32(B, 32)) : t;
  loom_stmt *put = store(B, red, slot_at(B, g, per, slot), load(B, acc, i32(B, 0)));
  if (by_warp) {
    n = shuffles(B, F, acc, 32, items);
    put = when(B, bin(B, LOOM_EXPR_EQ, bin(B, LOOM_EXPR_FLOORMOD, t, i32(B, 32)), i32(B, 0)), put);
  }
  items[n++] = put;
  loom_var *w = check(B, loom_ir_var(B->a, "red_i", LOOM_INT32));
  loom_expr *wv = w ? check(B, loom_ir_ref(B->a, w)) : NULL;
  loom_stmt *fold = store(B, acc, i32(B, 0),
                          bin(B, F->op, load(B, acc, i32(B, 0)),
                              load(B, red, slot_at(B, g, per, wv))));
  items[n++] = when(B, bin(B, LOOM_EXPR_EQ, t, i32(B, 0)), loop(B, w, 1, per, fold));
  return alloc(B, red, seq(B, items, n));
}

/* The terms of a block predicate (split at `and`) that use none of the
 * given loops' variables. */
static loom_expr *outer_terms(builder *B, loom_expr *p, const found *F) {
  if (!p)
    return NULL;
  if (p->kind == LOOM_EXPR_AND) {
    loom_expr *x = outer_terms(B, p->u.bin.a, F), *y = outer_terms(B, p->u.bin.b, F);
    return x && y ? bin(B, LOOM_EXPR_AND, x, y) : x ? x : y;
  }
  for (int i = F->top; i < F->n_loops; i++)
    if (loom_ir_expr_uses(p, F->loops[i]->u.loop.var))
      return NULL;
  return p;
}

/* The block that writes the result: R's spatial iter vars, fresh, bound as
 * R binds them; out[...] = op(init, acc[0]). */
static loom_stmt *write_back(builder *B, const found *F, loom_buffer *acc) {
  const loom_stmt *r = F->realize;
  const loom_block *b = r->u.realize.block;
  loom_block *w = check(B, loom_ir_block(B->a, b->name));
  loom_stmt *wr = check(B, loom_ir_stmt(B->a, LOOM_STMT_BLOCK_REALIZE, r->loc));
  if (!w || !wr)
    return NULL;
  loom_var *olds[64];
  loom_expr *news[64];
  int n = 0;
  w->iter_vars = check(B, loom_arena_alloc(B->a, (size_t)(b->n_iter_vars + 1) * sizeof *w->iter_vars));
  wr->u.realize.iter_values = check(B, loom_arena_alloc(B->a, (size_t)(b->n_iter_vars + 1) * sizeof(loom_expr *)));
  if (!w->iter_vars || !wr->u.realize.iter_values || b->n_iter_vars > 64)
    return NULL;
  for (int k = 0; k < b->n_iter_vars; k++) {
    const loom_iter_var *iv = &b->iter_vars[k];
    if (iv->kind == LOOM_ITER_REDUCE)
      continue;
    loom_var *fresh = check(B, loom_ir_var(B->a, iv->var->name, iv->var->dtype));
    w->iter_vars[n] = *iv;
    w->iter_vars[n].var = fresh;
    wr->u.realize.iter_values[n] = r->u.realize.iter_values[k];
    olds[n] = iv->var;
    news[n++] = fresh ? check(B, loom_ir_ref(B->a, fresh)) : NULL;
  }
  w->n_iter_vars = n;
  wr->u.realize.n_iter_values = n;
  wr->u.realize.predicate = outer_terms(B, r->u.realize.predicate, F);
  wr->u.realize.block = w;
  const loom_stmt *up = F->update;
  loom_stmt *st = check(B, loom_ir_stmt(B->a, LOOM_STMT_STORE, up->loc));
  loom_expr **ix = check(B, loom_arena_alloc(B->a, (size_t)up->u.store.n_indices * sizeof *ix));
  if (!st || !ix || B->is_nomem)
    return NULL;
  for (int i = 0; i < up->u.store.n_indices; i++)
    ix[i] = check(B, loom_ir_substitute_expr(B->a, up->u.store.indices[i], olds, news, n));
  loom_expr *init = check(B, loom_ir_substitute_expr(B->a, F->init, olds, news, n));
  st->u.store.buffer = up->u.store.buffer;
  st->u.store.indices = ix;
  st->u.store.n_indices = up->u.store.n_indices;
  st->u.store.value = bin(B, F->op, init, load(B, acc, i32(B, 0)));
  w->body = st;
  /* Regions: the output point it writes and the register it reads. */
  loom_buffer_region *wreg = check(B, loom_arena_alloc(B->a, sizeof *wreg));
  loom_range *wr_ranges = check(B, loom_arena_alloc(B->a, (size_t)up->u.store.n_indices * sizeof *wr_ranges));
  loom_buffer_region *rreg = check(B, loom_arena_alloc(B->a, sizeof *rreg));
  loom_range *rr = check(B, loom_arena_alloc(B->a, sizeof *rr));
  if (!wreg || !wr_ranges || !rreg || !rr)
    return NULL;
  for (int i = 0; i < up->u.store.n_indices; i++)
    wr_ranges[i] = (loom_range){ix[i], check(B, loom_ir_int(B->a, ix[i]->dtype, 1))};
  *wreg = (loom_buffer_region){up->u.store.buffer, wr_ranges, up->u.store.n_indices};
  *rr = (loom_range){i32(B, 0), i32(B, 1)};
  *rreg = (loom_buffer_region){acc, rr, 1};
  w->writes = wreg;
  w->n_writes = 1;
  w->reads = rreg;
  w->n_reads = 1;
  w->loc = b->loc;
  return wr;
}

/* The block R as each thread's own part: no init, acc updated. */
static loom_stmt *in_thread(builder *B, const found *F, loom_buffer *acc) {
  const loom_stmt *r = F->realize;
  const loom_block *b = r->u.realize.block;
  loom_block *nb = check(B, loom_arena_dup(B->a, b, sizeof *nb));
  loom_stmt *nr = check(B, loom_arena_dup(B->a, r, sizeof *nr));
  loom_buffer_region *reads = check(B, loom_arena_alloc(B->a, (size_t)(b->n_reads + 1) * sizeof *reads));
  loom_buffer_region *writes = check(B, loom_arena_alloc(B->a, sizeof *writes));
  loom_range *rr = check(B, loom_arena_alloc(B->a, sizeof *rr));
  if (!nb || !nr || !reads || !writes || !rr)
    return NULL;
  *rr = (loom_range){i32(B, 0), i32(B, 1)};
  memcpy(reads, b->reads, (size_t)b->n_reads * sizeof *reads);
  reads[b->n_reads] = (loom_buffer_region){acc, rr, 1};
  *writes = (loom_buffer_region){acc, rr, 1};
  nb->reads = reads;
  nb->n_reads = b->n_reads + 1;
  nb->writes = writes;
  nb->n_writes = 1;
  nb->init = NULL;
  nb->body = store(B, acc, i32(B, 0), bin(B, F->op, load(B, acc, i32(B, 0)), F->rhs));
  nr->u.realize.block = nb;
  return nr;
}

/* A copy of L over a fresh variable (its name and dtype), body unset. */
static loom_stmt *thread_loop(builder *B, const loom_stmt *L, loom_var **var) {
  loom_stmt *c = check(B, loom_arena_dup(B->a, L, sizeof *c));
  *var = check(B, loom_ir_var(B->a, L->u.loop.var->name, L->u.loop.var->dtype));
  if (!c || !*var)
    return NULL;
  c->u.loop.var = *var;
  return c;
}

/* The replacement of loops[top]:
 *
 *   for t1 (as L): acc[0] = identity
 *   loops[top..]: the block as each thread's part
 *   for t2 (as L): <acc across threads>; if t2 == 0: <write back>
 *
 * acc is allocated around all three, in the kernel: each thread its own.
 * When top is L, the three go in L's body instead. */
static loom_stmt *rewrite_one(builder *B, const found *F) {
  const loom_stmt *L = F->loops[F->at];
  loom_dtype t = F->update->u.store.buffer->dtype;
  loom_buffer *acc = buffer(B, "red_acc", t, 1, "local");
  if (!acc)
    return NULL;
  /* With no serial reduce loop around L, all of it goes in L's body: L may
   * then be the kernel's outermost bound loop. */
  bool is_in_l = F->top == F->at;
  loom_stmt *inner = in_thread(B, F, acc);
  for (int i = F->n_loops - 1; i >= F->top + is_in_l && inner; i--) {
    loom_stmt *c = check(B, loom_arena_dup(B->a, F->loops[i], sizeof *c));
    if (!c)
      return NULL;
    c->u.loop.body = inner;
    inner = c;
  }
  if (is_in_l) {
    loom_expr *t0 = check(B, loom_ir_ref(B->a, L->u.loop.var));
    loom_expr *zero = t0 ? check(B, loom_ir_int(B->a, t0->dtype, 0)) : NULL;
    loom_stmt *items[4] = {
        store(B, acc, i32(B, 0), identity(B, F->op, t)),
        inner,
        across(B, F, acc, L->u.loop.var),
        when(B, bin(B, LOOM_EXPR_EQ, t0, zero), write_back(B, F, acc)),
    };
    loom_stmt *nl = check(B, loom_arena_dup(B->a, L, sizeof *nl));
    if (!nl || !items[0] || !items[1] || !items[2] || !items[3])
      return NULL;
    nl->u.loop.body = alloc(B, acc, seq(B, items, 4));
    return B->is_nomem ? NULL : nl;
  }
  loom_var *t1, *t2;
  loom_stmt *init = thread_loop(B, L, &t1), *fin = thread_loop(B, L, &t2);
  if (!init || !fin)
    return NULL;
  init->u.loop.body = store(B, acc, i32(B, 0), identity(B, F->op, t));
  loom_expr *t0 = check(B, loom_ir_ref(B->a, t2));
  loom_expr *zero = t0 ? check(B, loom_ir_int(B->a, t0->dtype, 0)) : NULL;
  loom_stmt *last[2] = {across(B, F, acc, t2),
                        when(B, bin(B, LOOM_EXPR_EQ, t0, zero), write_back(B, F, acc))};
  if (!last[0] || !last[1] || !(fin->u.loop.body = seq(B, last, 2)))
    return NULL;
  loom_stmt *items[3] = {init, inner, fin};
  loom_stmt *r = alloc(B, acc, seq(B, items, 3));
  return B->is_nomem ? NULL : r;
}

typedef struct replace_ctx {
  const loom_stmt *const *olds;
  loom_stmt *const *news;
  int n;
} replace_ctx;

static loom_stmt *replace_pre(void *ctx, loom_stmt *s) {
  replace_ctx *C = ctx;
  for (int i = 0; i < C->n; i++)
    if (C->olds[i] == s)
      return C->news[i];
  return NULL;
}

loom_status lower_gpu_reductions(loom_arena *a, const loom_func *f, loom_func **out,
                                 loom_diag *d) {
  *out = (loom_func *)f;
  reduce_ctx *R = loom_arena_alloc(a, sizeof *R);
  if (!R)
    return LOOM_NOMEM;
  R->a = a;
  R->d = d;
  loom_ir_visitor v = {.stmt_pre = find_pre, .stmt_post = find_post, .ctx = R};
  loom_ir_visit_stmt(&v, f->body);
  if (R->st != LOOM_OK || R->n_found == 0)
    return R->st;
  const loom_stmt *olds[MAX_FOUND];
  loom_stmt *news[MAX_FOUND];
  builder B = {.a = a};
  for (int i = 0; i < R->n_found; i++) {
    olds[i] = R->found[i].loops[R->found[i].top];
    if (!(news[i] = rewrite_one(&B, &R->found[i])))
      return LOOM_NOMEM;
  }
  replace_ctx C = {olds, news, R->n_found};
  loom_ir_mutator m = {.stmt_pre = replace_pre, .ctx = &C};
  loom_func *nf = loom_arena_dup(a, f, sizeof *nf);
  if (!nf || !(nf->body = loom_ir_mutate_stmt(a, &m, f->body)))
    return LOOM_NOMEM;
  *out = nf;
  return LOOM_OK;
}
