/* Operators of the library run by the reference interpreter against plain C
 * reference implementations on random inputs, over several shapes and
 * dtypes (odd sizes, stride, padding, dilation and groups); and the C API
 * used directly: a symbolic size, a where= reduction, and the errors. */
#include "loom/interp.h"
#include "loom/te.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct run {
  loom_arena *a;
  loom_func *f;
  loom_interp_array **args;
} run;

/* Builds op with settings, fills the inputs (all but the last parameter)
 * with seeded random data and runs it. */
static int build_run(run *r, const char *op, const char *const *settings,
                     int n) {
  loom_diag d;
  loom_diag_init(&d);
  r->a = loom_arena_new();
  r->args = NULL;
  const loom_te_op *o = loom_te_op_find(op);
  if (!o || loom_te_op_build(o, settings, n, r->a, &r->f, &d) != LOOM_OK) {
    printf("  build %s: %s\n", op, d.msg ? d.msg : "unknown operator");
    loom_diag_free(&d);
    return 0;
  }
  r->args = calloc((size_t)r->f->n_params, sizeof *r->args);
  loom_rng rng;
  loom_rng_seed(&rng, 42);
  int ok = loom_interp_alloc_args(r->f, NULL, r->args, &d) == LOOM_OK;
  for (int i = 0; ok && i < r->f->n_params - 1; i++)
    loom_interp_fill_random(r->args[i], &rng);
  if (ok && loom_interp_run(r->f, r->args, NULL, &d) != LOOM_OK) {
    printf("  run %s: %s\n", op, d.msg);
    ok = 0;
  }
  loom_diag_free(&d);
  return ok;
}

/* The same for a TE script. */
static int script_run(run *r, const char *text) {
  loom_diag d;
  loom_diag_init(&d);
  r->a = loom_arena_new();
  r->args = NULL;
  if (loom_te_read_script(text, strlen(text), "t.py", r->a, &r->f, &d) !=
      LOOM_OK) {
    printf("  script: %s\n", d.msg ? d.msg : "out of memory");
    loom_diag_free(&d);
    return 0;
  }
  r->args = calloc((size_t)r->f->n_params, sizeof *r->args);
  loom_rng rng;
  loom_rng_seed(&rng, 7);
  int ok = loom_interp_alloc_args(r->f, NULL, r->args, &d) == LOOM_OK;
  for (int i = 0; ok && i < r->f->n_params; i++)
    loom_interp_fill_random(r->args[i], &rng);
  if (ok && loom_interp_run(r->f, r->args, NULL, &d) != LOOM_OK) {
    printf("  run script: %s\n", d.msg);
    ok = 0;
  }
  loom_diag_free(&d);
  return ok;
}

static void done(run *r) {
  if (r->args && r->f)
    loom_interp_free_args(r->f, r->args);
  free(r->args);
  loom_arena_free(r->a);
}

static double at(const run *r, int p, int64_t i) {
  return loom_interp_array_get(r->args[p], i);
}

/* Compares the output with want[] within a tolerance fit for the dtype. */
static void check_out(const run *r, const double *want, double tol,
                      const char *what) {
  const loom_interp_array *y = r->args[r->f->n_params - 1];
  int64_t bad = -1;
  for (int64_t i = 0; i < y->n_elems && bad < 0; i++) {
    double g = loom_interp_array_get(y, i);
    if (!(fabs(g - want[i]) <= tol * (1 + fabs(want[i]))))
      bad = i;
  }
  if (bad >= 0)
    printf("  %s: element %lld is %g, expected %g\n", what, (long long)bad,
           loom_interp_array_get(y, bad), want[bad]);
  CHECK(bad < 0);
}

static double tol_of(const char *dtype) {
  return strcmp(dtype, "float16") ? 1e-4 : 2e-2;
}

static void test_matmul(const char *layout, int M, int N, int K,
                        const char *dtype, int bias, const char *epi) {
  char s[8][32];
  /* int8 products accumulate in int32, as quantized kernels do. */
  snprintf(s[7], 32, "out_dtype=%s", strcmp(dtype, "int8") ? dtype : "int32");
  snprintf(s[0], 32, "M=%d", M);
  snprintf(s[1], 32, "N=%d", N);
  snprintf(s[2], 32, "K=%d", K);
  snprintf(s[3], 32, "layout=%s", layout);
  snprintf(s[4], 32, "dtype=%s", dtype);
  snprintf(s[5], 32, "bias=%d", bias);
  snprintf(s[6], 32, "epilogue=%s", epi);
  const char *set[8] = {s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]};
  run r;
  CHECK(build_run(&r, "matmul", set, 8));
  if (r.args) {
    double *want = calloc((size_t)(M * N), sizeof *want);
    bool ta = layout[0] == 'T', tb = layout[1] == 'T';
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double acc = 0;
        for (int k = 0; k < K; k++)
          acc += at(&r, 0, ta ? k * M + i : i * K + k) *
                 at(&r, 1, tb ? j * K + k : k * N + j);
        if (bias)
          acc += at(&r, 2, j);
        if (!strcmp(epi, "relu"))
          acc = acc > 0 ? acc : 0;
        want[i * N + j] = acc;
      }
    check_out(&r, want, tol_of(dtype) * K, "matmul");
    free(want);
  }
  done(&r);
}

