/* The commutative reducers rfactor recognises, one table row each: how many
 * buffers they update together, their identities and their combiner. A
 * block matches a reducer when its init stores the identities and each
 * update stores combine(current value, something), found by matching the
 * combiner as a pattern whose holes are the operands (TVM's reducer
 * registry: sum, product, min, max, a two-buffer sum, argmax and argmin
 * with and without the lowest-index tie break). */
#include "schedule/reducer.h"

#include <float.h>
#include <string.h>

typedef enum {
  ID_ZERO,
  ID_ONE,
  ID_MINUS_ONE,
  ID_MAX_VALUE, /* the largest value of the dtype */
  ID_MIN_VALUE, /* the smallest */
} identity_kind;

typedef struct builder {
  loom_arena *a;
  bool oom;
} builder;

static loom_expr *bin(builder *b, loom_expr_kind k, loom_expr *x,
                      loom_expr *y) {
  loom_expr *e = loom_ir_binary(b->a, k, x, y);
  b->oom |= !e;
  return e;
}

static loom_expr *sel(builder *b, loom_expr *c, loom_expr *t, loom_expr *f) {
  loom_expr *e = loom_ir_select(b->a, c, t, f);
  b->oom |= !e;
  return e;
}

static void sum(builder *b, loom_expr *const *x, loom_expr *const *y,
                loom_expr **o) {
  o[0] = bin(b, LOOM_EXPR_ADD, x[0], y[0]);
}
static void prod(builder *b, loom_expr *const *x, loom_expr *const *y,
                 loom_expr **o) {
  o[0] = bin(b, LOOM_EXPR_MUL, x[0], y[0]);
}
static void min1(builder *b, loom_expr *const *x, loom_expr *const *y,
                 loom_expr **o) {
  o[0] = bin(b, LOOM_EXPR_MIN, x[0], y[0]);
}
static void max1(builder *b, loom_expr *const *x, loom_expr *const *y,
                 loom_expr **o) {
  o[0] = bin(b, LOOM_EXPR_MAX, x[0], y[0]);
}
static void sum2(builder *b, loom_expr *const *x, loom_expr *const *y,
                 loom_expr **o) {
  o[0] = bin(b, LOOM_EXPR_ADD, x[0], y[0]);
  o[1] = bin(b, LOOM_EXPR_ADD, x[1], y[1]);
}
/* (index, value) pairs: keep x when its value wins (or ties). */
static void arg_keep(builder *b, loom_expr_kind cmp, loom_expr *const *x,
                     loom_expr *const *y, loom_expr **o) {
  o[0] = sel(b, bin(b, cmp, x[1], y[1]), x[0], y[0]);
  o[1] = sel(b, bin(b, cmp, x[1], y[1]), x[1], y[1]);
}
static void argmax(builder *b, loom_expr *const *x, loom_expr *const *y,
                   loom_expr **o) {
  arg_keep(b, LOOM_EXPR_GE, x, y, o);
}
static void argmin(builder *b, loom_expr *const *x, loom_expr *const *y,
                   loom_expr **o) {
  arg_keep(b, LOOM_EXPR_LE, x, y, o);
}
/* Strictly better value, or an equal value at a lower index. */
static void arg_first(builder *b, loom_expr_kind cmp, loom_expr *const *x,
                      loom_expr *const *y, loom_expr **o) {
  loom_expr *tie = bin(b, LOOM_EXPR_AND, bin(b, LOOM_EXPR_EQ, x[1], y[1]),
                       bin(b, LOOM_EXPR_LT, x[0], y[0]));
  o[0] = sel(b, bin(b, LOOM_EXPR_OR, bin(b, cmp, x[1], y[1]), tie), x[0],
             y[0]);
  o[1] = sel(b, bin(b, cmp, x[1], y[1]), x[1], y[1]);
}
static void argmax_first(builder *b, loom_expr *const *x, loom_expr *const *y,
                         loom_expr **o) {
  arg_first(b, LOOM_EXPR_GT, x, y, o);
}
static void argmin_first(builder *b, loom_expr *const *x, loom_expr *const *y,
                         loom_expr **o) {
  arg_first(b, LOOM_EXPR_LT, x, y, o);
}

