/* Numeric semantics of the interpreter: wrap-around integers, floats rounded
 * to their dtype (float16 and bfloat16 by hand, round to nearest even), casts,
 * binary ops and the math intrinsics. Nothing here can hit C undefined
 * behaviour: integer arithmetic is done on uint64_t and then wrapped. */
#include "interp/interp_impl.h"

#include <math.h>
#include <string.h>

int elem_bytes(loom_dtype t) {
  if (t.code == LOOM_DT_BOOL)
    return 1;
  return t.bits <= 8 ? 1 : t.bits / 8;
}

/* Round half to even of a non-negative double; exact for the magnitudes the
 * encoder passes (below 2^53). */
static double round_even(double v) {
  double f = floor(v);
  double frac = v - f;
  if (frac > 0.5)
    return f + 1;
  if (frac < 0.5)
    return f;
  return fmod(f, 2.0) == 0.0 ? f : f + 1;
}

/* IEEE-style binary format with mbits mantissa and ebits exponent bits:
 * encodes x with round to nearest even, overflow to inf, gradual underflow. */
uint64_t encode_float(double x, int mbits, int ebits) {
  uint64_t sign = (uint64_t)(signbit(x) ? 1 : 0) << (mbits + ebits);
  uint64_t expmask = ((uint64_t)1 << ebits) - 1;
  int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias, emax = bias;
  if (isnan(x))
    return sign | expmask << mbits | (uint64_t)1 << (mbits - 1);
  /* A normal result, the common case, by integer arithmetic on the
   * double's own fields: the same rounding as below, many times faster
   * (inputs of a billion float16 elements are filled through here). */
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  int dexp = (int)((b >> 52) & 0x7ff), e2;
  if (dexp != 0 && dexp != 0x7ff && dexp - 1023 >= emin && dexp - 1023 <= emax) {
    int drop = 52 - mbits;
    uint64_t frac = b & (((uint64_t)1 << 52) - 1);
    uint64_t q = frac >> drop, rest = frac & (((uint64_t)1 << drop) - 1);
    uint64_t half = (uint64_t)1 << (drop - 1), ex = (uint64_t)(dexp - 1023 + bias);
    if (rest > half || (rest == half && (q & 1)))
      q++;
    if (q >> mbits) { /* rounded up to the next power of two */
      q = 0;
      ex++;
    }
    return ex > (uint64_t)(emax + bias) ? sign | expmask << mbits : sign | ex << mbits | q;
  }
  double a = fabs(x);
  if (isinf(a))
    return sign | expmask << mbits;
  if (a < ldexp(1.0, emin)) /* subnormal; q == 2^mbits is the least normal */
    return sign | (uint64_t)round_even(ldexp(a, mbits - emin));
  frexp(a, &e2);
  int e = e2 - 1; /* a in [2^e, 2^(e+1)) */
  double q = round_even(ldexp(a, mbits - e));
  if (q >= ldexp(1.0, mbits + 1)) {
    q = ldexp(1.0, mbits);
    e++;
  }
  if (e > emax)
    return sign | expmask << mbits;
  return sign | (uint64_t)(e + bias) << mbits |
         ((uint64_t)q - ((uint64_t)1 << mbits));
}

double decode_float(uint64_t bits, int mbits, int ebits) {
  uint64_t expmask = ((uint64_t)1 << ebits) - 1;
  int bias = (1 << (ebits - 1)) - 1;
  uint64_t mant = bits & (((uint64_t)1 << mbits) - 1);
  uint64_t ex = (bits >> mbits) & expmask;
  double s = (bits >> (mbits + ebits)) & 1 ? -1.0 : 1.0;
  if (ex != 0 && ex != expmask) { /* normal: the double's fields directly */
    uint64_t b = (bits >> (mbits + ebits) & 1) << 63 |
                 (ex - (uint64_t)bias + 1023) << 52 | mant << (52 - mbits);
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
  }
  if (ex == expmask)
    return mant ? NAN : s * INFINITY;
  if (ex == 0)
    return s * ldexp((double)mant, 1 - bias - mbits);
  return s * ldexp((double)(mant | (uint64_t)1 << mbits), (int)ex - bias - mbits);
}

/* float32 bits as the decoder reads them: every NaN is the one NaN. */
static double f32_value(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f != f ? NAN : f;
}

