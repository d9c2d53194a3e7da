/* Register tiles. A tiled matmul's micro-kernel lowers to
 *
 *   for k_1 in range(K):                      # the loop L
 *       for i_3 in range(8):                  # rows: serial or unrolled
 *           for j_3 in T.vectorized(32):
 *               C_global[f(i_3) + j_3] = C_global[f(i_3) + j_3] + A[..] * B[.. + j_3]
 *
 * and a C compiler keeps the accumulator in memory, loading and storing it
 * on every k step: the address of C_global moves with j_3, so loop-invariant
 * motion cannot lift it out of L. Here the accumulator is lifted by hand:
 * one GCC vector variable per row and 64-byte chunk, loaded before L,
 * updated inside it by vector arithmetic with the rows unrolled, and stored
 * after. The transformation is exact (the same additions in the same
 * order), and it applies only when it provably is: the store's index does
 * not move with L, every (row, lane) point of the nest is a distinct
 * element, nothing else in L reads or writes the accumulator, and every
 * access that moves with the lanes is contiguous. */
#include "codegen/codegen_impl.h"
#include "loom/arith.h"

#include <string.h>

#define MAX_NEST 8
#define MAX_LETS 16
#define MAX_ACCS 64        /* vector variables in one tile */
#define CHUNK_BYTES 64     /* one vector variable: a 512-bit register */

typedef struct tile {
  const loom_stmt *loop;             /* L */
  const loom_stmt *rows[MAX_NEST];   /* the loops between L and the lanes */
  int n_rows;
  const loom_stmt *lanes;            /* the vectorized loop */
  const loom_stmt *lets[MAX_LETS];   /* integer lets around the store */
  bool let_moves[MAX_LETS];          /* does the let move with the lanes? */
  int n_lets;
  const loom_stmt *store;
  const loom_expr *rest;             /* the value is acc + rest (or acc - rest) */
  bool is_sub;
  int64_t n_combos, chunk, n_chunks; /* row combinations; lanes per variable */
  const char *vt, *vtu;              /* the vector types: aligned, and for memory */
  const char *accs[MAX_ACCS];
} tile;

/* ---- analysis ----------------------------------------------------------------- */

typedef struct plan_ctx {
  loom_arena *a;
  loom_arith_ctx *ax;
  const tile *t;
  const loom_var *acc_data;
  bool reads_acc;
} plan_ctx;

static bool is_nest_loop(const loom_stmt *s, int64_t *ext) {
  int64_t min;
  return s->kind == LOOM_STMT_FOR &&
         loom_ir_is_const_int(s->u.loop.min, &min) && min == 0 &&
         loom_ir_is_const_int(s->u.loop.extent, ext) && *ext >= 1;
}

/* e with the tile's lets replaced by their values, innermost last. */
static loom_expr *unlet(plan_ctx *P, const loom_expr *e) {
  loom_expr *x = (loom_expr *)e;
  for (int i = P->t->n_lets - 1; i >= 0 && x; i--) {
    const loom_stmt *l = P->t->lets[i];
    loom_expr *v = l->u.let.value;
    x = loom_ir_substitute_expr(P->a, x, &l->u.let.var, &v, 1);
  }
  return x;
}

/* The constant by which the let-free index e moves when v moves by one;
 * false when that is not a constant. */
static bool coefficient(plan_ctx *P, loom_expr *e, loom_var *v, int64_t *c) {
  loom_expr *next = loom_ir_binary(P->a, LOOM_EXPR_ADD, loom_ir_ref(P->a, v),
                                   loom_ir_int(P->a, v->dtype, 1));
  loom_expr *moved = next ? loom_ir_substitute_expr(P->a, e, &v, &next, 1) : NULL;
  loom_expr *diff = moved ? loom_ir_binary(P->a, LOOM_EXPR_SUB, moved, e) : NULL;
  diff = diff ? loom_arith_simplify(P->a, P->ax, diff) : NULL;
  return diff && loom_ir_is_const_int(diff, c);
}

static bool uses_lane(plan_ctx *P, const loom_expr *e) {
  loom_expr *x = unlet(P, e);
  return !x || loom_ir_expr_uses(x, P->t->lanes->u.loop.var);
}

static loom_expr *find_acc(void *ctx, loom_expr *e) {
  plan_ctx *P = ctx;
  if (e->kind == LOOM_EXPR_LOAD && e->u.load.buffer->data == P->acc_data)
    P->reads_acc = true;
  return NULL;
}