typedef struct reducer_info {
  const char *name;
  int n;
  identity_kind identity[2];
  void (*combine)(builder *b, loom_expr *const *x, loom_expr *const *y,
                  loom_expr **out);
} reducer_info;

/* In TVM's order: the first row that matches wins. */
static const reducer_info reducers[] = {
    {"sum", 1, {ID_ZERO}, sum},
    {"product", 1, {ID_ONE}, prod},
    {"min", 1, {ID_MAX_VALUE}, min1},
    {"max", 1, {ID_MIN_VALUE}, max1},
    {"sum of two", 2, {ID_ZERO, ID_ZERO}, sum2},
    {"argmax", 2, {ID_MINUS_ONE, ID_MIN_VALUE}, argmax},
    {"argmax (first index)", 2, {ID_MINUS_ONE, ID_MIN_VALUE}, argmax_first},
    {"argmin", 2, {ID_MINUS_ONE, ID_MAX_VALUE}, argmin},
    {"argmin (first index)", 2, {ID_MINUS_ONE, ID_MAX_VALUE}, argmin_first},
};
#define N_REDUCERS ((int)(sizeof reducers / sizeof reducers[0]))

bool sched_reducer_combine(loom_arena *a, int r, loom_expr *const *x,
                           loom_expr *const *y, loom_expr **out) {
  builder b = {a, false};
  reducers[r].combine(&b, x, y, out);
  return !b.oom;
}

/* The identity as a constant of dtype t; NULL for a dtype without one. */
static loom_expr *identity(loom_arena *a, identity_kind k, loom_dtype t) {
  bool is_max = k == ID_MAX_VALUE;
  int64_t iv = k == ID_ZERO ? 0 : k == ID_ONE ? 1 : -1;
  if (t.lanes != 1)
    return NULL;
  switch (t.code) {
  case LOOM_DT_INT:
    if (k == ID_MAX_VALUE || k == ID_MIN_VALUE) {
      if (t.bits < 2 || t.bits > 64)
        return NULL;
      int64_t hi = t.bits == 64 ? INT64_MAX : (INT64_C(1) << (t.bits - 1)) - 1;
      iv = is_max ? hi : -hi - 1;
    }
    return loom_ir_int(a, t, iv);
  case LOOM_DT_UINT:
    if (k == ID_MINUS_ONE)
      return NULL;
    if (k == ID_MAX_VALUE || k == ID_MIN_VALUE) {
      if (t.bits < 1 || t.bits > 64)
        return NULL;
      iv = !is_max ? 0
           : t.bits == 64 ? -1 /* stored bitwise */
                          : (int64_t)((UINT64_C(1) << t.bits) - 1);
    }
    return loom_ir_int(a, t, iv);
  case LOOM_DT_FLOAT:
  case LOOM_DT_BFLOAT: {
    double fv = (double)iv;
    if (k == ID_MAX_VALUE || k == ID_MIN_VALUE) {
      double hi = t.code == LOOM_DT_BFLOAT ? 3.3895313892515355e38
                  : t.bits == 16           ? 65504.0
                  : t.bits == 32           ? (double)FLT_MAX
                                           : DBL_MAX;
      fv = is_max ? hi : -hi;
    }
    return loom_ir_float(a, t, fv);
  }
  default:
    return NULL;
  }
}

/* ---- pattern matching ----------------------------------------------------- */

/* The holes of a pattern are the variables of holes[]; fills[] records what
 * each matched first, and a hole met again must match the same tree. */
typedef struct matcher {
  loom_var *const *holes;
  loom_expr **fills;
  int n_holes;
} matcher;

