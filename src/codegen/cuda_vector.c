/* Vector loads and stores in CUDA: the loop
 *
 *   for lane in T.vectorized(L): [integer lets] D[d] = value
 *
 * where d moves by one element with the lane, and so does every load of
 * the value that moves with it at all, is printed a chunk of lanes at a
 * time: each such load one vector load (uint4, uint2 or a 32-bit word)
 * into a register, the lanes computed from its elements, the chunk stored
 * as one vector. A plain copy (the value a load of D's type) is one vector
 * move. CUDA compiles the loop otherwise into loads and stores of one
 * element each: for 2-byte elements an eighth of what one instruction can
 * move. An unrolled loop whose loads from global memory move so has those
 * loads read first as vectors, and then runs in order as written.
 *
 * A vector access must be aligned to its width. The bases are: kernel
 * parameters come from cuMemAlloc (256 bytes), shared and local buffers
 * are placed at 16 bytes (lower/gpu.c, cuda.c). The offsets are checked
 * here: each access's offset at a chunk's first lane must be a multiple of
 * the chunk, which the modular analysis of the indices proves
 * (loom_arith_modular_of). A loop it cannot prove keeps its scalar form.
 * So does one whose value reads D other than where it stores: the chunk
 * loads before it stores. */
#include "codegen/codegen_impl.h"
#include "loom/arith.h"

#include <string.h>

#define MAX_LETS 16
#define MAX_ACCESSES 16

/* The store (accesses[0]) and each load that moves with the lanes. */
typedef struct access {
  const loom_expr *load; /* NULL for the store */
  const loom_buffer *buffer;
  const loom_expr *index;
  int64_t elem_bytes;
  loom_expr *base; /* the index at lane 0, lets replaced (analysis only) */
} access;

typedef struct vloop {
  const loom_stmt *loop, *store;
  const loom_stmt *lets[MAX_LETS];
  int n_lets;
  int64_t lanes;
  access accesses[MAX_ACCESSES];
  int n_accesses;
  bool is_copy;  /* the value is a load of the store's type, moving too */
  bool is_hoist; /* an unrolled loop: only its loads from memory are vectors */
  int64_t chunk; /* lanes per vector access */
  bool ok;
} vloop;

static bool divides(int64_t n, const loom_expr *e) {
  loom_arith_modular m = loom_arith_modular_of(e);
  return m.coef % n == 0 && m.base % n == 0;
}

/* e with the loop's lets replaced by their values, innermost first. */
static loom_expr *unlet(loom_arena *a, const vloop *c, const loom_expr *e) {
  loom_expr *x = (loom_expr *)e;
  for (int i = c->n_lets - 1; i >= 0 && x; i--) {
    const loom_stmt *l = c->lets[i];
    loom_expr *v = l->u.let.value;
    x = loom_ir_substitute_expr(a, x, &l->u.let.var, &v, 1);
  }
  return x;
}

static loom_visit find_load(void *ctx, loom_expr *e) {
  if (e->kind == LOOM_EXPR_LOAD || e->kind == LOOM_EXPR_CALL)
    *(bool *)ctx = true;
  return LOOM_VISIT_GO;
}

static bool reads_memory(const loom_expr *e) {
  bool found = false;
  loom_ir_visitor v = {.expr_pre = find_load, .ctx = &found};
  loom_ir_visit_expr(&v, (loom_expr *)e);
  return found;
}

typedef struct lanes {
  loom_arena *a;
  loom_arith_ctx *ax;
  loom_var *lane;
  int64_t n;
} lanes;

/* (r + lane) // c and (r + lane) % c, where r is a multiple of the lanes'
 * count and c of that too, are r // c and r % c + lane: the lanes stay
 * within one span of c. The simplifier has no rule for it; without it, a
 * fused and split copy (row (f * 8 + lane) // 32, column ... % 32) would
 * never prove contiguous. */
static loom_expr *drop_lane(void *ctx, loom_expr *e) {
  lanes *L = ctx;
  int64_t c;
  if ((e->kind != LOOM_EXPR_FLOORDIV && e->kind != LOOM_EXPR_FLOORMOD) ||
      !loom_ir_is_const_int(e->u.bin.b, &c) || c <= 0 || c % L->n != 0 ||
      e->dtype.code != L->lane->dtype.code || e->dtype.bits != L->lane->dtype.bits)
    return NULL;
  loom_expr *lane = loom_ir_ref(L->a, L->lane);
  loom_expr *r = lane ? loom_ir_binary(L->a, LOOM_EXPR_SUB, e->u.bin.a, lane) : NULL;
  r = r ? loom_arith_simplify(L->a, L->ax, r) : NULL;
  if (!r || loom_ir_expr_uses(r, L->lane) || !divides(L->n, r))
    return NULL;
  loom_expr *q = loom_ir_binary(L->a, e->kind, r, e->u.bin.b);
  return e->kind == LOOM_EXPR_FLOORDIV || !q ? q : loom_ir_binary(L->a, LOOM_EXPR_ADD, q, lane);
}