/* NCHW conv2d with stride, padding, dilation and groups, OIHW weights. */
static void test_conv2d(int C, int H, int K, int R, int stride, int pad,
                        int dil, int groups) {
  char s[8][32];
  snprintf(s[0], 32, "C=%d", C);
  snprintf(s[1], 32, "H=%d", H);
  snprintf(s[2], 32, "K=%d", K);
  snprintf(s[3], 32, "R=%d", R);
  snprintf(s[4], 32, "stride=%d", stride);
  snprintf(s[5], 32, "pad=%d", pad);
  snprintf(s[6], 32, "dilation=%d", dil);
  snprintf(s[7], 32, "groups=%d", groups);
  const char *set[8] = {s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]};
  run r;
  CHECK(build_run(&r, "conv2d", set, 8));
  if (r.args) {
    int O = (H + 2 * pad - (R - 1) * dil - 1) / stride + 1;
    int cg = C / groups, kg = K / groups;
    double *want = calloc((size_t)(K * O * O), sizeof *want);
    for (int k = 0; k < K; k++)
      for (int y = 0; y < O; y++)
        for (int x = 0; x < O; x++) {
          double acc = 0;
          for (int c = 0; c < cg; c++)
            for (int ry = 0; ry < R; ry++)
              for (int rx = 0; rx < R; rx++) {
                int iy = y * stride + ry * dil - pad;
                int ix = x * stride + rx * dil - pad;
                if (iy < 0 || iy >= H || ix < 0 || ix >= H)
                  continue;
                int ci = k / kg * cg + c;
                acc += at(&r, 0, (ci * H + iy) * H + ix) *
                       at(&r, 1, ((k * cg + c) * R + ry) * R + rx);
              }
          want[(k * O + y) * O + x] = acc;
        }
    check_out(&r, want, 1e-4 * C * R * R, "conv2d");
    free(want);
  }
  done(&r);
}

/* conv2d in NHWC (HWIO weights) and depthwise in both layouts, N = 1. */
static void test_conv2d_layouts(const char *op, const char *layout, int C,
                                int H, int K, int R, int stride, int pad,
                                int dil, int groups) {
  char s[9][32];
  snprintf(s[0], 32, "C=%d", C);
  snprintf(s[1], 32, "H=%d", H);
  snprintf(s[2], 32, "K=%d", K);
  snprintf(s[3], 32, "R=%d", R);
  snprintf(s[4], 32, "stride=%d", stride);
  snprintf(s[5], 32, "pad=%d", pad);
  snprintf(s[6], 32, "dilation=%d", dil);
  snprintf(s[7], 32, "groups=%d", groups);
  snprintf(s[8], 32, "layout=%s", layout);
  const char *set[9] = {s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]};
  run r;
  CHECK(build_run(&r, op, set, 9));
  if (r.args) {
    bool is_dw = !strcmp(op, "depthwise_conv2d");
    bool is_nhwc = !strcmp(layout, "NHWC");
    int O = (H + 2 * pad - (R - 1) * dil - 1) / stride + 1;
    int KO = is_dw ? C : K, cg = is_dw ? 1 : C / groups, kg = is_dw ? 1 : K / groups;
    double *want = calloc((size_t)(KO * O * O), sizeof *want);
    for (int k = 0; k < KO; k++)
      for (int y = 0; y < O; y++)
        for (int x = 0; x < O; x++) {
          double acc = 0;
          for (int c = 0; c < cg; c++)
            for (int ry = 0; ry < R; ry++)
              for (int rx = 0; rx < R; rx++) {
                int iy = y * stride + ry * dil - pad;
                int ix = x * stride + rx * dil - pad;
                if (iy < 0 || iy >= H || ix < 0 || ix >= H)
                  continue;
                int ci = is_dw ? k : k / kg * cg + c;
                int64_t xi = is_nhwc ? ((int64_t)iy * H + ix) * C + ci
                                     : ((int64_t)ci * H + iy) * H + ix;
                int64_t wi = is_dw ? (is_nhwc ? (ry * R + rx) * C + k
                                              : (k * R + ry) * R + rx)
                             : is_nhwc ? ((ry * R + rx) * cg + c) * K + k
                                       : ((k * cg + c) * R + ry) * R + rx;
                acc += at(&r, 0, xi) * at(&r, 1, wi);
              }
          want[is_nhwc ? (y * O + x) * KO + k : (k * O + y) * O + x] = acc;
        }
    check_out(&r, want, 1e-4 * C * R * R, op);
    free(want);
  }
  done(&r);
}

/* conv2d or conv3d with every spatial parameter given per dimension (and
 * padding per side), N = 2, in both layouts. A 2-D case is the 3-D one with
 * depth 1, kernel depth 1, stride 1 and no padding in depth, so one loop
 * nest is the reference for both. sp[] holds D, H, W; r, st, dl the
 * kernel, stride and dilation per dimension; pb / pa the padding before
 * and after. */
typedef struct conv_case {
  int nsp;
  const char *layout;
  int C, K, groups;
  int sp[3], r[3], st[3], dl[3], pb[3], pa[3];
} conv_case;

