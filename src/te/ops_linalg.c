/* Matrix products: matmul in its layouts with bias and epilogue, batched
 * matmul, dense, gemv, and the dequantizing products with int4 and int8
 * weights and per-group scales. */
#include "ops.h"

#include <string.h>

typedef struct mm_ctx {
  loom_te_tensor *a, *b;
  loom_var *k;
  bool ta, tb, is_batched;
  loom_dtype out;
} mm_ctx;

static loom_expr *mm_body(loom_te *te, void *user, loom_expr *const *idx) {
  mm_ctx *c = user;
  int o = c->is_batched ? 1 : 0;
  loom_expr *k = loom_te_ref(te, c->k);
  loom_expr *ai[3], *bi[3];
  ai[0] = bi[0] = idx[0];
  ai[o] = c->ta ? k : idx[o];
  ai[o + 1] = c->ta ? idx[o] : k;
  bi[o] = c->tb ? idx[o + 1] : k;
  bi[o + 1] = c->tb ? k : idx[o + 1];
  loom_expr *x = loom_te_cast(te, c->out, loom_te_at(te, c->a, ai, o + 2));
  loom_expr *y = loom_te_cast(te, c->out, loom_te_at(te, c->b, bi, o + 2));
  return loom_te_sum(te, loom_te_mul(te, x, y), &c->k, 1, NULL);
}

typedef struct epi_ctx {
  loom_te_tensor *x, *bias;
  const char *act;
} epi_ctx;

static loom_expr *bias_body(loom_te *te, void *user, loom_expr *const *idx) {
  epi_ctx *c = user;
  int n = loom_te_ndim(c->x);
  return loom_te_add(te, loom_te_at(te, c->x, idx, n),
                     loom_te_at(te, c->bias, &idx[n - 1], 1));
}

static loom_expr *act_body(loom_te *te, void *user, loom_expr *const *idx) {
  epi_ctx *c = user;
  return ops_activation(te, c->act, loom_te_at(te, c->x, idx,
                                               loom_te_ndim(c->x)));
}

/* Adds the bias stage (T_add) and the activation stage (compute). */
static loom_expr *cast_body(loom_te *te, void *user, loom_expr *const *idx) {
  epi_ctx *c = user;
  return loom_te_at(te, c->x, idx, 1);
}

static loom_te_tensor *epilogue(loom_te *te, loom_te_tensor *y,
                                loom_te_tensor *bias, const char *act) {
  int n = loom_te_ndim(y);
  loom_expr *shape[TE_MAX_RANK];
  for (int i = 0; i < n; i++)
    shape[i] = loom_te_dim(y, i);
  epi_ctx c = {y, bias, act};
  if (bias) {
    /* topi adds bias.astype(out_dtype), a stage of its own. */
    loom_expr *bs = loom_te_dim(bias, 0);
    epi_ctx bc = {bias, NULL, "none"};
    c.bias = loom_te_compute(te, "compute", &bs, 1, NULL, cast_body, &bc);
    y = loom_te_compute(te, "T_add", shape, n, NULL, bias_body, &c);
    c.x = y;
  }
  if (strcmp(act, "none"))
    y = loom_te_compute(te, "compute", shape, n, NULL, act_body, &c);
  return y;
}

static loom_status activation_key(const loom_te_args *args, const char **act,
                                  loom_diag *d) {
  TRY(loom_te_args_str(args, "epilogue", act, d));
  if (!ops_is_activation(*act))
    return loom_diag_error(d, (loom_loc){0},
                           "%s: epilogue=%s is unknown; write none, relu, "
                           "gelu, silu, sigmoid, tanh or exp",
                           args->op->name, *act);
  return LOOM_OK;
}

static loom_status positive(const loom_te_args *args, const char *key,
                            int64_t v, loom_diag *d) {
  if (v < 1)
    return loom_diag_error(d, (loom_loc){0}, "%s: %s=%lld must be at least 1",
                           args->op->name, key, (long long)v);
  return LOOM_OK;
}

static loom_status get_dims(const loom_te_args *args, const char *const *keys,
                            int64_t *v, int n, loom_diag *d) {
  for (int i = 0; i < n; i++) {
    TRY(loom_te_args_int(args, keys[i], &v[i], d));
    TRY(positive(args, keys[i], v[i], d));
  }
  return LOOM_OK;
}