uint16_t loom_interp_f16_bits(double x) { return (uint16_t)encode_float(x, 10, 5); }
double loom_interp_f16_value(uint16_t b) { return decode_float(b, 10, 5); }
uint16_t loom_interp_bf16_bits(double x) { return (uint16_t)encode_float(x, 7, 8); }
double loom_interp_bf16_value(uint16_t b) { return decode_float(b, 7, 8); }

ilane norm_int(loom_dtype t, uint64_t u) {
  ilane r;
  if (t.code == LOOM_DT_BOOL) {
    r.u = u != 0;
    return r;
  }
  int bits = t.bits;
  if (bits >= 64) {
    r.u = u;
    return r;
  }
  uint64_t mask = ((uint64_t)1 << bits) - 1;
  u &= mask;
  if (t.code == LOOM_DT_INT && (u >> (bits - 1)) & 1)
    u |= ~mask; /* sign-extend */
  r.u = u;
  return r;
}

ilane norm_float(loom_dtype t, double f) {
  ilane r;
  if (t.code == LOOM_DT_BFLOAT)
    r.f = decode_float(encode_float(f, 7, 8), 7, 8);
  else if (t.bits == 16)
    r.f = decode_float(encode_float(f, 10, 5), 10, 5);
  else if (t.bits == 32)
    r.f = round_f32(f);
  else
    r.f = f;
  return r;
}

double lane_as_double(loom_dtype t, ilane x) {
  if (loom_dtype_is_float(t))
    return x.f;
  if (t.code == LOOM_DT_UINT || t.code == LOOM_DT_BOOL)
    return (double)x.u;
  return (double)lane_i64(x);
}

bool lane_is_true(loom_dtype t, ilane x) {
  return loom_dtype_is_float(t) ? x.f != 0 : x.u != 0;
}

/* Float to integer. C leaves out-of-range conversions undefined; here NaN
 * gives 0 and values beyond the target's range saturate to its min or max
 * (what LLVM's fptosi.sat and most hardware conversions do). In range, the
 * fraction is truncated toward zero as in C. */
static ilane float_to_int(loom_dtype to, double f) {
  ilane r;
  if (to.code == LOOM_DT_BOOL) {
    r.u = f != 0;
    return r;
  }
  if (isnan(f)) {
    r.u = 0;
    return r;
  }
  f = trunc(f);
  int bits = to.bits;
  if (to.code == LOOM_DT_UINT) {
    double hi = ldexp(1.0, bits); /* exclusive */
    if (f <= 0)
      r.u = 0;
    else if (f >= hi)
      r.u = bits >= 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
    else
      r.u = (uint64_t)f;
    return r;
  }
  double lo = -ldexp(1.0, bits - 1), hi = ldexp(1.0, bits - 1);
  if (f < lo)
    return norm_int(to, (uint64_t)1 << (bits - 1));
  if (f >= hi)
    return norm_int(to, ((uint64_t)1 << (bits - 1)) - 1);
  return norm_int(to, (uint64_t)(int64_t)f);
}

ilane cast_lane(loom_dtype from, loom_dtype to, ilane x) {
  from.lanes = to.lanes = 1;
  if (loom_dtype_is_float(from)) {
    if (loom_dtype_is_float(to))
      return norm_float(to, x.f);
    return float_to_int(to, x.f);
  }
  if (loom_dtype_is_float(to))
    return norm_float(to, lane_as_double(from, x));
  if (from.code == LOOM_DT_BOOL || to.code == LOOM_DT_BOOL)
    return norm_int(to, x.u != 0);
  return norm_int(to, x.u);
}

uint64_t lane_to_bits(loom_dtype t, ilane x) {
  if (!loom_dtype_is_float(t)) {
    if (t.code == LOOM_DT_BOOL || t.bits >= 64)
      return x.u;
    return x.u & (((uint64_t)1 << t.bits) - 1);
  }
  if (t.code == LOOM_DT_BFLOAT)
    return encode_float(x.f, 7, 8);
  if (t.bits == 16)
    return encode_float(x.f, 10, 5);
  if (t.bits == 32 && x.f == x.f) { /* see round_f32 */
    float f = (float)x.f;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
  }
  if (t.bits == 32)
    return encode_float(x.f, 23, 8);
  uint64_t b;
  memcpy(&b, &x.f, 8);
  return b;
}