static bool match(matcher *m, const loom_expr *p, loom_expr *e, int depth) {
  if (depth > 64)
    return false;
  if (p->kind == LOOM_EXPR_VAR)
    for (int i = 0; i < m->n_holes; i++)
      if (m->holes[i] == p->u.var) {
        if (!m->fills[i]) {
          m->fills[i] = e;
          return true;
        }
        return loom_ir_same_expr(m->fills[i], e);
      }
  if (p->kind != e->kind)
    return false;
  switch (p->kind) {
  case LOOM_EXPR_SELECT:
    return match(m, p->u.select.cond, e->u.select.cond, depth + 1) &&
           match(m, p->u.select.t, e->u.select.t, depth + 1) &&
           match(m, p->u.select.f, e->u.select.f, depth + 1);
  case LOOM_EXPR_ADD: case LOOM_EXPR_SUB: case LOOM_EXPR_MUL:
  case LOOM_EXPR_MIN: case LOOM_EXPR_MAX: case LOOM_EXPR_EQ:
  case LOOM_EXPR_NE: case LOOM_EXPR_LT: case LOOM_EXPR_LE:
  case LOOM_EXPR_GT: case LOOM_EXPR_GE: case LOOM_EXPR_AND:
  case LOOM_EXPR_OR:
    return match(m, p->u.bin.a, e->u.bin.a, depth + 1) &&
           match(m, p->u.bin.b, e->u.bin.b, depth + 1);
  default:
    return loom_ir_same_expr(p, e);
  }
}

/* Tries reducer r on the updates; fills lhs and rhs on success. */
static bool try_reducer(loom_arena *a, int r, sched_reduction *red,
                        loom_expr **values, bool *oom) {
  const reducer_info *ri = &reducers[r];
  if (ri->n != red->n)
    return false;
  for (int i = 0; i < red->n; i++) {
    loom_expr *id = identity(a, ri->identity[i], red->identity[i]->dtype);
    if (!id || !loom_ir_same_expr(id, red->identity[i]))
      return false;
  }
  loom_var *holes[2 * SCHED_MAX_REDUCE_BUFFERS];
  loom_expr *x[SCHED_MAX_REDUCE_BUFFERS], *y[SCHED_MAX_REDUCE_BUFFERS];
  loom_expr *pat[SCHED_MAX_REDUCE_BUFFERS];
  for (int i = 0; i < red->n; i++) {
    loom_dtype t = red->identity[i]->dtype;
    holes[i] = loom_ir_var(a, "x", t);
    holes[red->n + i] = loom_ir_var(a, "y", t);
    x[i] = holes[i] ? loom_ir_ref(a, holes[i]) : NULL;
    y[i] = holes[red->n + i] ? loom_ir_ref(a, holes[red->n + i]) : NULL;
    if (!x[i] || !y[i]) {
      *oom = true;
      return false;
    }
  }
  if (!sched_reducer_combine(a, r, x, y, pat)) {
    *oom = true;
    return false;
  }
  loom_expr *fills[2 * SCHED_MAX_REDUCE_BUFFERS] = {0};
  matcher m = {holes, fills, 2 * red->n};
  for (int i = 0; i < red->n; i++)
    if (!match(&m, pat[i], values[i], 0))
      return false;
  for (int i = 0; i < red->n; i++) {
    loom_expr *cur = loom_ir_load(a, red->buffers[i], red->indices,
                                  red->n_indices);
    if (!cur) {
      *oom = true;
      return false;
    }
    /* Each buffer's own current value must be the left operand. */
    loom_expr *l = fills[i];
    if (!l || l->kind != LOOM_EXPR_LOAD || l->u.load.buffer != red->buffers[i] ||
        !loom_ir_same_expr(cur, l))
      return false;
    red->lhs[i] = l;
    red->rhs[i] = fills[red->n + i];
  }
  return true;
}

/* ---- reading the block ------------------------------------------------------- */

static const char *conditions[] = {
    "",
    "its init must be one buffer store or a sequence of them",
    "its init must store to different buffers",
    "its body must bind as many let variables as its init has stores",
    "the let variables of its body must all differ",
    "under its lets there must be one buffer store or a sequence of them",
    "its body must have as many stores as its init",
    "each store of its body must store one of its let variables",
    "each let variable must be stored once",
    "each store of its body must write a different buffer",
    "its init and its body must write the same buffers",
    "the buffers it writes must have the same shape",
    "all its stores must use the same indices",
};

static const char *fail(char *why, size_t n, const loom_block *b, int cond) {
  snprintf(why, n,
           "block '%s' is not a reduction rfactor can split (condition "
           "#%d): %s",
           b->name, cond, conditions[cond]);
  return why;
}

typedef struct buffer_set {
  const loom_buffer *const *bufs;
  int n;
  bool hit;
} buffer_set;