/* The index at lane 0 (into *base) when it moves by one element with the
 * lane, over all the lanes. */
static bool is_contiguous(loom_arena *a, loom_arith_ctx *ax, const vloop *c,
                          const loom_expr *index, loom_expr **base) {
  loom_var *lane = c->loop->u.loop.var;
  loom_expr *i = unlet(a, c, index);
  if (!i || reads_memory(i))
    return false;
  loom_expr *zero = loom_ir_int(a, lane->dtype, 0);
  *base = zero ? loom_ir_substitute_expr(a, i, &lane, &zero, 1) : NULL;
  lanes L = {a, ax, lane, c->lanes};
  loom_expr *moved = loom_ir_rewrite_expr(a, i, drop_lane, &L);
  loom_expr *diff = moved && *base ? loom_ir_binary(a, LOOM_EXPR_SUB, moved, *base) : NULL;
  diff = diff ? loom_arith_simplify(a, ax, diff) : NULL;
  return diff && diff->kind == LOOM_EXPR_VAR && diff->u.var == lane;
}

static bool is_plain_type(loom_dtype t) {
  return t.lanes == 1 && t.code != LOOM_DT_BOOL && t.bits >= 8 && t.bits % 8 == 0;
}

typedef struct planning {
  vloop *c;
  loom_arena *a;
  loom_arith_ctx *ax;
  const emitter *E;
} planning;

/* Each load of the value: one that does not move with the lanes stays as
 * it is; one that does must be contiguous, and not read the stored buffer
 * elsewhere than the store. */
static loom_visit note_load(void *ctx, loom_expr *e) {
  planning *P = ctx;
  vloop *c = P->c;
  if (e->kind != LOOM_EXPR_LOAD || !c->ok)
    return LOOM_VISIT_GO;
  const loom_buffer *b = e->u.load.buffer;
  const loom_buffer *out = c->store->u.store.buffer;
  loom_expr *i = e->u.load.n_indices == 1 ? unlet(P->a, c, e->u.load.indices[0]) : NULL;
  if (!i || reads_memory(i) || !is_plain_type(b->dtype)) {
    c->ok = false;
    return LOOM_VISIT_STOP;
  }
  if (b->data == out->data &&
      !loom_ir_same_expr(e->u.load.indices[0], c->store->u.store.indices[0])) {
    c->ok = false;
    return LOOM_VISIT_STOP;
  }
  if (!loom_ir_expr_uses(i, c->loop->u.loop.var))
    return LOOM_VISIT_SKIP;
  /* Hoisted out of a loop that runs in order, a load must not see the
   * loop's own stores: global memory other than the stored buffer, which
   * __restrict__ says no other parameter aliases. */
  if (c->is_hoist && (b->data == out->data || !P->E->is_noalias ||
                      loom_ptrmap_get(&P->E->locals, b->data) >= 0)) {
    c->ok = false;
    return LOOM_VISIT_STOP;
  }
  access *x = &c->accesses[c->n_accesses];
  if (c->n_accesses == MAX_ACCESSES ||
      !is_contiguous(P->a, P->ax, c, e->u.load.indices[0], &x->base)) {
    c->ok = false;
    return LOOM_VISIT_STOP;
  }
  x->load = e;
  x->buffer = b;
  x->index = e->u.load.indices[0];
  x->elem_bytes = b->dtype.bits / 8;
  c->n_accesses++;
  return LOOM_VISIT_SKIP;
}

/* The widest chunk, 16 bytes at most a vector, that the lanes fill whole
 * and every access is aligned to; 0 when none is of 4 bytes or more. */
static int64_t widest_chunk(const vloop *c) {
  int64_t max_bytes = 1, min_bytes = 16;
  for (int i = 0; i < c->n_accesses; i++) {
    int64_t b = c->accesses[i].elem_bytes;
    max_bytes = b > max_bytes ? b : max_bytes;
    min_bytes = b < min_bytes ? b : min_bytes;
  }
  for (int64_t n = 16 / max_bytes; n > 1 && n * min_bytes >= 4; n /= 2) {
    bool fits = c->lanes % n == 0;
    for (int i = 0; fits && i < c->n_accesses; i++)
      fits = divides(n, c->accesses[i].base);
    if (fits)
      return n;
  }
  return 0;
}