/* Whether rest can be computed a chunk of lanes at a time: what does not
 * move with the lanes is a scalar the vector arithmetic broadcasts; what
 * does is + - * of contiguous loads. Every part has the accumulator's
 * type, so a scalar operand converts to the vector's element exactly. */
static bool is_vector_expr(plan_ctx *P, const loom_expr *e, loom_dtype t) {
  if (e->dtype.code != t.code || e->dtype.bits != t.bits || e->dtype.lanes != 1)
    return false;
  if (!uses_lane(P, e))
    return true;
  switch (e->kind) {
  case LOOM_EXPR_LOAD: {
    int64_t c;
    loom_expr *idx = e->u.load.n_indices == 1 ? unlet(P, e->u.load.indices[0]) : NULL;
    return idx && coefficient(P, idx, P->t->lanes->u.loop.var, &c) && c == 1;
  }
  case LOOM_EXPR_ADD: case LOOM_EXPR_SUB: case LOOM_EXPR_MUL:
    return is_vector_expr(P, e->u.bin.a, t) && is_vector_expr(P, e->u.bin.b, t);
  default: return false;
  }
}

/* Every (row, lane) point of the nest stores to its own element: with the
 * index's coefficients sorted, each exceeds the span of the smaller ones. */
static bool is_injective(plan_ctx *P, loom_expr *idx) {
  int64_t coef[MAX_NEST + 1], ext[MAX_NEST + 1];
  int n = 0;
  const tile *t = P->t;
  for (int i = 0; i <= t->n_rows; i++) {
    const loom_stmt *l = i < t->n_rows ? t->rows[i] : t->lanes;
    int64_t e, c;
    loom_ir_is_const_int(l->u.loop.extent, &e);
    if (e == 1)
      continue;
    if (!coefficient(P, idx, l->u.loop.var, &c) || c <= 0)
      return false;
    int j = n++;
    for (; j > 0 && coef[j - 1] > c; j--) {
      coef[j] = coef[j - 1];
      ext[j] = ext[j - 1];
    }
    coef[j] = c;
    ext[j] = e;
  }
  int64_t span = 0;
  for (int i = 0; i < n; i++) {
    if (coef[i] <= span)
      return false;
    span += coef[i] * (ext[i] - 1);
  }
  return true;
}

/* The store's value as acc + rest, rest + acc or acc - rest. */
static bool split_value(tile *t) {
  const loom_stmt *s = t->store;
  const loom_expr *v = s->u.store.value;
  if (v->kind != LOOM_EXPR_ADD && v->kind != LOOM_EXPR_SUB)
    return false;
  for (int side = 0; side < 2; side++) {
    const loom_expr *acc = side ? v->u.bin.b : v->u.bin.a;
    if (side && v->kind == LOOM_EXPR_SUB)
      break;
    if (acc->kind == LOOM_EXPR_LOAD && acc->u.load.buffer == s->u.store.buffer &&
        acc->u.load.n_indices == 1 &&
        loom_ir_same_expr(acc->u.load.indices[0], s->u.store.indices[0])) {
      t->rest = side ? v->u.bin.a : v->u.bin.b;
      t->is_sub = v->kind == LOOM_EXPR_SUB;
      return true;
    }
  }
  return false;
}

/* Reads the shape of the nest under loop into t. */
static bool match_nest(const loom_stmt *loop, tile *t) {
  memset(t, 0, sizeof *t);
  t->loop = loop;
  int64_t ext;
  if (loop->u.loop.kind != LOOM_FOR_SERIAL && loop->u.loop.kind != LOOM_FOR_UNROLLED)
    return false;
  const loom_stmt *s = loop->u.loop.body;
  t->n_combos = 1;
  while (s && is_nest_loop(s, &ext) &&
         (s->u.loop.kind == LOOM_FOR_SERIAL || s->u.loop.kind == LOOM_FOR_UNROLLED)) {
    if (t->n_rows == MAX_NEST)
      return false;
    t->rows[t->n_rows++] = s;
    t->n_combos *= ext;
    if (t->n_combos > MAX_ACCS)
      return false;
    s = s->u.loop.body;
  }
  if (!s || !is_nest_loop(s, &ext) || s->u.loop.kind != LOOM_FOR_VECTORIZED)
    return false;
  t->lanes = s;
  for (s = s->u.loop.body; s && s->kind == LOOM_STMT_LET; s = s->u.let.body) {
    if (t->n_lets == MAX_LETS || s->u.let.var->dtype.code != LOOM_DT_INT ||
        s->u.let.var->dtype.lanes != 1)
      return false;
    t->lets[t->n_lets++] = s;
  }
  if (!s || s->kind != LOOM_STMT_STORE || s->u.store.n_indices != 1)
    return false;
  t->store = s;
  loom_dtype d = s->u.store.buffer->dtype;
  if (d.code != LOOM_DT_FLOAT || (d.bits != 32 && d.bits != 64) || d.lanes != 1)
    return false;
  /* Chunks of 64 bytes, or the largest power of two dividing the lanes. */
  int64_t per = CHUNK_BYTES / (d.bits / 8);
  while (per > 1 && ext % per != 0)
    per /= 2;
  if (per < 2)
    return false;
  t->chunk = per;
  t->n_chunks = ext / per;
  return t->n_combos * t->n_chunks <= MAX_ACCS && split_value(t);
}

