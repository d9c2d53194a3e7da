/* A vectorized copy in CUDA: the loop
 *
 *   for lane in T.vectorized(L): [integer lets] D[d] = S[s]
 *
 * where d and s move by one element with the lane and both buffers hold
 * the same type, printed as whole vector moves (uint4, uint2 or a 32-bit
 * word, as wide as the offsets allow) in place of L scalar ones. CUDA
 * compiles a copy of 2-byte elements into 2-byte loads and stores
 * otherwise, an eighth of what one instruction can move.
 *
 * A vector access must be aligned to its width. The bases are: kernel
 * parameters come from cuMemAlloc (256 bytes), shared and local buffers
 * are placed at 16 bytes (lower/gpu.c, cuda.c). The offsets are checked
 * here: d and s at lane 0 must be multiples of the vector's elements,
 * which a modular analysis of the indices proves (the residue of each
 * expression modulo a known stride, as TVM's ModularSet). A loop it cannot
 * prove keeps its scalar copy. */
#include "codegen/codegen_impl.h"
#include "loom/arith.h"

#include <string.h>

#define MAX_LETS 16

typedef struct copy {
  const loom_stmt *loop, *store;
  const loom_stmt *lets[MAX_LETS];
  int n_lets;
  int64_t lanes, elem_bytes;
  int64_t vec_elems; /* elements per vector move */
} copy;

/* e is coef * k + base for some integer k (coef 0: e is base). */
typedef struct modular {
  int64_t coef, base;
} modular;