/* A vectorized loop (every access a vector), or an unrolled one of at most
 * 16 steps whose loads from global memory all move with it (those loads
 * alone become vectors, read before the loop runs in order: a thread's
 * share of a row summed, say). */
static bool plan(const emitter *E, const loom_stmt *loop, vloop *c) {
  int64_t min;
  memset(c, 0, sizeof *c);
  c->loop = loop;
  c->is_hoist = loop->u.loop.kind == LOOM_FOR_UNROLLED;
  if ((loop->u.loop.kind != LOOM_FOR_VECTORIZED && !c->is_hoist) ||
      !loom_ir_is_const_int(loop->u.loop.min, &min) || min != 0 ||
      !loom_ir_is_const_int(loop->u.loop.extent, &c->lanes) || c->lanes < 2 ||
      (c->is_hoist && c->lanes > 16))
    return false;
  const loom_stmt *s = loop->u.loop.body;
  for (; s && s->kind == LOOM_STMT_LET; s = s->u.let.body) {
    if (c->n_lets == MAX_LETS || s->u.let.var->dtype.code != LOOM_DT_INT ||
        s->u.let.var->dtype.lanes != 1 || reads_memory(s->u.let.value))
      return false;
    c->lets[c->n_lets++] = s;
  }
  if (!s || s->kind != LOOM_STMT_STORE || s->u.store.n_indices != 1 ||
      !is_plain_type(s->u.store.buffer->dtype))
    return false;
  c->store = s;
  loom_arena *a = loom_arena_new();
  loom_arith_ctx *ax = loom_arith_ctx_new();
  access *out = &c->accesses[0];
  out->buffer = s->u.store.buffer;
  out->index = s->u.store.indices[0];
  out->elem_bytes = out->buffer->dtype.bits / 8;
  c->n_accesses = c->is_hoist ? 0 : 1;
  c->ok = a && ax &&
          loom_arith_bind(ax, loop->u.loop.var, 0, c->lanes - 1, NULL) == LOOM_OK &&
          (c->is_hoist || is_contiguous(a, ax, c, out->index, &out->base));
  planning P = {c, a, ax, E};
  loom_ir_visitor v = {.expr_pre = note_load, .ctx = &P};
  if (c->ok)
    loom_ir_visit_expr(&v, s->u.store.value);
  const loom_expr *value = s->u.store.value;
  c->is_copy = !c->is_hoist && c->n_accesses == 2 && c->accesses[1].load == value &&
               value->u.load.buffer->dtype.code == out->buffer->dtype.code &&
               value->u.load.buffer->dtype.bits == out->buffer->dtype.bits;
  c->chunk = c->ok && c->n_accesses > 0 ? widest_chunk(c) : 0;
  loom_arith_ctx_free(ax);
  loom_arena_free(a);
  return c->chunk > 1;
}

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

static const char *vector_type(int64_t bytes) {
  return bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : "uint32_t";
}

/* *(T *)(buf + (index)): the access's first element of the chunk, with
 * the lets of the chunk's first lane in scope. */
static void emit_vector_at(emitter *E, const vloop *c, const access *x, bool is_load) {
  loom_buf_printf(E->out, "*(%s%s *)(%s + (", is_load ? "const " : "",
                  vector_type(c->chunk * x->elem_bytes), emit_name(E, x->buffer->data));
  emit_expr(E, x->index);
  put(E, "))");
}

/* The lane variable at `at` (plus inner when given) and the lets after it. */
static void emit_lane_lets(emitter *E, const vloop *c, int64_t at, const char *inner) {
  loom_var *lane = c->loop->u.loop.var;
  emit_line_start(E);
  loom_buf_printf(E->out, "const %s %s = %lld%s%s;\n", emit_value_type(lane->dtype),
                  emit_name(E, lane), (long long)at, inner ? " + " : "", inner ? inner : "");
  for (int i = 0; i < c->n_lets; i++)
    emit_let_line(E, c->lets[i]);
}