static void test_conv_dims(const conv_case *t) {
  char s[12][48];
  int o = t->nsp == 3 ? 0 : 1; /* first dimension named in the settings */
  snprintf(s[0], 48, "N=2");
  snprintf(s[1], 48, "C=%d", t->C);
  snprintf(s[2], 48, "K=%d", t->K);
  snprintf(s[3], 48, "groups=%d", t->groups);
  snprintf(s[4], 48, "layout=%s", t->layout);
  snprintf(s[5], 48, "D=%d", t->sp[0]);
  snprintf(s[6], 48, "H=%d", t->sp[1]);
  snprintf(s[7], 48, "W=%d", t->sp[2]);
  const char *names[3] = {"R", "stride", "dilation"};
  const int *vals[3] = {t->r, t->st, t->dl};
  for (int k = 0; k < 3; k++) {
    if (t->nsp == 3)
      snprintf(s[8 + k], 48, "%s=%d,%d,%d", names[k], vals[k][0], vals[k][1],
               vals[k][2]);
    else
      snprintf(s[8 + k], 48, "%s=%d,%d", names[k], vals[k][1], vals[k][2]);
  }
  if (t->nsp == 3)
    snprintf(s[11], 48, "pad=%d,%d,%d,%d,%d,%d", t->pb[0], t->pb[1], t->pb[2],
             t->pa[0], t->pa[1], t->pa[2]);
  else
    snprintf(s[11], 48, "pad=%d,%d,%d,%d", t->pb[1], t->pb[2], t->pa[1],
             t->pa[2]);
  const char *set[12];
  int n = 0;
  for (int i = 0; i < 12; i++)
    if (!(o == 1 && i == 5))
      set[n++] = s[i];
  run r;
  CHECK(build_run(&r, t->nsp == 3 ? "conv3d" : "conv2d", set, n));
  if (!r.args) {
    done(&r);
    return;
  }
  bool is_cl = t->layout[1] != 'C'; /* channels last */
  int O[3], C = t->C, K = t->K, cg = C / t->groups, kg = K / t->groups;
  for (int i = 0; i < 3; i++)
    O[i] = (t->sp[i] + t->pb[i] + t->pa[i] - (t->r[i] - 1) * t->dl[i] - 1) /
               t->st[i] + 1;
  int64_t no = (int64_t)2 * K * O[0] * O[1] * O[2];
  double *want = calloc((size_t)no, sizeof *want);
  for (int b = 0; b < 2; b++)
    for (int k = 0; k < K; k++)
      for (int z = 0; z < O[0]; z++)
        for (int y = 0; y < O[1]; y++)
          for (int x = 0; x < O[2]; x++) {
            double acc = 0;
            for (int c = 0; c < cg; c++)
              for (int rz = 0; rz < t->r[0]; rz++)
                for (int ry = 0; ry < t->r[1]; ry++)
                  for (int rx = 0; rx < t->r[2]; rx++) {
                    int p[3] = {z, y, x}, q[3] = {rz, ry, rx}, in[3];
                    bool is_in = true;
                    for (int i = 0; i < 3; i++) {
                      in[i] = p[i] * t->st[i] + q[i] * t->dl[i] - t->pb[i];
                      is_in = is_in && in[i] >= 0 && in[i] < t->sp[i];
                    }
                    if (!is_in)
                      continue;
                    int ci = k / kg * cg + c;
                    int64_t sp = ((int64_t)in[0] * t->sp[1] + in[1]) * t->sp[2] +
                                 in[2];
                    int64_t nsp = (int64_t)t->sp[0] * t->sp[1] * t->sp[2];
                    int64_t xi = is_cl ? (b * nsp + sp) * C + ci
                                       : (b * C + ci) * nsp + sp;
                    int64_t kq = ((int64_t)rz * t->r[1] + ry) * t->r[2] + rx;
                    int64_t kn = (int64_t)t->r[0] * t->r[1] * t->r[2];
                    int64_t wi = is_cl ? (kq * cg + c) * K + k
                                       : ((int64_t)k * cg + c) * kn + kq;
                    acc += at(&r, 0, xi) * at(&r, 1, wi);
                  }
            int64_t os = ((int64_t)z * O[1] + y) * O[2] + x;
            int64_t onsp = (int64_t)O[0] * O[1] * O[2];
            want[is_cl ? (b * onsp + os) * K + k : (b * K + k) * onsp + os] =
                acc;
          }
  check_out(&r, want, 1e-4 * C * 27, t->nsp == 3 ? "conv3d" : "conv2d dims");
  free(want);
  done(&r);
}

/* conv1d NCW: OIW weights. */
static void test_conv1d(int C, int W, int K, int R, int stride, int pad,
                        int dil) {
  char s[7][32];
  snprintf(s[0], 32, "C=%d", C);
  snprintf(s[1], 32, "H=%d", W);
  snprintf(s[2], 32, "K=%d", K);
  snprintf(s[3], 32, "R=%d", R);
  snprintf(s[4], 32, "stride=%d", stride);
  snprintf(s[5], 32, "pad=%d", pad);
  snprintf(s[6], 32, "dilation=%d", dil);
  const char *set[7] = {s[0], s[1], s[2], s[3], s[4], s[5], s[6]};
  run r;
  CHECK(build_run(&r, "conv1d", set, 7));
  if (r.args) {
    int O = (W + 2 * pad - (R - 1) * dil - 1) / stride + 1;
    double *want = calloc((size_t)(K * O), sizeof *want);
    for (int k = 0; k < K; k++)
      for (int x = 0; x < O; x++)
        for (int c = 0; c < C; c++)
          for (int rx = 0; rx < R; rx++) {
            int ix = x * stride + rx * dil - pad;
            if (ix >= 0 && ix < W)
              want[k * O + x] += at(&r, 0, c * W + ix) * at(&r, 1, (k * C + c) * R + rx);
          }
    check_out(&r, want, 1e-4 * C * R, "conv1d");
    free(want);
  }
  done(&r);
}