/* Whether loop is the L of a register tile E may emit; fills t. */
static bool plan(emitter *E, const loom_stmt *loop, tile *t) {
  if (!match_nest(loop, t))
    return false;
  const loom_buffer *acc = t->store->u.store.buffer;
  if (!E->is_noalias && loom_ptrmap_get(&E->locals, acc->data) < 0)
    return false;
  loom_arena *a = loom_arena_new();
  loom_arith_ctx *ax = loom_arith_ctx_new();
  plan_ctx P = {a, ax, t, acc->data, false};
  bool ok = false;
  loom_expr *idx = a && ax ? unlet(&P, t->store->u.store.indices[0]) : NULL;
  for (int i = 0; idx && i < t->n_lets; i++)
    t->let_moves[i] = uses_lane(&P, loom_ir_ref(a, t->lets[i]->u.let.var));
  if (idx && loom_ir_rewrite_expr(a, (loom_expr *)t->rest, find_acc, &P) && !P.reads_acc) {
    int64_t c;
    ok = !loom_ir_expr_uses(idx, loop->u.loop.var) &&
         coefficient(&P, idx, t->lanes->u.loop.var, &c) && c == 1 &&
         is_injective(&P, idx) &&
         is_vector_expr(&P, t->rest, acc->dtype);
  }
  loom_arith_ctx_free(ax);
  loom_arena_free(a);
  return ok;
}

/* ---- emission ----------------------------------------------------------------- */

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

/* Opens a scope binding the nest's variables for row combination q and
 * chunk c, with the lets; at_min also binds L's variable to its start (for
 * the loads and stores outside L, whose index does not depend on it). */
static void open_point(emitter *E, const tile *t, int64_t q, int64_t c, bool at_min) {
  emit_line_start(E);
  put(E, "{");
  if (at_min) {
    const loom_var *v = t->loop->u.loop.var;
    loom_buf_printf(E->out, " const %s %s = ", emit_value_type(v->dtype), emit_name(E, v));
    emit_expr(E, t->loop->u.loop.min);
    put(E, ";");
  }
  for (int i = t->n_rows - 1; i >= 0; i--) {
    int64_t ext;
    loom_ir_is_const_int(t->rows[i]->u.loop.extent, &ext);
    const loom_var *v = t->rows[i]->u.loop.var;
    loom_buf_printf(E->out, " const %s %s = %lld;", emit_value_type(v->dtype),
                    emit_name(E, v), (long long)(q % ext));
    q /= ext;
  }
  const loom_var *v = t->lanes->u.loop.var;
  loom_buf_printf(E->out, " const %s %s = %lld;\n", emit_value_type(v->dtype),
                  emit_name(E, v), (long long)(c * t->chunk));
  E->indent++;
  for (int i = 0; i < t->n_lets; i++)
    emit_let_line(E, t->lets[i]);
}

static void close_point(emitter *E) {
  E->indent--;
  emit_line_start(E);
  put(E, "}\n");
}

/* The accumulator's chunk in memory, as an lvalue of the memory type. */
static void emit_chunk(emitter *E, const tile *t, const loom_expr *load_or_null) {
  const loom_stmt *s = t->store;
  const loom_buffer *b = load_or_null ? load_or_null->u.load.buffer : s->u.store.buffer;
  const loom_expr *idx = load_or_null ? load_or_null->u.load.indices[0] : s->u.store.indices[0];
  loom_buf_printf(E->out, "(*(%s *)&%s[", t->vtu, emit_name(E, b->data));
  emit_expr(E, idx);
  put(E, "])");
}

