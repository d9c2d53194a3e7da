/* The dispatch pass against the library called directly: a matmul whose
 * nest the pass gives to BLAS, built by the C backend and called as Loom
 * calls any kernel, side by side with cblas_sgemm on the same arrays, in
 * one run (the two take turns, medians of 7 batches of about 50 ms each).
 * The ratio is the pass's overhead: the call, the kernel's argument
 * unpacking, the library found at first use.
 *
 * OpenBLAS runs at its best (bench/openblas_env.h), for both sides.
 *
 *   bench_dispatch [SIZE...]   (square sizes; default 64 256 1024 2048) */
#include "loom/dispatch.h"
#include "loom/script.h"
#include "loom/tune.h"
#include "openblas_env.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 7

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct side {
  loom_kernel kernel; /* NULL: cblas_sgemm directly */
  float *a, *b, *c;
  int n;
  bool is_nt;
} side;

static void call(const side *s) {
  if (s->kernel) {
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
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  const loom_func *g = NULL;
  int taken = 0;
  loom_kernel k = NULL;
  if (loom_script_read(text, strlen(text), "mm.py", a, &m, &d) == LOOM_OK &&
      loom_dispatch_func(a, loom_tune_normalized(a, m->funcs[0]), &g, &taken, NULL, 0) ==
          LOOM_OK &&
      taken == 1) {
    loom_builder_options bo = {.per_file = 1, .jobs = 1};
    if (loom_tune_build(&g, 1, &bo, b) == LOOM_OK && b->items[0].kernel)
      k = b->items[0].kernel;
    else
      fprintf(stderr, "build: %s\n", b->n ? b->items[0].error : "out of memory");
  } else {
    fprintf(stderr, "dispatch: %s\n", d.msg ? d.msg : "the pass did not take the matmul");
  }
  loom_diag_free(&d);
  loom_arena_free(a);
  return k;
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
      side loom = {k, x, y, z, n, nt}, direct = {NULL, x, y, z, n, nt};
      double lm, dm;
      time_pair(&loom, &direct, &lm, &dm);
      printf("| %d³ | %s | %.4f | %.4f | %.3f |\n", n, nt ? "NT" : "NN", lm, dm, dm / lm);
      fflush(stdout);
      free(x);
      free(y);
      free(z);
      loom_tune_build_free(&b);
    }
  return 0;
}
