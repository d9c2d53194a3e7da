/* The dispatch pass against the library called directly: a matmul whose
 * nest the pass gives to BLAS, built by the C backend and called as Loom
 * calls any kernel, side by side with cblas_sgemm on the same arrays, in
 * one run (the two take turns, medians of 7 batches of about 50 ms each).
 * The ratio is the pass's overhead: the call, the kernel's argument
 * unpacking, the library found at first use.
 *
 * OpenBLAS runs at its best (bench/openblas_env.h), for both sides.
 *
 * Then, where oneDNN was found at build time (LOOM_BENCH_DNNL), the 3x3
 * NHWC convolutions of a ResNet's 56x56x64 and 28x28x128 layers, batch 1,
 * padded by one: the pad nest and the conv dispatched and built, against
 * the same oneDNN primitive (weights in its preferred layout, reordered on
 * every call, as the generated code does) called directly; and, for
 * reference, with the weights reordered once, as a caller who knows they
 * are constant would.
 *
 *   bench_dispatch [SIZE...]   (square sizes; default 64 256 1024 2048) */
#include "loom/dispatch.h"
#include "loom/script.h"
#include "loom/tune.h"
#include "openblas_env.h"

#include <cblas.h>
#ifdef LOOM_BENCH_DNNL
#include <dnnl.h>
#endif
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 7

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct direct_conv;

typedef struct side {
  loom_kernel kernel; /* NULL: cblas_sgemm (or conv) directly */
  float *a, *b, *c;
  int n;
  bool is_nt;
  const struct direct_conv *conv; /* a convolution: oneDNN directly, or the kernel's shapes */
} side;

static void call_conv(const side *s);

static void call(const side *s) {
  if (s->conv) {
    call_conv(s);
  } else if (s->kernel) {
    void *args[3] = {s->a, s->b, s->c};
    int64_t shape[2] = {s->n, s->n};
    const int64_t *shapes[3] = {shape, shape, shape};
    ((loom_c_kernel)s->kernel)(args, shapes);
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, s->is_nt ? CblasTrans : CblasNoTrans, s->n, s->n,
                s->n, 1, s->a, s->n, s->b, s->n, 0, s->c, s->n);
  }
}

static double batch_ms(const side *s, int number) {
  double t0 = now_s();
  for (int i = 0; i < number; i++)
    call(s);
  return (now_s() - t0) * 1e3 / number;
}