static void test_conv2d_transpose(int C, int H, int K, int R, int stride,
                                  int pad) {
  char s[6][32];
  snprintf(s[0], 32, "C=%d", C);
  snprintf(s[1], 32, "H=%d", H);
  snprintf(s[2], 32, "K=%d", K);
  snprintf(s[3], 32, "R=%d", R);
  snprintf(s[4], 32, "stride=%d", stride);
  snprintf(s[5], 32, "pad=%d", pad);
  const char *set[6] = {s[0], s[1], s[2], s[3], s[4], s[5]};
  run r;
  CHECK(build_run(&r, "conv2d_transpose", set, 6));
  if (r.args) {
    int O = (H - 1) * stride - 2 * pad + R;
    double *want = calloc((size_t)(K * O * O), sizeof *want);
    /* Scatter form: each input point adds its kernel into the output. */
    for (int c = 0; c < C; c++)
      for (int iy = 0; iy < H; iy++)
        for (int ix = 0; ix < H; ix++)
          for (int k = 0; k < K; k++)
            for (int ry = 0; ry < R; ry++)
              for (int rx = 0; rx < R; rx++) {
                int y = iy * stride + ry - pad, x = ix * stride + rx - pad;
                if (y < 0 || y >= O || x < 0 || x >= O)
                  continue;
                want[(k * O + y) * O + x] +=
                    at(&r, 0, (c * H + iy) * H + ix) *
                    at(&r, 1, ((c * K + k) * R + ry) * R + rx);
              }
    check_out(&r, want, 1e-4 * C * R * R, "conv2d_transpose");
    free(want);
  }
  done(&r);
}

static void test_softmax(const char *op, int rows, int cols) {
  char s[1][32];
  snprintf(s[0], 32, "shape=%d,%d", rows, cols);
  const char *set[1] = {s[0]};
  run r;
  CHECK(build_run(&r, op, set, 1));
  if (r.args) {
    double *want = calloc((size_t)(rows * cols), sizeof *want);
    for (int i = 0; i < rows; i++) {
      double m = -INFINITY, sum = 0;
      for (int j = 0; j < cols; j++)
        m = fmax(m, at(&r, 0, i * cols + j));
      for (int j = 0; j < cols; j++)
        sum += exp(at(&r, 0, i * cols + j) - m);
      for (int j = 0; j < cols; j++) {
        double x = at(&r, 0, i * cols + j) - m;
        want[i * cols + j] = strcmp(op, "softmax") ? x - log(sum)
                                                   : exp(x) / sum;
      }
    }
    check_out(&r, want, 1e-5, op);
    free(want);
  }
  done(&r);
}

static void test_norm(const char *op, int rows, int cols) {
  char s[1][32];
  snprintf(s[0], 32, "shape=%d,%d", rows, cols);
  const char *set[1] = {s[0]};
  run r;
  CHECK(build_run(&r, op, set, 1));
  if (r.args) {
    bool is_layer = !strcmp(op, "layer_norm");
    double *want = calloc((size_t)(rows * cols), sizeof *want);
    for (int i = 0; i < rows; i++) {
      double mean = 0, var = 0;
      for (int j = 0; j < cols; j++)
        mean += at(&r, 0, i * cols + j) / cols;
      if (!is_layer)
        mean = 0;
      for (int j = 0; j < cols; j++) {
        double dv = at(&r, 0, i * cols + j) - mean;
        var += dv * dv / cols;
      }
      for (int j = 0; j < cols; j++)
        want[i * cols + j] = (at(&r, 0, i * cols + j) - mean) /
                                 sqrt(var + 1e-5) * at(&r, 1, j) +
                             (is_layer ? at(&r, 2, j) : 0);
    }
    check_out(&r, want, 1e-4, op);
    free(want);
  }
  done(&r);
}

static void test_pool(const char *op, int H, int k, int stride, int pad) {
  char s[4][32];
  snprintf(s[0], 32, "shape=1,3,%d,%d", H, H);
  snprintf(s[1], 32, "kernel=%d", k);
  snprintf(s[2], 32, "stride=%d", stride);
  snprintf(s[3], 32, "pad=%d", pad);
  const char *set[4] = {s[0], s[1], s[2], s[3]};
  run r;
  CHECK(build_run(&r, op, set, 4));
  if (r.args) {
    bool is_max = !strcmp(op, "max_pool2d");
    int O = (H + 2 * pad - k) / stride + 1;
    double *want = calloc((size_t)(3 * O * O), sizeof *want);
    for (int c = 0; c < 3; c++)
      for (int y = 0; y < O; y++)
        for (int x = 0; x < O; x++) {
          double acc = is_max ? -INFINITY : 0;
          for (int ry = 0; ry < k; ry++)
            for (int rx = 0; rx < k; rx++) {
              int iy = y * stride + ry - pad, ix = x * stride + rx - pad;
              double v = iy < 0 || iy >= H || ix < 0 || ix >= H
                             ? (is_max ? -INFINITY : 0)
                             : at(&r, 0, (c * H + iy) * H + ix);
              acc = is_max ? fmax(acc, v) : acc + v;
            }
          want[(c * O + y) * O + x] = is_max ? acc : acc / (k * k);
        }
    check_out(&r, want, 1e-5, op);
    free(want);
  }
  done(&r);
}