ilane lane_from_bits(loom_dtype t, uint64_t bits) {
  ilane r;
  if (!loom_dtype_is_float(t))
    return norm_int(t, bits);
  if (t.code == LOOM_DT_BFLOAT)
    r.f = decode_float(bits, 7, 8);
  else if (t.bits == 16)
    r.f = decode_float(bits, 10, 5);
  else if (t.bits == 32)
    r.f = f32_value((uint32_t)bits);
  else
    memcpy(&r.f, &bits, 8);
  return r;
}

ilane load_elem(loom_dtype t, const void *data, int64_t i) {
  int n = elem_bytes(t);
  const unsigned char *p = (const unsigned char *)data + i * n;
  uint64_t bits = 0;
  for (int k = 0; k < n; k++) /* little-endian layout, on every host */
    bits |= (uint64_t)p[k] << (8 * k);
  return lane_from_bits(t, bits);
}

void store_elem(loom_dtype t, void *data, int64_t i, ilane x) {
  int n = elem_bytes(t);
  unsigned char *p = (unsigned char *)data + i * n;
  uint64_t bits = lane_to_bits(t, x);
  for (int k = 0; k < n; k++)
    p[k] = (unsigned char)(bits >> (8 * k));
}

static bool is_signed(loom_dtype t) { return t.code == LOOM_DT_INT; }

/* Signed comparison on wrapped values, unsigned for uint and bool. */
static int cmp_int(loom_dtype t, ilane a, ilane b) {
  if (is_signed(t))
    return lane_i64(a) < lane_i64(b) ? -1 : lane_i64(a) > lane_i64(b);
  return a.u < b.u ? -1 : a.u > b.u;
}

static int cmp_float(double a, double b) { return a < b ? -1 : a > b; }

/* Truncating division and remainder on wrapped ints; b != 0. INT64_MIN / -1
 * wraps to INT64_MIN with remainder 0, as the hardware would if it did not
 * trap. */
static void trunc_divmod(loom_dtype t, ilane a, ilane b, uint64_t *q,
                         uint64_t *r) {
  if (!is_signed(t)) {
    *q = a.u / b.u;
    *r = a.u % b.u;
    return;
  }
  int64_t x = lane_i64(a), y = lane_i64(b);
  if (y == -1) {
    *q = 0 - a.u;
    *r = 0;
    return;
  }
  *q = (uint64_t)(x / y);
  *r = (uint64_t)(x % y);
}

static int int_binary(loom_expr_kind k, loom_dtype t, ilane a, ilane b,
                      ilane *out, const char **what) {
  uint64_t q, r;
  switch (k) {
  case LOOM_EXPR_ADD: *out = norm_int(t, a.u + b.u); return 1;
  case LOOM_EXPR_SUB: *out = norm_int(t, a.u - b.u); return 1;
  case LOOM_EXPR_MUL: *out = norm_int(t, a.u * b.u); return 1;
  case LOOM_EXPR_MIN: *out = cmp_int(t, a, b) <= 0 ? a : b; return 1;
  case LOOM_EXPR_MAX: *out = cmp_int(t, a, b) >= 0 ? a : b; return 1;
  default: break;
  }
  if (b.u == 0) {
    *what = "integer division by zero";
    return 0;
  }
  trunc_divmod(t, a, b, &q, &r);
  bool is_neg_mix = is_signed(t) && r != 0 &&
                    ((int64_t)r < 0) != (lane_i64(b) < 0);
  switch (k) {
  case LOOM_EXPR_DIV: *out = norm_int(t, q); return 1;
  case LOOM_EXPR_MOD: *out = norm_int(t, r); return 1;
  case LOOM_EXPR_FLOORDIV: *out = norm_int(t, is_neg_mix ? q - 1 : q); return 1;
  case LOOM_EXPR_FLOORMOD: *out = norm_int(t, is_neg_mix ? r + b.u : r); return 1;
  default: *what = "operator not defined on integers"; return 0;
  }
}

static int float_binary(loom_expr_kind k, loom_dtype t, double a, double b,
                        ilane *out) {
  double r;
  switch (k) {
  case LOOM_EXPR_ADD: r = a + b; break;
  case LOOM_EXPR_SUB: r = a - b; break;
  case LOOM_EXPR_MUL: r = a * b; break;
  case LOOM_EXPR_DIV: r = a / b; break;
  case LOOM_EXPR_MOD: r = fmod(a, b); break;
  case LOOM_EXPR_FLOORDIV: r = floor(a / b); break;
  case LOOM_EXPR_FLOORMOD: r = a - floor(a / b) * b; break;
  /* T.min / T.max follow fmin/fmax except that a NaN operand propagates,
   * so a NaN in the data is not silently dropped by a reduction. */
  case LOOM_EXPR_MIN: r = isnan(a) || isnan(b) ? NAN : fmin(a, b); break;
  case LOOM_EXPR_MAX: r = isnan(a) || isnan(b) ? NAN : fmax(a, b); break;
  default: return 0;
  }
  *out = norm_float(t, r);
  return 1;
}