static int calls_for_50ms(const side *s) {
  call(s);
  double once = batch_ms(s, 1);
  return once >= 50 ? 1 : (int)(50 / (once > 1e-4 ? once : 1e-4)) + 1;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static void time_pair(const side *x, const side *y, double *x_ms, double *y_ms) {
  int nx = calls_for_50ms(x), ny = calls_for_50ms(y);
  double rx[ROUNDS], ry[ROUNDS];
  for (int k = 0; k < ROUNDS; k++) {
    batch_ms(x, nx);
    rx[k] = batch_ms(x, nx);
    batch_ms(y, ny);
    ry[k] = batch_ms(y, ny);
  }
  qsort(rx, ROUNDS, sizeof *rx, cmp_double);
  qsort(ry, ROUNDS, sizeof *ry, cmp_double);
  *x_ms = rx[ROUNDS / 2];
  *y_ms = ry[ROUNDS / 2];
}

static loom_kernel build_text(const char *text, loom_build_set *b);

/* The matmul of n, dispatched and built; NULL (with a message) on failure. */
static loom_kernel build(int n, bool is_nt, loom_build_set *b) {
  char text[1024];
  snprintf(text, sizeof text,
           "from tvm.script import tir as T\n@T.prim_func\n"
           "def mm(A: T.Buffer((%d, %d), \"float32\"), B: T.Buffer((%d, %d), \"float32\"), "
           "C: T.Buffer((%d, %d), \"float32\")):\n"
           "    for i, j, k in T.grid(%d, %d, %d):\n"
           "        with T.block(\"C\"):\n"
           "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
           "            with T.init():\n"
           "                C[vi, vj] = T.float32(0)\n"
           "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[%s]\n",
           n, n, n, n, n, n, n, n, n, is_nt ? "vj, vk" : "vk, vj");
  return build_text(text, b);
}

/* The function of text, dispatched (one nest taken) and built; NULL (with
 * a message) on failure. */
static loom_kernel build_text(const char *text, loom_build_set *b) {
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  const loom_func *g = NULL;
  int taken = 0;
  loom_kernel k = NULL;
  if (loom_script_read(text, strlen(text), "bench.py", a, &m, &d) == LOOM_OK &&
      loom_dispatch_func(a, loom_tune_normalized(a, m->funcs[0]), &g, &taken, NULL, 0) ==
          LOOM_OK &&
      taken == 1) {
    loom_builder_options bo = {.per_file = 1, .jobs = 1};
    if (loom_tune_build(&g, 1, &bo, b) == LOOM_OK && b->items[0].kernel)
      k = b->items[0].kernel;
    else
      fprintf(stderr, "build: %s\n", b->n ? b->items[0].error : "out of memory");
  } else {
    fprintf(stderr, "dispatch: %s\n", d.msg ? d.msg : "the pass did not take the nest");
  }
  loom_diag_free(&d);
  loom_arena_free(a);
  return k;
}


/* ---- convolutions ---------------------------------------------------------------- */

#ifdef LOOM_BENCH_DNNL
#define DNNL_OK(x) ((x) == dnnl_success)

/* oneDNN's convolution made once, as the generated helper makes it. */
typedef struct direct_conv {
  int h, c; /* input and output h = w and channels */
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_t conv, reorder;
  dnnl_memory_t src, wei_user, wei, dst;
  bool is_reordered_once; /* the weights reordered at setup only */
} direct_conv;

static bool conv_setup(direct_conv *d, float *x, float *w, float *y) {
  dnnl_dims_t data = {1, d->c, d->h, d->h}, wd = {d->c, d->c, 3, 3};
  dnnl_dims_t strides = {1, 1}, dil = {0, 0}, pad = {1, 1};
  dnnl_memory_desc_t src_md, wei_md, any_md, dst_md;
  dnnl_convolution_desc_t cd;
  dnnl_primitive_desc_t pd, rpd;
  if (!DNNL_OK(dnnl_engine_create(&d->engine, dnnl_cpu, 0)) ||
      !DNNL_OK(dnnl_stream_create(&d->stream, d->engine, dnnl_stream_default_flags)) ||
      !DNNL_OK(dnnl_memory_desc_init_by_tag(&src_md, 4, data, dnnl_f32, dnnl_nhwc)) ||
      !DNNL_OK(dnnl_memory_desc_init_by_tag(&dst_md, 4, data, dnnl_f32, dnnl_nhwc)) ||
      !DNNL_OK(dnnl_memory_desc_init_by_tag(&wei_md, 4, wd, dnnl_f32, dnnl_hwio)) ||
      !DNNL_OK(dnnl_memory_desc_init_by_tag(&any_md, 4, wd, dnnl_f32, dnnl_format_tag_any)) ||
      !DNNL_OK(dnnl_dilated_convolution_forward_desc_init(
          &cd, dnnl_forward_inference, dnnl_convolution_direct, &src_md, &any_md, NULL, &dst_md,
          strides, dil, pad, pad)) ||
      !DNNL_OK(dnnl_primitive_desc_create(&pd, &cd, NULL, d->engine, NULL)) ||
      !DNNL_OK(dnnl_primitive_create(&d->conv, pd)))
    return false;
  const dnnl_memory_desc_t *best = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  bool ok = DNNL_OK(dnnl_memory_create(&d->src, &src_md, d->engine, x)) &&
            DNNL_OK(dnnl_memory_create(&d->dst, &dst_md, d->engine, y)) &&
            DNNL_OK(dnnl_memory_create(&d->wei_user, &wei_md, d->engine, w)) &&
            DNNL_OK(dnnl_memory_create(&d->wei, best, d->engine, DNNL_MEMORY_ALLOCATE)) &&
            DNNL_OK(dnnl_reorder_primitive_desc_create(&rpd, &wei_md, d->engine, best,
                                                       d->engine, NULL)) &&
            DNNL_OK(dnnl_primitive_create(&d->reorder, rpd));
  dnnl_primitive_desc_destroy(pd);
  if (ok)
    dnnl_primitive_desc_destroy(rpd);
  return ok;
}

static void conv_teardown(direct_conv *d) {
  dnnl_primitive_destroy(d->conv);
  dnnl_primitive_destroy(d->reorder);
  dnnl_memory_destroy(d->src);
  dnnl_memory_destroy(d->dst);
  dnnl_memory_destroy(d->wei_user);
  dnnl_memory_destroy(d->wei);
  dnnl_stream_destroy(d->stream);
  dnnl_engine_destroy(d->engine);
}

static void call_conv(const side *s) {
  const direct_conv *d = s->conv;
  if (s->kernel) {
    void *args[3] = {s->a, s->b, s->c};
    int64_t xs[4] = {1, d->h, d->h, d->c}, ws[4] = {3, 3, d->c, d->c};
    const int64_t *shapes[3] = {xs, ws, xs};
    ((loom_c_kernel)s->kernel)(args, shapes);
    return;
  }
  dnnl_exec_arg_t re[2] = {{DNNL_ARG_FROM, d->wei_user}, {DNNL_ARG_TO, d->wei}};
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, d->src}, {DNNL_ARG_WEIGHTS, d->wei},
                             {DNNL_ARG_DST, d->dst}};
  if (!d->is_reordered_once)
    dnnl_primitive_execute(d->reorder, d->stream, 2, re);
  dnnl_primitive_execute(d->conv, d->stream, 3, args);
  dnnl_stream_wait(d->stream);
}
#else
typedef struct direct_conv {
  int h, c;
} direct_conv;
static void call_conv(const side *s) { (void)s; }
#endif