/* Packed int4/int8 weights: random words, values decoded low bits first. */
static void test_dequant(const char *op, int M, int N, int K, int group) {
  char s[4][32];
  snprintf(s[0], 32, "M=%d", M);
  snprintf(s[1], 32, "N=%d", N);
  snprintf(s[2], 32, "K=%d", K);
  snprintf(s[3], 32, "group=%d", group);
  const char *set[4] = {s[0], s[1], s[2], s[3]};
  run r;
  CHECK(build_run(&r, op, set, 4));
  if (r.args) {
    int bits = strstr(op, "i4") ? 4 : 8, per = 32 / bits;
    /* Overwrite the weights with full-range words and rerun. */
    loom_rng rng;
    loom_rng_seed(&rng, 7);
    uint32_t *w = r.args[0]->data;
    for (int64_t i = 0; i < r.args[0]->n_elems; i++)
      w[i] = (uint32_t)loom_rng_next(&rng);
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_interp_run(r.f, r.args, NULL, &d) == LOOM_OK);
    loom_diag_free(&d);
    double *want = calloc((size_t)(M * N), sizeof *want);
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double acc = 0;
        for (int k = 0; k < K; k++) {
          uint32_t word = w[j * (K / per) + k / per];
          int q = (int)((word >> ((k % per) * bits)) & ((1u << bits) - 1));
          double v = (q - (1 << (bits - 1))) * at(&r, 1, j * (K / group) +
                                                          k / group);
          acc += at(&r, 2, i * K + k) * v;
        }
        want[i * N + j] = acc;
      }
    check_out(&r, want, 1e-4 * K * (1 << bits), op);
    free(want);
  }
  done(&r);
}

static void test_elementwise(void) {
  const char *set[2] = {"a_shape=3,1,5", "b_shape=4,5"};
  run r;
  CHECK(build_run(&r, "subtract", set, 2));
  if (r.args) {
    double want[60];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        for (int k = 0; k < 5; k++)
          want[(i * 4 + j) * 5 + k] = at(&r, 0, i * 5 + k) - at(&r, 1, j * 5 + k);
    check_out(&r, want, 1e-6, "subtract");
  }
  done(&r);
  const char *gs[1] = {"shape=7,3"};
  CHECK(build_run(&r, "gelu", gs, 1));
  if (r.args) {
    double want[21];
    for (int i = 0; i < 21; i++) {
      double x = at(&r, 0, i);
      want[i] = x * 0.5 * (1 + erf(x / sqrt(2)));
    }
    check_out(&r, want, 1e-5, "gelu");
  }
  done(&r);
  const char *ts[2] = {"shape=3,5,2", "axes=1,2,0"};
  CHECK(build_run(&r, "transpose", ts, 2));
  if (r.args) {
    double want[30];
    for (int a = 0; a < 5; a++)
      for (int b = 0; b < 2; b++)
        for (int c = 0; c < 3; c++)
          want[(a * 2 + b) * 3 + c] = at(&r, 0, (c * 5 + a) * 2 + b);
    check_out(&r, want, 0, "transpose");
  }
  done(&r);
  const char *rs[2] = {"shape=3,10", "new_shape=5,2,3"};
  CHECK(build_run(&r, "reshape", rs, 2));
  if (r.args) {
    double want[30];
    for (int i = 0; i < 30; i++)
      want[i] = at(&r, 0, i);
    check_out(&r, want, 0, "reshape");
  }
  done(&r);
  const char *cs[3] = {"a_shape=3,2", "b_shape=3,5", "axis=1"};
  CHECK(build_run(&r, "concatenate", cs, 3));
  if (r.args) {
    double want[21];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 7; j++)
        want[i * 7 + j] = j < 2 ? at(&r, 0, i * 2 + j) : at(&r, 1, i * 5 + j - 2);
    check_out(&r, want, 0, "concatenate");
  }
  done(&r);
  const char *ms[2] = {"shape=3,7,5", "axis=1"};
  CHECK(build_run(&r, "mean", ms, 2));
  if (r.args) {
    double want[15] = {0};
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 7; j++)
        for (int k = 0; k < 5; k++)
          want[i * 5 + k] += at(&r, 0, (i * 7 + j) * 5 + k) / 7;
    check_out(&r, want, 1e-5, "mean");
  }
  done(&r);
}

/* argmax / argmin of a 3-D tensor along one axis, on data with ties (small
 * integers) or random floats: the first index of the extreme, keepdims or
 * not (the output holds the same elements in the same order). */