int binary_lane(loom_expr_kind k, loom_dtype t, ilane a, ilane b, ilane *out,
                const char **what) {
  bool is_float = loom_dtype_is_float(t);
  int c;
  switch (k) {
  case LOOM_EXPR_AND: out->u = lane_is_true(t, a) && lane_is_true(t, b); return 1;
  case LOOM_EXPR_OR: out->u = lane_is_true(t, a) || lane_is_true(t, b); return 1;
  case LOOM_EXPR_EQ: case LOOM_EXPR_NE: case LOOM_EXPR_LT:
  case LOOM_EXPR_LE: case LOOM_EXPR_GT: case LOOM_EXPR_GE:
    if (is_float && (isnan(a.f) || isnan(b.f))) { /* unordered */
      out->u = k == LOOM_EXPR_NE;
      return 1;
    }
    c = is_float ? cmp_float(a.f, b.f) : cmp_int(t, a, b);
    out->u = k == LOOM_EXPR_EQ ? c == 0 : k == LOOM_EXPR_NE ? c != 0
           : k == LOOM_EXPR_LT ? c < 0 : k == LOOM_EXPR_LE ? c <= 0
           : k == LOOM_EXPR_GT ? c > 0 : c >= 0;
    return 1;
  default: break;
  }
  if (is_float) {
    if (float_binary(k, t, a.f, b.f, out))
      return 1;
    *what = "operator not defined on floats";
    return 0;
  }
  return int_binary(k, t, a, b, out, what);
}

static int count_leading_zeros(uint64_t u, int bits) {
  int n = 0;
  for (int i = bits - 1; i >= 0 && !((u >> i) & 1); i--)
    n++;
  return n;
}

/* Shift amounts are taken modulo the width, as x86 and TVM's LLVM output do
 * for in-range programs; this keeps out-of-range shifts defined. */
static ilane shift_lane(loom_dtype t, ilane a, ilane b, bool is_left) {
  int bits = t.code == LOOM_DT_BOOL ? 1 : t.bits;
  unsigned s = (unsigned)(b.u % (uint64_t)bits);
  if (is_left)
    return norm_int(t, a.u << s);
  if (is_signed(t) && lane_i64(a) < 0)
    return norm_int(t, ~(~a.u >> s));
  return norm_int(t, a.u >> s);
}

static int int_intrinsic(loom_op op, loom_dtype t, const ilane *x, ilane *out) {
  int bits = t.code == LOOM_DT_BOOL ? 1 : t.bits;
  uint64_t mask = bits >= 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
  switch (op) {
  case LOOM_OP_POPCOUNT: {
    uint64_t u = x[0].u & mask;
    int n = 0;
    for (; u; u &= u - 1)
      n++;
    *out = norm_int(t, (uint64_t)n);
    return 1;
  }
  case LOOM_OP_CLZ: *out = norm_int(t, (uint64_t)count_leading_zeros(x[0].u, bits)); return 1;
  case LOOM_OP_BITWISE_AND: *out = norm_int(t, x[0].u & x[1].u); return 1;
  case LOOM_OP_BITWISE_OR: *out = norm_int(t, x[0].u | x[1].u); return 1;
  case LOOM_OP_BITWISE_XOR: *out = norm_int(t, x[0].u ^ x[1].u); return 1;
  case LOOM_OP_BITWISE_NOT: *out = norm_int(t, ~x[0].u); return 1;
  case LOOM_OP_SHIFT_LEFT: *out = shift_lane(t, x[0], x[1], true); return 1;
  case LOOM_OP_SHIFT_RIGHT: *out = shift_lane(t, x[0], x[1], false); return 1;
  case LOOM_OP_FABS:
    *out = is_signed(t) && lane_i64(x[0]) < 0 ? norm_int(t, 0 - x[0].u) : x[0];
    return 1;
  default: return 0;
  }
}

