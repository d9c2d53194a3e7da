/* Scalar evaluators for the binary ops that dominate loop nests: arithmetic
 * and comparisons on int32, int64, float32 and float64. Each computes what
 * binary_lane computes for its type, without the dispatch; division by zero
 * and the rare cases go back to binary_lane. */
#include "interp/interp_impl.h"

#include <string.h>

/* Wraps to int32, sign-extended, without relying on implementation-defined
 * conversions. */
static inline uint64_t wrap32(uint64_t u) {
  return ((u & 0xffffffffu) ^ 0x80000000u) - 0x80000000u;
}

/* Defines evaluator NAME: both operands as a and b, then BODY sets *out. */
#define BINARY_FN(NAME, BODY)                                                  \
  static loom_status NAME(const enode *n, frame *fr, ilane *out) {             \
    ilane a, b;                                                                \
    loom_status st = get_scalar(n->kids[0], fr, &a);                   \
    if (st == LOOM_OK)                                                         \
      st = get_scalar(n->kids[1], fr, &b);                             \
    if (st == LOOM_OK) {                                                       \
      BODY;                                                                    \
    }                                                                          \
    return st;                                                                 \
  }

#define SA ((int64_t)a.u)
#define SB ((int64_t)b.u)

BINARY_FN(add_i32, out->u = wrap32(a.u + b.u))
BINARY_FN(sub_i32, out->u = wrap32(a.u - b.u))
BINARY_FN(mul_i32, out->u = wrap32(a.u * b.u))
BINARY_FN(add_i64, out->u = a.u + b.u)
BINARY_FN(sub_i64, out->u = a.u - b.u)
BINARY_FN(mul_i64, out->u = a.u * b.u)
BINARY_FN(min_int, *out = SA <= SB ? a : b)
BINARY_FN(max_int, *out = SA >= SB ? a : b)
BINARY_FN(eq_int, out->u = a.u == b.u)
BINARY_FN(ne_int, out->u = a.u != b.u)
BINARY_FN(lt_int, out->u = SA < SB)
BINARY_FN(le_int, out->u = SA <= SB)
BINARY_FN(gt_int, out->u = SA > SB)
BINARY_FN(ge_int, out->u = SA >= SB)

BINARY_FN(add_f32, out->f = round_f32(a.f + b.f))
BINARY_FN(sub_f32, out->f = round_f32(a.f - b.f))
BINARY_FN(mul_f32, out->f = round_f32(a.f * b.f))
BINARY_FN(div_f32, out->f = round_f32(a.f / b.f))
BINARY_FN(add_f64, out->f = a.f + b.f)
BINARY_FN(sub_f64, out->f = a.f - b.f)
BINARY_FN(mul_f64, out->f = a.f * b.f)
BINARY_FN(div_f64, out->f = a.f / b.f)
/* C's comparisons are false on NaN but for !=, as binary_lane wants. */
BINARY_FN(eq_float, out->u = a.f == b.f)
BINARY_FN(ne_float, out->u = a.f != b.f)
BINARY_FN(lt_float, out->u = a.f < b.f)
BINARY_FN(le_float, out->u = a.f <= b.f)
BINARY_FN(gt_float, out->u = a.f > b.f)
BINARY_FN(ge_float, out->u = a.f >= b.f)

/* Floor division and modulo of signed ints; a zero or -1 divisor takes the
 * general path (an error, or the wrap of INT_MIN / -1). */
static loom_status floor_divmod(const enode *n, frame *fr, ilane *out,
                                bool is_div, bool is_32) {
  ilane a, b;
  TRY(get_scalar(n->kids[0], fr, &a));
  TRY(get_scalar(n->kids[1], fr, &b));
  if (b.u == 0 || SB == -1) {
    const char *what = NULL;
    if (!binary_lane(n->e->kind, n->op_t, a, b, out, &what))
      return expr_error(fr, what, n->e);
    return LOOM_OK;
  }
  int64_t q = SA / SB, r = SA % SB;
  if (r != 0 && (r < 0) != (SB < 0)) {
    q -= 1;
    r += SB;
  }
  uint64_t u = (uint64_t)(is_div ? q : r);
  out->u = is_32 ? wrap32(u) : u;
  return LOOM_OK;
}