static void test_argreduce(const char *op, int d0, int d1, int d2, int axis,
                           int keepdims, const char *dtype) {
  char s[4][32];
  snprintf(s[0], 32, "shape=%d,%d,%d", d0, d1, d2);
  snprintf(s[1], 32, "axis=%d", axis);
  snprintf(s[2], 32, "keepdims=%d", keepdims);
  snprintf(s[3], 32, "dtype=%s", dtype);
  const char *set[4] = {s[0], s[1], s[2], s[3]};
  int dims[3] = {d0, d1, d2};
  bool is_min = !strcmp(op, "argmin");
  run r;
  CHECK(build_run(&r, op, set, 4));
  if (r.args) {
    double *want = calloc((size_t)(d0 * d1 * d2), sizeof *want);
    int n = 0;
    for (int i = 0; i < (axis == 0 ? 1 : d0); i++)
      for (int j = 0; j < (axis == 1 ? 1 : d1); j++)
        for (int k = 0; k < (axis == 2 ? 1 : d2); k++) {
          int best = 0;
          double bv = 0;
          for (int t = 0; t < dims[axis]; t++) {
            int p[3] = {i, j, k};
            p[axis] = t;
            double v = at(&r, 0, (p[0] * d1 + p[1]) * d2 + p[2]);
            if (t == 0 || (is_min ? v < bv : v > bv))
              best = t, bv = v;
          }
          want[n++] = best;
        }
    check_out(&r, want, 0, op);
    free(want);
  }
  done(&r);
}

static void test_argmax(void) {
  run r;
  const char *ps[2] = {"shape=2,3", "axis=all"}; /* fits in int32 */
  CHECK(build_run(&r, "prod", ps, 2));
  if (r.args) {
    double p = 1;
    for (int i = 0; i < 6; i++)
      p *= at(&r, 0, i);
    check_out(&r, &p, 0, "prod");
  }
  done(&r);
}

/* A comm_reducer of a TE script keeping (index, value) of the maximum,
 * with a reduce axis that starts at 2 and a where= condition: both outputs
 * against a C loop over the same points. */
static void test_script_argmax(void) {
  const char *text =
      "from tvm import te, tir\n"
      "def fcombine(x, y):\n"
      "    keep = x[1] >= y[1]\n"
      "    return tir.Select(keep, x[0], y[0]), tir.Select(keep, x[1], y[1])\n"
      "argmax = te.comm_reducer(fcombine, lambda a, b: (-1, te.min_value(b)))\n"
      "A = te.placeholder((5, 17), name='A', dtype='float32')\n"
      "k = te.reduce_axis((2, 15), name='k')\n"
      "i_, v_ = te.compute((5,), lambda i: argmax((k, A[i, k]), axis=k,\n"
      "                    where=k % 3 != 1), name='am')\n"
      "te.create_prim_func([A, i_, v_])\n";
  run r;
  CHECK(script_run(&r, text));
  if (r.args) {
    for (int i = 0; i < 5; i++) {
      int best = -1;
      double bv = -INFINITY;
      for (int k = 2; k < 15; k++) {
        double v = at(&r, 0, i * 17 + k);
        if (k % 3 != 1 && !(bv >= v))
          best = k, bv = v;
      }
      CHECK(at(&r, 1, i) == best);
      CHECK(at(&r, 2, i) == bv);
    }
  }
  done(&r);
}

/* topi calls and te.compute stages in one script: sum over j of
 * relu((A * B)[i, j] - 1), against a C loop. */
static void test_script_topi(void) {
  const char *text =
      "from tvm import te, topi\n"
      "A = te.placeholder((5, 7), name='A')\n"
      "B = te.placeholder((7, 3), name='B')\n"
      "C = topi.matmul(A, B)\n"
      "D = te.compute((5, 3), lambda i, j: C[i, j] - 1.0, name='D')\n"
      "E = topi.sum(topi.nn.relu(D), axis=1)\n"
      "te.create_prim_func([A, B, E])\n";
  run r;
  CHECK(script_run(&r, text));
  if (r.args) {
    double want[5];
    for (int i = 0; i < 5; i++) {
      want[i] = 0;
      for (int j = 0; j < 3; j++) {
        double acc = 0;
        for (int k = 0; k < 7; k++)
          acc += at(&r, 0, i * 7 + k) * at(&r, 1, k * 3 + j);
        want[i] += acc - 1 > 0 ? acc - 1 : 0;
      }
    }
    check_out(&r, want, 1e-4, "topi script");
  }
  done(&r);
}

typedef struct shift_ctx {
  loom_te_tensor *a;
  loom_var *k;
} shift_ctx;

static loom_expr *shift_body(loom_te *te, void *user, loom_expr *const *idx) {
  shift_ctx *c = user;
  loom_expr *ai[2] = {idx[0], loom_te_ref(te, c->k)};
  return loom_te_sum(te, loom_te_at(te, c->a, ai, 2), &c->k, 1, NULL);
}

/* A reduce axis over [3, 3 + 7): the block iter var and the loop start at
 * 3, and the sum covers exactly those points. */
static void test_axis_min(void) {
  run r = {loom_arena_new(), NULL, NULL};
  loom_te *te = loom_te_new(r.a);
  int64_t shape[2] = {4, 11};
  shift_ctx c = {loom_te_placeholder_c(te, "A", shape, 2, LOOM_FLOAT32), NULL};
  c.k = loom_te_reduce_axis_range(te, loom_te_int(te, 3), loom_te_int(te, 7),
                                  "k");
  loom_expr *n = loom_te_int(te, 4);
  loom_te_tensor *args[2] = {c.a, loom_te_compute(te, "B", &n, 1, NULL,
                                                  shift_body, &c)};
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_te_create_prim_func(te, args, 2, &r.f, &d) == LOOM_OK);
  loom_rng rng;
  loom_rng_seed(&rng, 3);
  r.args = calloc(2, sizeof *r.args);
  if (r.f && loom_interp_alloc_args(r.f, NULL, r.args, &d) == LOOM_OK) {
    loom_interp_fill_random(r.args[0], &rng);
    CHECK(loom_interp_run(r.f, r.args, NULL, &d) == LOOM_OK);
    double want[4];
    for (int i = 0; i < 4; i++) {
      want[i] = 0;
      for (int k = 3; k < 10; k++)
        want[i] += at(&r, 0, i * 11 + k);
    }
    check_out(&r, want, 1e-5, "axis min");
  }
  loom_diag_free(&d);
  done(&r);
}