static loom_expr *note_load(void *ctx, loom_expr *e) {
  buffer_set *s = ctx;
  for (int i = 0; e->kind == LOOM_EXPR_LOAD && i < s->n; i++)
    s->hit |= e->u.load.buffer == s->bufs[i];
  return NULL;
}

/* Whether e loads one of bufs[0, n); *oom when out of memory. */
static bool loads_any(loom_expr *e, const loom_buffer *const *bufs, int n,
                      bool *oom) {
  buffer_set s = {bufs, n, false};
  loom_arena *a = loom_arena_new();
  *oom = !a || !loom_ir_rewrite_expr(a, e, note_load, &s);
  loom_arena_free(a);
  return s.hit;
}

/* A body of plain stores, one per buffer (`s1[i] = s1[i] + x` then
 * `s2[i] = s2[i] + x * x`), reads as the same stores of lets would, as
 * long as no store loads a buffer an earlier one updated. Fills updates
 * and values in the stores' order; NULL or why not. */
static const char *read_stores(const loom_block *b, const loom_stmt *seq,
                               int n, const loom_stmt **updates,
                               loom_expr **values, char *why, size_t n_why) {
  const loom_buffer *bufs[SCHED_MAX_REDUCE_BUFFERS];
  if (seq->u.seq.n_stmts != n)
    return fail(why, n_why, b, 6);
  for (int j = 0; j < n; j++) {
    const loom_stmt *st = seq->u.seq.stmts[j];
    for (int k = 0; k < j; k++)
      if (bufs[k] == st->u.store.buffer)
        return fail(why, n_why, b, 9);
    bool oom;
    bool chained = loads_any(st->u.store.value, bufs, j, &oom);
    if (oom) {
      snprintf(why, n_why, "out of memory");
      return why;
    }
    if (chained) {
      snprintf(why, n_why,
               "block '%s' is not a reduction rfactor can split: the update "
               "of '%s' reads a buffer an earlier store updates (bind the "
               "values to lets first)",
               b->name, st->u.store.buffer->name);
      return why;
    }
    bufs[j] = st->u.store.buffer;
    updates[j] = st;
    values[j] = st->u.store.value;
  }
  return NULL;
}

static bool is_store_seq(const loom_stmt *s) {
  if (s->kind != LOOM_STMT_SEQ)
    return false;
  for (int i = 0; i < s->u.seq.n_stmts; i++)
    if (s->u.seq.stmts[i]->kind != LOOM_STMT_STORE)
      return false;
  return true;
}

static bool same_indices(const loom_stmt *s, loom_expr **idx, int n) {
  if (s->u.store.n_indices != n)
    return false;
  for (int d = 0; d < n; d++)
    if (!loom_ir_same_expr(s->u.store.indices[d], idx[d]))
      return false;
  return true;
}

static bool same_shape(const loom_buffer *x, const loom_buffer *y) {
  if (x->ndim != y->ndim)
    return false;
  for (int d = 0; d < x->ndim; d++) {
    int64_t u, v;
    if (!loom_ir_same_expr(x->shape[d], y->shape[d]) &&
        !(loom_ir_is_const_int(x->shape[d], &u) &&
          loom_ir_is_const_int(y->shape[d], &v) && u == v))
      return false;
  }
  return true;
}