static loom_status floordiv_i32(const enode *n, frame *fr, ilane *out) {
  return floor_divmod(n, fr, out, true, true);
}
static loom_status floormod_i32(const enode *n, frame *fr, ilane *out) {
  return floor_divmod(n, fr, out, false, true);
}
static loom_status floordiv_i64(const enode *n, frame *fr, ilane *out) {
  return floor_divmod(n, fr, out, true, false);
}
static loom_status floormod_i64(const enode *n, frame *fr, ilane *out) {
  return floor_divmod(n, fr, out, false, false);
}

static scalar_fn int_binary(loom_expr_kind k, bool is_32) {
  switch (k) {
  case LOOM_EXPR_ADD: return is_32 ? add_i32 : add_i64;
  case LOOM_EXPR_SUB: return is_32 ? sub_i32 : sub_i64;
  case LOOM_EXPR_MUL: return is_32 ? mul_i32 : mul_i64;
  case LOOM_EXPR_FLOORDIV: return is_32 ? floordiv_i32 : floordiv_i64;
  case LOOM_EXPR_FLOORMOD: return is_32 ? floormod_i32 : floormod_i64;
  case LOOM_EXPR_MIN: return min_int;
  case LOOM_EXPR_MAX: return max_int;
  case LOOM_EXPR_EQ: return eq_int;
  case LOOM_EXPR_NE: return ne_int;
  case LOOM_EXPR_LT: return lt_int;
  case LOOM_EXPR_LE: return le_int;
  case LOOM_EXPR_GT: return gt_int;
  case LOOM_EXPR_GE: return ge_int;
  default: return NULL;
  }
}

static scalar_fn float_binary(loom_expr_kind k, bool is_32) {
  switch (k) {
  case LOOM_EXPR_ADD: return is_32 ? add_f32 : add_f64;
  case LOOM_EXPR_SUB: return is_32 ? sub_f32 : sub_f64;
  case LOOM_EXPR_MUL: return is_32 ? mul_f32 : mul_f64;
  case LOOM_EXPR_DIV: return is_32 ? div_f32 : div_f64;
  case LOOM_EXPR_EQ: return eq_float;
  case LOOM_EXPR_NE: return ne_float;
  case LOOM_EXPR_LT: return lt_float;
  case LOOM_EXPR_LE: return le_float;
  case LOOM_EXPR_GT: return gt_float;
  case LOOM_EXPR_GE: return ge_float;
  default: return NULL;
  }
}

/* a + b * c, the body of every dot product, with the multiply inline; it
 * rounds twice as the two nodes would. */
static loom_status add_mul_f32(const enode *n, frame *fr, ilane *out) {
  const enode *m = n->kids[1];
  ilane a, b, c;
  TRY(get_scalar(n->kids[0], fr, &a));
  TRY(get_scalar(m->kids[0], fr, &b));
  TRY(get_scalar(m->kids[1], fr, &c));
  out->f = round_f32(a.f + round_f32(b.f * c.f));
  return LOOM_OK;
}

static loom_status add_mul_f64(const enode *n, frame *fr, ilane *out) {
  const enode *m = n->kids[1];
  ilane a, b, c;
  TRY(get_scalar(n->kids[0], fr, &a));
  TRY(get_scalar(m->kids[0], fr, &b));
  TRY(get_scalar(m->kids[1], fr, &c));
  double p = b.f * c.f; /* two statements: never contracted into an fma */
  out->f = a.f + p;
  return LOOM_OK;
}

scalar_fn fast_add_mul(const enode *n) {
  const enode *m = n->kids[1];
  if (n->scalar == add_f32 && m->scalar == mul_f32)
    return add_mul_f32;
  if (n->scalar == add_f64 && m->scalar == mul_f64)
    return add_mul_f64;
  return NULL;
}

scalar_fn fast_binary(loom_expr_kind k, loom_dtype op_t) {
  if (op_t.lanes != 1)
    return NULL;
  if (op_t.code == LOOM_DT_INT && (op_t.bits == 32 || op_t.bits == 64))
    return int_binary(k, op_t.bits == 32);
  if (op_t.code == LOOM_DT_FLOAT && (op_t.bits == 32 || op_t.bits == 64))
    return float_binary(k, op_t.bits == 32);
  return NULL;
}