/* Does e move with the lanes, directly or through a let? */
static bool moves(const tile *t, const loom_expr *e) {
  if (loom_ir_expr_uses(e, t->lanes->u.loop.var))
    return true;
  for (int i = 0; i < t->n_lets; i++)
    if (t->let_moves[i] && loom_ir_expr_uses(e, t->lets[i]->u.let.var))
      return true;
  return false;
}

static void emit_vector_expr(emitter *E, const tile *t, const loom_expr *e) {
  if (e->kind == LOOM_EXPR_LOAD && moves(t, e)) {
    emit_chunk(E, t, e);
    return;
  }
  if ((e->kind == LOOM_EXPR_ADD || e->kind == LOOM_EXPR_SUB || e->kind == LOOM_EXPR_MUL) &&
      moves(t, e)) {
    const char *op = e->kind == LOOM_EXPR_ADD ? " + " : e->kind == LOOM_EXPR_SUB ? " - " : " * ";
    put(E, "(");
    emit_vector_expr(E, t, e->u.bin.a);
    put(E, op);
    emit_vector_expr(E, t, e->u.bin.b);
    put(E, ")");
    return;
  }
  emit_expr(E, e);
}

/* Before L: the scope, the vector types, and the accumulators loaded. */
static void tile_open(emitter *E, tile *t) {
  emit_note_loop(E, t->loop);
  for (int i = 0; i < t->n_rows; i++)
    emit_note_loop(E, t->rows[i]);
  emit_note_loop(E, t->lanes);
  loom_dtype d = t->store->u.store.buffer->dtype;
  const char *ty = emit_value_type(d);
  int bytes = (int)(t->chunk * (d.bits / 8));
  emit_line_start(E);
  put(E, "{\n");
  E->indent++;
  t->vt = emit_fresh(E, "vec");
  t->vtu = emit_fresh(E, "vec_mem");
  emit_line_start(E);
  loom_buf_printf(E->out, "typedef %s %s __attribute__((vector_size(%d)));\n", ty, t->vt, bytes);
  emit_line_start(E);
  loom_buf_printf(E->out,
                  "typedef %s %s __attribute__((vector_size(%d), aligned(%d), may_alias));\n",
                  ty, t->vtu, bytes, d.bits / 8);
  for (int64_t q = 0; q < t->n_combos; q++)
    for (int64_t c = 0; c < t->n_chunks; c++) {
      const char *acc = emit_fresh(E, "acc");
      t->accs[q * t->n_chunks + c] = acc;
      emit_line_start(E);
      loom_buf_printf(E->out, "%s %s;\n", t->vt, acc);
      open_point(E, t, q, c, true);
      emit_line_start(E);
      loom_buf_printf(E->out, "%s = ", acc);
      emit_chunk(E, t, NULL);
      put(E, ";\n");
      close_point(E);
    }
}

/* L's body: each row combination and chunk in turn. */
static void tile_body(emitter *E, const void *ctx) {
  const tile *t = ctx;
  E->indent++;
  for (int64_t q = 0; q < t->n_combos; q++)
    for (int64_t c = 0; c < t->n_chunks; c++) {
      const char *acc = t->accs[q * t->n_chunks + c];
      open_point(E, t, q, c, false);
      emit_line_start(E);
      loom_buf_printf(E->out, "%s = %s %s ", acc, acc, t->is_sub ? "-" : "+");
      emit_vector_expr(E, t, t->rest);
      put(E, ";\n");
      close_point(E);
    }
  E->indent--;
}

/* After L: the accumulators stored, and the scope closed. */
static void tile_close(emitter *E, const tile *t) {
  for (int64_t q = 0; q < t->n_combos; q++)
    for (int64_t c = 0; c < t->n_chunks; c++) {
      open_point(E, t, q, c, true);
      emit_line_start(E);
      emit_chunk(E, t, NULL);
      loom_buf_printf(E->out, " = %s;\n", t->accs[q * t->n_chunks + c]);
      close_point(E);
    }
  E->indent--;
  emit_line_start(E);
  put(E, "}\n");
}

bool emit_register_tile(emitter *E, const loom_stmt *s) {
  tile t;
  if (E->is_cuda || !plan(E, s, &t)) /* GCC vectors: the C backend's own */
    return false;
  tile_open(E, &t);
  emit_loop(E, s, tile_body, &t);
  tile_close(E, &t);
  return true;
}