static int64_t gcd64(int64_t a, int64_t b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static int64_t floormod64(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

static modular norm(int64_t coef, int64_t base) {
  coef = coef < 0 ? -coef : coef;
  return (modular){coef, coef ? floormod64(base, coef) : base};
}

/* The residues are kept small: a coefficient past 2^20 says no more than
 * one at it would for vectors of 16 bytes, and keeps products in range. */
static modular cap(modular m) {
  const int64_t limit = 1 << 20;
  if (m.coef == 0)
    return m.base > limit || m.base < -limit ? norm(limit, m.base) : m;
  return m.coef > limit ? norm(gcd64(m.coef, limit), m.base) : m;
}

static modular modular_of(const loom_expr *e) {
  const modular any = {1, 0};
  int64_t c;
  if (!e || e->dtype.code != LOOM_DT_INT || e->dtype.lanes != 1)
    return any;
  switch (e->kind) {
  case LOOM_EXPR_INT: return cap((modular){0, e->u.int_value});
  case LOOM_EXPR_CAST: return modular_of(e->u.unary.a);
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB: {
    modular x = modular_of(e->u.bin.a), y = modular_of(e->u.bin.b);
    int64_t b = e->kind == LOOM_EXPR_ADD ? x.base + y.base : x.base - y.base;
    return cap(norm(gcd64(x.coef, y.coef), b));
  }
  case LOOM_EXPR_MUL: {
    modular x = modular_of(e->u.bin.a), y = modular_of(e->u.bin.b);
    /* (cx k + bx)(cy l + by) = cx cy kl + cx by k + cy bx l + bx by */
    int64_t g = gcd64(gcd64(x.coef * y.coef, x.coef * y.base), y.coef * x.base);
    return cap(norm(g, x.base * y.base));
  }
  case LOOM_EXPR_FLOORMOD:
    if (loom_ir_is_const_int(e->u.bin.b, &c) && c > 0) {
      modular x = modular_of(e->u.bin.a);
      return x.coef ? norm(gcd64(x.coef, c), x.base) : (modular){0, floormod64(x.base, c)};
    }
    return any;
  case LOOM_EXPR_FLOORDIV:
    if (loom_ir_is_const_int(e->u.bin.b, &c) && c > 0) {
      modular x = modular_of(e->u.bin.a);
      /* (c q k + b) // c = q k + b // c when c divides the coefficient */
      if (x.coef % c == 0)
        return norm(x.coef / c, (x.base - floormod64(x.base, c)) / c);
    }
    return any;
  default: return any;
  }
}

static bool divides(int64_t n, const loom_expr *e) {
  modular m = modular_of(e);
  return m.coef % n == 0 && floormod64(m.base, n) == 0;
}

/* e with the copy's lets replaced by their values, innermost first. */
static loom_expr *unlet(loom_arena *a, const copy *c, const loom_expr *e) {
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
      memcmp(&e->dtype, &L->lane->dtype, sizeof e->dtype) != 0)
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
static bool is_contiguous(loom_arena *a, loom_arith_ctx *ax, const copy *c,
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

static bool plan(const loom_stmt *loop, copy *c) {
  int64_t min;
  memset(c, 0, sizeof *c);
  c->loop = loop;
  if (loop->u.loop.kind != LOOM_FOR_VECTORIZED ||
      !loom_ir_is_const_int(loop->u.loop.min, &min) || min != 0 ||
      !loom_ir_is_const_int(loop->u.loop.extent, &c->lanes) || c->lanes < 2)
    return false;
  const loom_stmt *s = loop->u.loop.body;
  for (; s && s->kind == LOOM_STMT_LET; s = s->u.let.body) {
    if (c->n_lets == MAX_LETS || s->u.let.var->dtype.code != LOOM_DT_INT ||
        s->u.let.var->dtype.lanes != 1 || reads_memory(s->u.let.value))
      return false;
    c->lets[c->n_lets++] = s;
  }
  if (!s || s->kind != LOOM_STMT_STORE || s->u.store.n_indices != 1)
    return false;
  c->store = s;
  const loom_expr *v = s->u.store.value;
  loom_dtype t = s->u.store.buffer->dtype;
  if (v->kind != LOOM_EXPR_LOAD || v->u.load.n_indices != 1 || t.lanes != 1 ||
      t.code == LOOM_DT_BOOL || t.bits % 8 != 0 ||
      v->u.load.buffer->dtype.code != t.code || v->u.load.buffer->dtype.bits != t.bits ||
      v->u.load.buffer->dtype.lanes != 1)
    return false;
  c->elem_bytes = t.bits / 8;
  loom_arena *a = loom_arena_new();
  loom_arith_ctx *ax = loom_arith_ctx_new();
  loom_expr *dbase, *sbase;
  bool ok = a && ax &&
            loom_arith_bind(ax, loop->u.loop.var, 0, c->lanes - 1, NULL) == LOOM_OK &&
            is_contiguous(a, ax, c, s->u.store.indices[0], &dbase) &&
            is_contiguous(a, ax, c, v->u.load.indices[0], &sbase);
  /* The widest move, of 16 bytes at most, that the lanes fill whole and
   * both offsets are aligned to. */
  for (c->vec_elems = ok ? 16 / c->elem_bytes : 0; c->vec_elems > 1; c->vec_elems /= 2)
    if (c->vec_elems * c->elem_bytes >= 4 && c->lanes % c->vec_elems == 0 &&
        divides(c->vec_elems, dbase) && divides(c->vec_elems, sbase))
      break;
  loom_arith_ctx_free(ax);
  loom_arena_free(a);
  return c->vec_elems > 1 && c->vec_elems * c->elem_bytes >= 4;
}

static void put(emitter *E, const char *s) { loom_buf_puts(E->out, s); }

static void emit_access(emitter *E, const char *ty, const loom_buffer *b,
                        const loom_expr *index, int64_t at, bool is_const) {
  loom_buf_printf(E->out, "*(%s%s *)(%s + (", is_const ? "const " : "", ty,
                  emit_name(E, b->data));
  emit_expr(E, index);
  if (at)
    loom_buf_printf(E->out, ") + %lld)", (long long)at);
  else
    put(E, "))");
}

bool emit_vector_copy(emitter *E, const loom_stmt *loop) {
  copy c;
  if (!E->is_cuda || !plan(loop, &c))
    return false;
  int64_t bytes = c.vec_elems * c.elem_bytes;
  const char *ty = bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : "uint32_t";
  loom_var *lane = loop->u.loop.var;
  emit_note_loop(E, loop);
  emit_line_start(E);
  put(E, "{\n");
  E->indent++;
  /* The lets as at lane 0: the indices then point at the first element. */
  emit_line_start(E);
  loom_buf_printf(E->out, "const %s %s = 0;\n", emit_value_type(lane->dtype),
                  emit_name(E, lane));
  for (int i = 0; i < c.n_lets; i++)
    emit_let_line(E, c.lets[i]);
  const loom_expr *src = c.store->u.store.value;
  for (int64_t at = 0; at < c.lanes; at += c.vec_elems) {
    emit_line_start(E);
    emit_access(E, ty, c.store->u.store.buffer, c.store->u.store.indices[0], at, false);
    put(E, " = ");
    emit_access(E, ty, src->u.load.buffer, src->u.load.indices[0], at, true);
    put(E, ";\n");
  }
  E->indent--;
  emit_line_start(E);
  put(E, "}\n");
  return true;
}