const char *sched_match_reduction(const loom_block *b, sched_reduction *out,
                                  char *why, size_t n_why) {
  enum { N = SCHED_MAX_REDUCE_BUFFERS };
  memset(out, 0, sizeof *out);
  const loom_stmt *inits[N];
  int n = 0;
  const loom_stmt *init = b->init;
  if (!init)
    return fail(why, n_why, b, 1);
  if (init->kind == LOOM_STMT_STORE) {
    inits[n++] = init;
  } else if (init->kind == LOOM_STMT_SEQ) {
    for (int i = 0; i < init->u.seq.n_stmts; i++) {
      const loom_stmt *s = init->u.seq.stmts[i];
      if (s->kind != LOOM_STMT_STORE)
        return fail(why, n_why, b, 1);
      for (int k = 0; k < n; k++)
        if (inits[k]->u.store.buffer == s->u.store.buffer)
          return fail(why, n_why, b, 2);
      if (n == N) {
        snprintf(why, n_why, "block '%s' updates more than %d buffers together",
                 b->name, N);
        return why;
      }
      inits[n++] = s;
    }
  } else {
    return fail(why, n_why, b, 1);
  }

  /* The updates: one store, or n lets over n stores of the let variables. */
  const loom_stmt *updates[N] = {0};
  loom_expr *values[N];
  const loom_stmt *body = b->body;
  if (body->kind == LOOM_STMT_STORE) {
    if (n != 1)
      return fail(why, n_why, b, 6);
    updates[0] = body;
    values[0] = body->u.store.value;
  } else if (is_store_seq(body)) {
    const char *bad = read_stores(b, body, n, updates, values, why, n_why);
    if (bad)
      return bad;
  } else {
    const loom_var *let_vars[N];
    loom_expr *let_values[N];
    const loom_stmt *s = body;
    for (int i = 0; i < n; i++) {
      if (s->kind != LOOM_STMT_LET)
        return fail(why, n_why, b, 3);
      for (int k = 0; k < i; k++)
        if (let_vars[k] == s->u.let.var)
          return fail(why, n_why, b, 4);
      let_vars[i] = s->u.let.var;
      let_values[i] = s->u.let.value;
      s = s->u.let.body;
    }
    if (s->kind == LOOM_STMT_LET)
      return fail(why, n_why, b, 3);
    const loom_stmt *const *seq = &s;
    int n_seq = 1;
    if (s->kind == LOOM_STMT_SEQ) {
      seq = (const loom_stmt *const *)s->u.seq.stmts;
      n_seq = s->u.seq.n_stmts;
    } else if (s->kind != LOOM_STMT_STORE) {
      return fail(why, n_why, b, 5);
    }
    if (n_seq != n)
      return fail(why, n_why, b, 6);
    bool seen[N] = {false};
    const loom_buffer *bufs[N];
    for (int j = 0; j < n; j++) {
      const loom_stmt *st = seq[j];
      if (st->kind != LOOM_STMT_STORE)
        return fail(why, n_why, b, 5);
      const loom_expr *v = st->u.store.value;
      int idx = -1;
      for (int k = 0; v->kind == LOOM_EXPR_VAR && k < n; k++)
        if (let_vars[k] == v->u.var)
          idx = k;
      if (idx < 0)
        return fail(why, n_why, b, 7);
      if (seen[idx])
        return fail(why, n_why, b, 8);
      for (int k = 0; k < j; k++)
        if (bufs[k] == st->u.store.buffer)
          return fail(why, n_why, b, 9);
      bufs[j] = st->u.store.buffer;
      seen[idx] = true;
      updates[idx] = st;
      values[idx] = let_values[idx];
    }
  }

  out->n = n;
  out->indices = updates[0]->u.store.indices;
  out->n_indices = updates[0]->u.store.n_indices;
  for (int i = 0; i < n; i++) {
    out->buffers[i] = updates[i]->u.store.buffer;
    out->identity[i] = NULL;
  }
  for (int i = 0; i < n; i++) {
    if (!same_shape(updates[i]->u.store.buffer, out->buffers[0]))
      return fail(why, n_why, b, 11);
    if (!same_indices(inits[i], out->indices, out->n_indices) ||
        !same_indices(updates[i], out->indices, out->n_indices))
      return fail(why, n_why, b, 12);
    int idx = -1;
    for (int k = 0; k < n; k++)
      if (out->buffers[k] == inits[i]->u.store.buffer)
        idx = k;
    if (idx < 0)
      return fail(why, n_why, b, 10);
    out->identity[idx] = inits[i]->u.store.value;
  }

  loom_arena *scratch = loom_arena_new();
  if (!scratch) {
    snprintf(why, n_why, "out of memory");
    return why;
  }
  bool oom = false;
  int found = -1;
  for (int r = 0; r < N_REDUCERS && found < 0 && !oom; r++)
    if (try_reducer(scratch, r, out, values, &oom))
      found = r;
  loom_arena_free(scratch);
  if (oom) {
    snprintf(why, n_why, "out of memory");
    return why;
  }
  if (found < 0) {
    snprintf(why, n_why,
             "block '%s' matches no known commutative reducer: its init "
             "and update are not those of a sum, product, min, max, "
             "argmax or argmin",
             b->name);
    return why;
  }
  out->reducer = found;
  return NULL;
}