static loom_status build_matmul(loom_te *te, const loom_te_args *args,
                                bool is_batched, bool is_dense,
                                loom_func **out, loom_diag *d) {
  static const char *const keys[] = {"B", "M", "N", "K"};
  int64_t v[4] = {1, 0, 0, 0};
  int64_t has_bias = 0;
  const char *layout = "NT", *act = "none";
  loom_dtype t, ot;
  TRY(get_dims(args, keys + !is_batched, v + !is_batched, 3 + is_batched, d));
  TRY(loom_te_args_dtype(args, "dtype", &t, d));
  if (!is_dense) {
    TRY(ops_out_dtype(args, t, &ot, d));
    TRY(loom_te_args_str(args, "layout", &layout, d));
    TRY(loom_te_args_int(args, "bias", &has_bias, d));
    TRY(activation_key(args, &act, d));
  } else {
    ot = t;
  }
  if (strlen(layout) != 2 || !strchr("NT", layout[0]) ||
      !strchr("NT", layout[1]))
    return loom_diag_error(d, (loom_loc){0},
                           "%s: layout=%s is unknown; write NN, NT, TN or TT",
                           args->op->name, layout);
  int64_t B = v[0], M = v[1], N = v[2], K = v[3];
  mm_ctx c = {0};
  c.ta = layout[0] == 'T';
  c.tb = layout[1] == 'T';
  c.is_batched = is_batched;
  c.out = ot;
  int o = is_batched;
  int64_t as[3] = {B, c.ta ? K : M, c.ta ? M : K};
  int64_t bs[3] = {B, c.tb ? N : K, c.tb ? K : N};
  c.a = ops_input(te, "A", is_batched ? as : as + 1, o + 2, t);
  c.b = ops_input(te, is_dense ? "W" : "B", is_batched ? bs : bs + 1, o + 2, t);
  loom_te_tensor *bias =
      has_bias ? ops_input(te, "bias", &N, 1, ot) : NULL;
  c.k = loom_te_reduce_axis(te, ops_int(te, K), "k");
  loom_expr *shape[3] = {ops_int(te, B), ops_int(te, M), ops_int(te, N)};
  static const char *const names2[] = {"i0", "i1"};
  static const char *const names3[] = {"b", "i", "j"};
  char name[32];
  snprintf(name, sizeof name, "T_%smatmul_%s", is_batched ? "batch_" : "",
           layout);
  loom_te_tensor *y = loom_te_compute(te, name, shape + !is_batched, o + 2,
                                      is_batched ? names3 : names2, mm_body, &c);
  /* topi's nn.matmul, dense and batch_matmul mark the weight free to
   * re-layout. */
  loom_te_set_layout_free(te, y, c.b);
  y = epilogue(te, y, bias, act);
  loom_te_tensor *all[4] = {c.a, c.b, bias ? bias : y, y};
  return ops_finish(te, all, bias ? 4 : 3, out, d);
}

loom_status op_matmul(loom_te *te, const loom_te_args *args, loom_func **out,
                      loom_diag *d) {
  return build_matmul(te, args, false, false, out, d);
}

loom_status op_batch_matmul(loom_te *te, const loom_te_args *args,
                            loom_func **out, loom_diag *d) {
  return build_matmul(te, args, true, false, out, d);
}

loom_status op_dense(loom_te *te, const loom_te_args *args, loom_func **out,
                     loom_diag *d) {
  return build_matmul(te, args, false, true, out, d);
}

/* ---- gemv ------------------------------------------------------------------ */

typedef struct gemv_ctx {
  loom_te_tensor *a, *x, *scale;
  loom_var *k;
  loom_dtype t;
  int64_t group, bits;
} gemv_ctx;

static loom_expr *gemv_body(loom_te *te, void *user, loom_expr *const *idx) {
  gemv_ctx *c = user;
  loom_expr *k = loom_te_ref(te, c->k);
  loom_expr *ai[2] = {idx[0], k};
  return loom_te_sum(te, loom_te_mul(te, loom_te_at(te, c->a, ai, 2),
                                     loom_te_at(te, c->x, &k, 1)),
                     &c->k, 1, NULL);
}

loom_status op_gemv(loom_te *te, const loom_te_args *args, loom_func **out,
                    loom_diag *d) {
  static const char *const keys[] = {"N", "K"};
  int64_t v[2];
  gemv_ctx c = {0};
  TRY(get_dims(args, keys, v, 2, d));
  TRY(loom_te_args_dtype(args, "dtype", &c.t, d));
  c.a = ops_input(te, "A", v, 2, c.t);
  c.x = ops_input(te, "x", &v[1], 1, c.t);
  c.k = loom_te_reduce_axis(te, ops_int(te, v[1]), "k");
  loom_expr *n = ops_int(te, v[0]);
  loom_te_tensor *y = loom_te_compute(te, "y", &n, 1, NULL, gemv_body, &c);
  loom_te_tensor *all[3] = {c.a, c.x, y};
  return ops_finish(te, all, 3, out, d);
}