static double math1(loom_op op, double a) {
  switch (op) {
  case LOOM_OP_EXP: return exp(a);
  case LOOM_OP_EXP2: return exp2(a);
  case LOOM_OP_EXP10: return pow(10.0, a);
  case LOOM_OP_LOG: return log(a);
  case LOOM_OP_LOG2: return log2(a);
  case LOOM_OP_LOG10: return log10(a);
  case LOOM_OP_LOG1P: return log1p(a);
  case LOOM_OP_SQRT: return sqrt(a);
  case LOOM_OP_RSQRT: return 1.0 / sqrt(a);
  case LOOM_OP_TANH: return tanh(a);
  case LOOM_OP_SIGMOID: return 1.0 / (1.0 + exp(-a));
  case LOOM_OP_ERF: return erf(a);
  case LOOM_OP_FABS: return fabs(a);
  case LOOM_OP_FLOOR: return floor(a);
  case LOOM_OP_CEIL: return ceil(a);
  case LOOM_OP_ROUND: return round(a);
  case LOOM_OP_NEARBYINT: /* ties to even; the rounding mode is never changed */
    return a < 0 ? -round_even(-a) : round_even(a);
  case LOOM_OP_TRUNC: return trunc(a);
  case LOOM_OP_SIN: return sin(a);
  case LOOM_OP_COS: return cos(a);
  case LOOM_OP_TAN: return tan(a);
  case LOOM_OP_ASIN: return asin(a);
  case LOOM_OP_ACOS: return acos(a);
  case LOOM_OP_ATAN: return atan(a);
  case LOOM_OP_SINH: return sinh(a);
  case LOOM_OP_COSH: return cosh(a);
  default: return NAN;
  }
}

/* x holds at least two lanes (unused ones zeroed), so two-argument math may
 * read x[1] unconditionally. */
int intrinsic_lane(loom_op op, loom_dtype t, const ilane *x, ilane *out) {
  t.lanes = 1;
  if (op == LOOM_OP_ISNAN || op == LOOM_OP_ISINF || op == LOOM_OP_ISFINITE) {
    double v = lane_as_double(t, x[0]);
    out->u = op == LOOM_OP_ISNAN ? isnan(v) != 0
           : op == LOOM_OP_ISINF ? isinf(v) != 0 : isfinite(v) != 0;
    return 1;
  }
  if (op == LOOM_OP_LIKELY) {
    *out = x[0];
    return 1;
  }
  if (!loom_dtype_is_float(t)) {
    if (int_intrinsic(op, t, x, out))
      return 1;
    /* Math on an integer operand: computed in double, converted back. */
    ilane d = {.f = 0};
    loom_dtype f64 = LOOM_DTYPE(LOOM_DT_FLOAT, 64, 1);
    ilane args[2] = {cast_lane(t, f64, x[0]), cast_lane(t, f64, x[1])};
    if (!intrinsic_lane(op, f64, args, &d))
      return 0;
    *out = cast_lane(f64, t, d);
    return 1;
  }
  double r;
  switch (op) {
  case LOOM_OP_POW: r = pow(x[0].f, x[1].f); break;
  case LOOM_OP_ATAN2: r = atan2(x[0].f, x[1].f); break;
  case LOOM_OP_FMOD: r = fmod(x[0].f, x[1].f); break;
  case LOOM_OP_EXP: case LOOM_OP_EXP2: case LOOM_OP_EXP10: case LOOM_OP_LOG:
  case LOOM_OP_LOG2: case LOOM_OP_LOG10: case LOOM_OP_LOG1P: case LOOM_OP_SQRT:
  case LOOM_OP_RSQRT: case LOOM_OP_TANH: case LOOM_OP_SIGMOID: case LOOM_OP_ERF:
  case LOOM_OP_FABS: case LOOM_OP_FLOOR: case LOOM_OP_CEIL: case LOOM_OP_ROUND:
  case LOOM_OP_NEARBYINT: case LOOM_OP_TRUNC: case LOOM_OP_SIN: case LOOM_OP_COS:
  case LOOM_OP_TAN: case LOOM_OP_ASIN: case LOOM_OP_ACOS: case LOOM_OP_ATAN:
  case LOOM_OP_SINH: case LOOM_OP_COSH:
    r = math1(op, x[0].f);
    break;
  default: return 0;
  }
  *out = norm_float(t, r);
  return 1;
}