/* The padded NHWC conv of h x h x c, 3x3, c output channels, dispatched
 * and built; NULL (with a message) on failure. */
static loom_kernel build_conv(int h, int c, loom_build_set *b) {
  char text[2048];
  snprintf(text, sizeof text,
           "from tvm.script import tir as T\n@T.prim_func\n"
           "def conv(X: T.Buffer((1, %d, %d, %d), \"float32\"), "
           "W: T.Buffer((3, 3, %d, %d), \"float32\"), Y: T.Buffer((1, %d, %d, %d), \"float32\")):\n"
           "    pad = T.alloc_buffer((1, %d, %d, %d))\n"
           "    for n, h, w, c in T.grid(1, %d, %d, %d):\n"
           "        with T.block(\"pad\"):\n"
           "            vn, vh, vw, vc = T.axis.remap(\"SSSS\", [n, h, w, c])\n"
           "            pad[vn, vh, vw, vc] = T.if_then_else(1 <= vh and vh < %d and 1 <= vw "
           "and vw < %d, X[vn, vh - 1, vw - 1, vc], T.float32(0))\n"
           "    for n, h, w, co, rh, rw, ci in T.grid(1, %d, %d, %d, 3, 3, %d):\n"
           "        with T.block(\"conv\"):\n"
           "            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap(\"SSSSRRR\", "
           "[n, h, w, co, rh, rw, ci])\n"
           "            with T.init():\n"
           "                Y[vn, vh, vw, vco] = T.float32(0)\n"
           "            Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + pad[vn, vh + vrh, vw + vrw, vci] "
           "* W[vrh, vrw, vci, vco]\n",
           h, h, c, c, c, h, h, c, h + 2, h + 2, c, h + 2, h + 2, c, h + 1, h + 1, h, h, c, c);
  return build_text(text, b);
}

/* The conv rows: Loom's dispatched conv against oneDNN directly, the
 * result checked against the direct call's. */