static void emit_chunk(emitter *E, const vloop *c, int64_t at) {
  emit_line_start(E);
  put(E, "{\n");
  E->indent++;
  emit_lane_lets(E, c, at, NULL);
  if (c->is_copy) {
    emit_line_start(E);
    emit_vector_at(E, c, &c->accesses[0], false);
    put(E, " = ");
    emit_vector_at(E, c, &c->accesses[1], true);
    put(E, ";\n");
  } else {
    /* Each moving load into a register; the lanes read its elements. */
    const char *regs[MAX_ACCESSES];
    const loom_expr *loads[MAX_ACCESSES];
    const char *elems[MAX_ACCESSES];
    char texts[MAX_ACCESSES][160];
    const char *j = emit_fresh(E, "lane");
    for (int i = 0; i < c->n_accesses; i++) {
      const access *x = &c->accesses[i];
      regs[i] = emit_fresh(E, "vec");
      emit_line_start(E);
      loom_buf_printf(E->out, "%s %s", vector_type(c->chunk * x->elem_bytes), regs[i]);
      if (x->load) {
        put(E, " = ");
        emit_vector_at(E, c, x, true);
      }
      put(E, ";\n");
      snprintf(texts[i], sizeof texts[i], "((%s%s *)&%s)[%s]", x->load ? "const " : "",
               emit_elem_type(x->buffer->dtype), regs[i], j);
      elems[i] = texts[i];
      loads[i] = x->load;
    }
    emit_line_start(E);
    loom_buf_printf(E->out, "#pragma unroll\n");
    emit_line_start(E);
    loom_buf_printf(E->out, "for (int32_t %s = 0; %s < %lld; ++%s) {\n", j, j,
                    (long long)c->chunk, j);
    E->indent++;
    emit_lane_lets(E, c, at, j);
    E->vec_loads = loads + 1;
    E->vec_elems = elems + 1;
    E->n_vec_loads = c->n_accesses - 1;
    emit_line_start(E);
    put(E, elems[0]);
    put(E, " = ");
    emit_store_value(E, c->store->u.store.buffer->dtype, c->store->u.store.value);
    put(E, ";\n");
    E->n_vec_loads = 0;
    E->indent--;
    emit_line_start(E);
    put(E, "}\n");
    emit_line_start(E);
    emit_vector_at(E, c, &c->accesses[0], false);
    loom_buf_printf(E->out, " = %s;\n", regs[0]);
  }
  E->indent--;
  emit_line_start(E);
  put(E, "}\n");
}

static void emit_hoisted_body(emitter *E, const void *ctx) {
  const vloop *c = ctx;
  E->indent++;
  for (int i = 0; i < c->n_lets; i++)
    emit_let_line(E, c->lets[i]);
  emit_stmt(E, c->store);
  E->indent--;
}

/* The loop's moving loads into arrays of vectors, a chunk at a time; then
 * the loop as it is, its steps reading their elements of the arrays. */
static void emit_hoisted(emitter *E, const vloop *c) {
  const char *regs[MAX_ACCESSES];
  const loom_expr *loads[MAX_ACCESSES];
  const char *elems[MAX_ACCESSES];
  char texts[MAX_ACCESSES][160];
  const char *lane = emit_name(E, c->loop->u.loop.var);
  emit_line_start(E);
  put(E, "{\n");
  E->indent++;
  for (int i = 0; i < c->n_accesses; i++) {
    const access *x = &c->accesses[i];
    regs[i] = emit_fresh(E, "vec");
    emit_line_start(E);
    loom_buf_printf(E->out, "%s %s[%lld];\n", vector_type(c->chunk * x->elem_bytes), regs[i],
                    (long long)(c->lanes / c->chunk));
    snprintf(texts[i], sizeof texts[i], "((const %s *)%s)[%s]",
             emit_elem_type(x->buffer->dtype), regs[i], lane);
    elems[i] = texts[i];
    loads[i] = x->load;
  }
  for (int64_t at = 0; at < c->lanes; at += c->chunk) {
    emit_line_start(E);
    put(E, "{\n");
    E->indent++;
    emit_lane_lets(E, c, at, NULL);
    for (int i = 0; i < c->n_accesses; i++) {
      emit_line_start(E);
      loom_buf_printf(E->out, "%s[%lld] = ", regs[i], (long long)(at / c->chunk));
      emit_vector_at(E, c, &c->accesses[i], true);
      put(E, ";\n");
    }
    E->indent--;
    emit_line_start(E);
    put(E, "}\n");
  }
  E->vec_loads = loads;
  E->vec_elems = elems;
  E->n_vec_loads = c->n_accesses;
  emit_loop(E, c->loop, emit_hoisted_body, c);
  E->n_vec_loads = 0;
  E->indent--;
  emit_line_start(E);
  put(E, "}\n");
}

bool emit_vector_loop(emitter *E, const loom_stmt *loop) {
  vloop c;
  if (!E->is_cuda || E->n_vec_loads > 0 || !plan(E, loop, &c))
    return false;
  if (c.is_hoist) {
    emit_hoisted(E, &c);
    return true;
  }
  emit_note_loop(E, loop);
  for (int64_t at = 0; at < c.lanes; at += c.chunk)
    emit_chunk(E, &c, at);
  return true;
}