/* ---- the C API directly --------------------------------------------------- */

typedef struct tri_ctx {
  loom_te_tensor *a;
  loom_var *k;
} tri_ctx;

/* y[i] = sum of A[i, k] for k <= i: a reduction with a where= condition. */
static loom_expr *tri_body(loom_te *te, void *user, loom_expr *const *idx) {
  tri_ctx *c = user;
  loom_expr *k = loom_te_ref(te, c->k);
  loom_expr *ai[2] = {idx[0], k};
  return loom_te_sum(te, loom_te_at(te, c->a, ai, 2), &c->k, 1,
                     loom_te_bin(te, LOOM_EXPR_LE, k, idx[0]));
}

static void test_where(void) {
  loom_arena *a = loom_arena_new();
  loom_te *te = loom_te_new(a);
  tri_ctx c;
  int64_t shape[2] = {5, 5};
  c.a = loom_te_placeholder_c(te, "A", shape, 2, LOOM_FLOAT32);
  c.k = loom_te_reduce_axis(te, loom_te_int(te, 5), "k");
  loom_expr *n = loom_te_int(te, 5);
  loom_te_tensor *y = loom_te_compute(te, "y", &n, 1, NULL, tri_body, &c);
  loom_te_tensor *args[2] = {c.a, y};
  loom_func *f = NULL;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_te_create_prim_func(te, args, 2, &f, &d) == LOOM_OK);
  loom_interp_array *arr[2] = {NULL, NULL};
  if (f && loom_interp_alloc_args(f, NULL, arr, &d) == LOOM_OK) {
    loom_rng rng;
    loom_rng_seed(&rng, 1);
    loom_interp_fill_random(arr[0], &rng);
    CHECK(loom_interp_run(f, arr, NULL, &d) == LOOM_OK);
    for (int i = 0; i < 5; i++) {
      double want = 0;
      for (int k = 0; k <= i; k++)
        want += loom_interp_array_get(arr[0], i * 5 + k);
      CHECK(fabs(loom_interp_array_get(arr[1], i) - want) < 1e-5);
    }
    loom_interp_free_args(f, arr);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
}

typedef struct dyn_ctx {
  loom_te_tensor *a;
} dyn_ctx;

static loom_expr *double_body(loom_te *te, void *user, loom_expr *const *idx) {
  dyn_ctx *c = user;
  loom_expr *x = loom_te_at(te, c->a, idx, 1);
  return loom_te_add(te, x, x);
}

/* A symbolic size: the buffers' shapes carry n, bound by the arguments. */
static void test_symbolic(void) {
  loom_arena *a = loom_arena_new();
  loom_te *te = loom_te_new(a);
  loom_var *nv = loom_te_var(te, "n");
  loom_expr *n = loom_te_ref(te, nv);
  dyn_ctx c = {loom_te_placeholder(te, "A", &n, 1, LOOM_FLOAT32)};
  loom_te_tensor *y = loom_te_compute(te, "B", &n, 1, NULL, double_body, &c);
  loom_te_tensor *args[2] = {c.a, y};
  loom_func *f = NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_status s = loom_te_create_prim_func(te, args, 2, &f, &d);
  if (s != LOOM_OK)
    printf("  symbolic: %s\n", d.msg);
  CHECK(s == LOOM_OK);
  CHECK(f && f->params[0].buffer->shape[0]->kind == LOOM_EXPR_VAR);
  loom_diag_free(&d);
  loom_arena_free(a);
}

static loom_expr *bad_body(loom_te *te, void *user, loom_expr *const *idx) {
  dyn_ctx *c = user;
  return loom_te_at(te, c->a, idx, 2); /* A has one dimension */
}