static int conv_rows(void) {
#ifdef LOOM_BENCH_DNNL
  static const int shapes[2][2] = {{56, 64}, {28, 128}};
  printf("\n| conv2d NHWC 3x3 pad 1 | Loom dispatched ms | oneDNN direct ms | Loom speed / direct "
         "| direct, weights reordered once ms |\n|---|---|---|---|---|\n");
  for (int i = 0; i < 2; i++) {
    int h = shapes[i][0], c = shapes[i][1];
    size_t n_data = (size_t)h * h * c, n_wei = (size_t)9 * c * c;
    float *x = malloc(n_data * sizeof *x), *w = malloc(n_wei * sizeof *w);
    float *y = malloc(n_data * sizeof *y), *z = malloc(n_data * sizeof *z);
    loom_build_set b = {0};
    loom_kernel k = x && w && y && z ? build_conv(h, c, &b) : NULL;
    direct_conv d = {.h = h, .c = c};
    if (!k || !conv_setup(&d, x, w, z)) {
      fprintf(stderr, "conv %dx%dx%d: %s\n", h, h, c, k ? "oneDNN refused it" : "not built");
      free(x), free(w), free(y), free(z);
      loom_tune_build_free(&b);
      return 1;
    }
    for (size_t j = 0; j < n_data; j++)
      x[j] = (float)((j * 7) % 13) / 13 - 0.5f;
    for (size_t j = 0; j < n_wei; j++)
      w[j] = (float)((j * 5) % 11) / 11 - 0.5f;
    side loom = {.kernel = k, .a = x, .b = w, .c = y, .conv = &d};
    side direct = {.a = x, .b = w, .c = z, .conv = &d};
    call(&loom);
    call(&direct);
    double worst = 0;
    for (size_t j = 0; j < n_data; j++) {
      double e = fabs((double)y[j] - z[j]) / (fabs((double)z[j]) + 1);
      worst = e > worst ? e : worst;
    }
    double lm, dm, lm2, om;
    time_pair(&loom, &direct, &lm, &dm);
    d.is_reordered_once = true;
    time_pair(&loom, &direct, &lm2, &om);
    printf("| %dx%dx%d → %d | %.4f | %.4f | %.3f | %.4f |%s\n", h, h, c, c, lm, dm, dm / lm, om,
           worst < 1e-4 ? "" : " (results differ!)");
    fflush(stdout);
    conv_teardown(&d);
    free(x), free(w), free(y), free(z);
    loom_tune_build_free(&b);
  }
#else
  printf("\n(conv2d rows: oneDNN was not found when this was built)\n");
#endif
  return 0;
}

int main(int argc, char **argv) {
  const char *detected;
  if (bench_openblas_setup(argv, &detected))
    return 1;
  int sizes[16] = {64, 256, 1024, 2048}, n_sizes = 4;
  if (argc > 1) {
    n_sizes = 0;
    for (int i = 1; i < argc && n_sizes < 16; i++)
      sizes[n_sizes++] = atoi(argv[i]);
  }
  if (detected)
    printf("OpenBLAS: %s kernels (its own detection took this CPU for a %s)\n\n",
           openblas_get_corename(), detected);
  else
    printf("OpenBLAS: %s kernels, as it detects them\n\n", openblas_get_corename());
  printf("| matmul | layout | Loom dispatched ms | cblas_sgemm ms | Loom speed / direct |\n"
         "|---|---|---|---|---|\n");
  for (int s = 0; s < n_sizes; s++)
    for (int nt = 0; nt < 2; nt++) {
      int n = sizes[s];
      loom_build_set b = {0};
      loom_kernel k = build(n, nt, &b);
      size_t bytes = (size_t)n * n * sizeof(float);
      float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
      if (!k || !x || !y || !z) {
        free(x);
        free(y);
        free(z);
        loom_tune_build_free(&b);
        return 1;
      }
      for (size_t i = 0; i < (size_t)n * n; i++) {
        x[i] = (float)((i * 7) % 13) / 13;
        y[i] = (float)((i * 5) % 11) / 11;
      }
      side loom = {k, x, y, z, n, nt, NULL}, direct = {NULL, x, y, z, n, nt, NULL};
      double lm, dm;
      time_pair(&loom, &direct, &lm, &dm);
      printf("| %d³ | %s | %.4f | %.4f | %.3f |\n", n, nt ? "NT" : "NN", lm, dm, dm / lm);
      fflush(stdout);
      free(x);
      free(y);
      free(z);
      loom_tune_build_free(&b);
    }
  return conv_rows();
}