/* ---- dequantizing products ------------------------------------------------
 * Weights hold 32 / bits values per uint32 word, lowest bits first, stored
 * unsigned with an offset of 2^(bits-1); each group of `group` consecutive
 * values along K shares one scale (dlight's gemv_i4 case). */

static loom_expr *decode_body(loom_te *te, void *user, loom_expr *const *idx) {
  gemv_ctx *c = user;
  int64_t per = 32 / c->bits;
  loom_expr *wi[2] = {idx[0], loom_te_bin(te, LOOM_EXPR_FLOORDIV, idx[1],
                                          ops_int(te, per))};
  loom_expr *word = loom_te_at(te, c->a, wi, 2);
  loom_dtype u32 = LOOM_DTYPE(LOOM_DT_UINT, 32, 1);
  loom_expr *shift = loom_te_mul(
      te, loom_te_cast(te, u32, loom_te_bin(te, LOOM_EXPR_FLOORMOD, idx[1],
                                            ops_int(te, per))),
      loom_te_const(te, u32, (double)c->bits));
  loom_expr *sa[2] = {word, shift};
  loom_expr *q = loom_te_call(te, LOOM_OP_SHIFT_RIGHT, sa, 2);
  loom_expr *ma[2] = {q, loom_te_const(te, u32, (double)((1 << c->bits) - 1))};
  q = loom_te_call(te, LOOM_OP_BITWISE_AND, ma, 2);
  loom_expr *centered = loom_te_sub(
      te, loom_te_cast(te, c->t, q),
      loom_te_const(te, c->t, (double)(1 << (c->bits - 1))));
  loom_expr *si[2] = {idx[0], loom_te_bin(te, LOOM_EXPR_FLOORDIV, idx[1],
                                          ops_int(te, c->group))};
  return loom_te_mul(te, centered, loom_te_at(te, c->scale, si, 2));
}

static loom_expr *deq_body(loom_te *te, void *user, loom_expr *const *idx) {
  gemv_ctx *c = user; /* here c->a is the decoded weight, (N, K) */
  loom_expr *k = loom_te_ref(te, c->k);
  loom_expr *wi[2] = {idx[1], k};
  loom_expr *xi[2] = {idx[0], k};
  return loom_te_sum(te, loom_te_mul(te, loom_te_at(te, c->x, xi, 2),
                                     loom_te_at(te, c->a, wi, 2)),
                     &c->k, 1, NULL);
}

static loom_status build_dequant(loom_te *te, const loom_te_args *args,
                                 loom_func **out, loom_diag *d) {
  static const char *const keys[] = {"M", "N", "K", "group", "bits"};
  int64_t v[5];
  gemv_ctx c = {0};
  TRY(get_dims(args, keys, v, 5, d));
  TRY(loom_te_args_dtype(args, "dtype", &c.t, d));
  int64_t M = v[0], N = v[1], K = v[2];
  c.group = v[3];
  c.bits = v[4];
  if (c.bits != 4 && c.bits != 8)
    return loom_diag_error(d, (loom_loc){0}, "%s: bits=%lld; write bits=4 or "
                           "bits=8", args->op->name, (long long)c.bits);
  int64_t per = 32 / c.bits;
  if (K % per || K % c.group)
    return loom_diag_error(d, (loom_loc){0},
                           "%s: K=%lld must be a multiple of %lld values per "
                           "word and of group=%lld",
                           args->op->name, (long long)K, (long long)per,
                           (long long)c.group);
  int64_t ws[2] = {N, K / per}, ss[2] = {N, K / c.group}, xs[2] = {M, K};
  loom_te_tensor *w = ops_input(te, "W", ws, 2, LOOM_DTYPE(LOOM_DT_UINT, 32, 1));
  c.scale = ops_input(te, "scale", ss, 2, c.t);
  c.x = ops_input(te, "x", xs, 2, c.t);
  c.a = w;
  loom_expr *dshape[2] = {ops_int(te, N), ops_int(te, K)};
  loom_te_tensor *deq = loom_te_compute(te, "decode", dshape, 2, NULL,
                                        decode_body, &c);
  c.a = deq;
  c.k = loom_te_reduce_axis(te, ops_int(te, K), "k");
  loom_expr *oshape[2] = {ops_int(te, M), ops_int(te, N)};
  loom_te_tensor *y = loom_te_compute(te, "matmul", oshape, 2, NULL, deq_body,
                                      &c);
  loom_te_tensor *all[4] = {w, c.scale, c.x, y};
  return ops_finish(te, all, 4, out, d);
}

loom_status op_dequant_matmul(loom_te *te, const loom_te_args *args,
                              loom_func **out, loom_diag *d) {
  return build_dequant(te, args, out, d);
}