static void test_errors(void) {
  loom_arena *a = loom_arena_new();
  loom_te *te = loom_te_new(a);
  int64_t four = 4;
  dyn_ctx c = {loom_te_placeholder_c(te, "A", &four, 1, LOOM_FLOAT32)};
  loom_expr *n = loom_te_int(te, 4);
  loom_te_tensor *y = loom_te_compute(te, "B", &n, 1, NULL, bad_body, &c);
  CHECK(y == NULL);
  loom_te_tensor *args[2] = {c.a, y};
  loom_func *f;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_te_create_prim_func(te, args, 2, &f, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "indexed with 2");
  loom_diag_free(&d);
  loom_arena_free(a);

  /* A placeholder read but not passed. */
  a = loom_arena_new();
  te = loom_te_new(a);
  c.a = loom_te_placeholder_c(te, "A", &four, 1, LOOM_FLOAT32);
  n = loom_te_int(te, 4);
  y = loom_te_compute(te, "B", &n, 1, NULL, double_body, &c);
  loom_diag_init(&d);
  CHECK(loom_te_create_prim_func(te, &y, 1, &f, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "placeholder 'A'");
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* Allocation failure: failing the 1st, 2nd, ... allocation of the arena
 * gives a clean out-of-memory status until the build succeeds. */
static void test_faultsim(const char *op, const char *script) {
  for (long n = 1; n < 100000; n++) {
    loom_faultsim fs = {n, 0};
    loom_arena *a = loom_arena_new();
    loom_arena_set_faultsim(a, &fs);
    loom_diag d;
    loom_diag_init(&d);
    loom_func *f = NULL;
    loom_status s =
        op ? loom_te_op_build(loom_te_op_find(op), NULL, 0, a, &f, &d)
           : loom_te_read_script(script, strlen(script), "fs.py", a, &f, &d);
    loom_diag_free(&d);
    loom_arena_free(a);
    if (s == LOOM_OK) {
      CHECK(f != NULL);
      return;
    }
    if (s != LOOM_NOMEM) {
      printf("  faultsim %s: status %d at allocation %ld\n",
             op ? op : "script", (int)s, n);
      CHECK(s == LOOM_NOMEM);
      return;
    }
  }
  CHECK(!"faultsim never succeeded");
}

int main(void) {
  test_matmul("NN", 7, 5, 9, "float32", 0, "none");
  test_matmul("NT", 4, 6, 3, "float32", 1, "relu");
  test_matmul("TN", 5, 3, 8, "float16", 0, "none");
  test_matmul("TT", 3, 4, 5, "float32", 1, "none");
  test_matmul("NN", 3, 5, 7, "int8", 0, "relu");
  test_conv2d(4, 9, 6, 3, 2, 1, 2, 2);
  test_conv2d(3, 7, 5, 3, 1, 1, 1, 1);
  test_conv2d(4, 8, 4, 2, 2, 0, 1, 4);
  test_conv2d_layouts("conv2d", "NHWC", 4, 9, 6, 3, 2, 1, 2, 2);
  test_conv2d_layouts("conv2d", "NHWC", 3, 6, 5, 2, 1, 0, 1, 1);
  test_conv2d_layouts("depthwise_conv2d", "NHWC", 5, 7, 5, 3, 2, 1, 1, 1);
  test_conv2d_layouts("depthwise_conv2d", "NCHW", 3, 8, 3, 3, 1, 2, 2, 1);
  test_conv1d(3, 11, 4, 3, 2, 1, 2);
  {
    static const conv_case cases[] = {
        {3, "NCDHW", 4, 6, 2, {5, 7, 6}, {3, 2, 3}, {1, 2, 2}, {1, 1, 2},
         {1, 0, 2}, {1, 1, 0}},
        {3, "NDHWC", 3, 5, 1, {4, 6, 9}, {2, 3, 3}, {2, 1, 3}, {2, 1, 1},
         {0, 1, 1}, {1, 1, 2}},
        {2, "NCHW", 4, 4, 2, {1, 7, 10}, {1, 3, 2}, {1, 2, 1}, {1, 1, 3},
         {0, 1, 0}, {0, 2, 1}},
        {2, "NHWC", 3, 5, 1, {1, 9, 6}, {1, 2, 3}, {1, 3, 1}, {1, 2, 1},
         {0, 0, 1}, {0, 1, 1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
      test_conv_dims(&cases[i]);
  }
  test_conv2d_transpose(3, 5, 2, 4, 2, 1);
  test_conv2d_transpose(2, 4, 3, 3, 1, 0);
  test_softmax("softmax", 3, 17);
  test_softmax("log_softmax", 5, 9);
  test_norm("layer_norm", 3, 13);
  test_norm("rms_norm", 4, 7);
  test_pool("max_pool2d", 9, 3, 2, 1);
  test_pool("avg_pool2d", 8, 2, 2, 0);
  test_dequant("dequant_gemv_i4", 1, 5, 64, 32);
  test_dequant("dequant_matmul_i8", 3, 4, 32, 8);
  test_elementwise();
  test_argmax();
  test_argreduce("argmax", 4, 9, 3, 1, 0, "int8");
  test_argreduce("argmin", 5, 3, 7, 0, 1, "int8");
  test_argreduce("argmin", 3, 5, 11, 2, 0, "float32");
  test_argreduce("argmax", 7, 6, 5, 0, 0, "float16");
  test_where();
  test_script_argmax();
  test_script_topi();
  test_axis_min();
  test_symbolic();
  test_errors();
  test_faultsim("matmul", NULL);
  test_faultsim("conv2d_transpose", NULL);
  test_faultsim("softmax", NULL);
  test_faultsim("layer_norm", NULL);
  test_faultsim("dequant_gemv_i4", NULL);
  test_faultsim("argmax", NULL);
  test_faultsim("argmin", NULL);
  test_faultsim(NULL,
                "from tvm import te, topi\n"
                "A = te.placeholder((4, 6), name='A')\n"
                "B = te.compute((4, 6), lambda i, j: A[i, j] * 2.0, name='B')\n"
                "C = topi.argmax(topi.nn.softmax(B), axis=1)\n"
                "te.create_prim_func([A, C])\n");
  test_faultsim(NULL,
                "from tvm import te\n"
                "n = te.var('n')\n"
                "A = te.placeholder((n, 8), name='A')\n"
                "k = te.reduce_axis((0, 8), name='k')\n"
                "B = te.compute((n,), lambda i: te.sum(A[i, k] * 2.0, axis=k,"
                " where=k < i), name='B', attrs={'axis': 1})\n"
                "te.create_prim_func([A, B])\n");
  return test_summary("te/ops");
}
