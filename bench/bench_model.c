/* The cost model's speed on scheduled variants of a 256^3 matmul (random
 * loop orders, tile sizes, vectorized and unrolled inner loops): feature
 * extraction per second (lowering included), the XGBoost model's training
 * time on 1000 records, and its predictions per second. The latencies are
 * made up (training time hardly depends on them). Run with `make bench`,
 * then build/bench/bench_model [candidates]. */
#include "loom/model.h"
#include "loom/script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void die(const char *what, loom_diag *d) {
  fprintf(stderr, "bench_model: %s: %s\n", what, d && d->msg ? d->msg : "failed");
  exit(1);
}

static void variant(loom_buf *b, loom_rng *r) {
  int t[3];
  const char *name[6] = {"i0", "j0", "k0", "i1", "j1", "k1"};
  for (int i = 0; i < 3; i++)
    t[i] = 1 << loom_rng_below(r, 7);
  int ext[6] = {256 / t[0], 256 / t[1], 256 / t[2], t[0], t[1], t[2]};
  int order[6] = {0, 1, 2, 3, 4, 5};
  for (int i = 5; i > 0; i--) {
    int j = (int)loom_rng_below(r, (uint64_t)i + 1), x = order[i];
    order[i] = order[j];
    order[j] = x;
  }
  loom_buf_puts(b,
      "@T.prim_func\n"
      "def main(A: T.Buffer((256, 256), \"float32\"), B: T.Buffer((256, 256), \"float32\"),"
      " C: T.Buffer((256, 256), \"float32\")):\n");
  int u = (int)loom_rng_below(r, 4);
  for (int i = 0; i < 6; i++) {
    int l = order[i];
    const char *kind = "range";
    if (i == 5 && l != 2 && l != 5 && u < 2)
      kind = "T.vectorized";
    else if (i == 5 && u == 2)
      kind = "T.unroll";
    else if (i == 0 && l != 2 && l != 5 && u == 3)
      kind = "T.parallel";
    loom_buf_printf(b, "%*sfor %s in %s(%d):\n", 4 + 4 * i, "", name[l], kind,
                    ext[l]);
  }
  int in = 28;
  loom_buf_printf(b,
      "%*swith T.block(\"matmul\"):\n"
      "%*svi = T.axis.spatial(256, i0 * %d + i1)\n"
      "%*svj = T.axis.spatial(256, j0 * %d + j1)\n"
      "%*svk = T.axis.reduce(256, k0 * %d + k1)\n"
      "%*swith T.init():\n"
      "%*sC[vi, vj] = T.float32(0.0)\n"
      "%*sC[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
      in, "", in + 4, "", t[0], in + 4, "", t[1], in + 4, "", t[2], in + 4, "",
      in + 8, "", in + 4, "");
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  if (n < 10)
    n = 10;
  loom_arena *a = loom_arena_new();
  loom_diag d;
  loom_diag_init(&d);
  loom_rng r;
  loom_rng_seed(&r, 1);
  const loom_func **f = calloc((size_t)n, sizeof *f);
  loom_model_input *in = calloc((size_t)n, sizeof *in);
  float **rows = calloc((size_t)n, sizeof *rows);
  double *lat = calloc((size_t)n, sizeof *lat), *score = calloc((size_t)n, sizeof *score);
  for (int i = 0; i < n; i++) {
    loom_buf b;
    loom_buf_init(&b);
    variant(&b, &r);
    loom_module *m;
    if (loom_script_read(b.data, b.len, "bench.py", a, &m, &d) != LOOM_OK)
      die("read", &d);
    f[i] = m->funcs[0];
    loom_buf_free(&b);
    lat[i] = 1 + loom_rng_double(&r) * 100;
  }

  double t0 = now_ms();
  long total_rows = 0;
  for (int i = 0; i < n; i++) {
    if (loom_model_features(f[i], 2, &rows[i], &in[i].n_rows, &d) != LOOM_OK)
      die("features", &d);
    in[i].rows = rows[i];
    total_rows += in[i].n_rows;
  }
  double feat_ms = now_ms() - t0;
  printf("features: %d candidates (%ld rows of %d) in %.1f ms: %.0f candidates/s\n",
         n, total_rows, LOOM_MODEL_FEATURE_DIM, feat_ms, n / (feat_ms / 1e3));

  loom_model_options o = {.seed = 1};
  loom_model *xgb, *rnd;
  if (loom_model_xgb_new(&o, &xgb, &d) != LOOM_OK ||
      loom_model_random_new(1, &rnd, &d) != LOOM_OK)
    die("model", &d);
  t0 = now_ms();
  if (loom_model_update(xgb, 1, in, lat, n, &d) != LOOM_OK)
    die("update", &d);
  double train_ms = now_ms() - t0;
  printf("xgboost training: %d records, %d rounds, 1 thread: %.1f ms\n", n,
         60, train_ms);

  int reps = 5;
  t0 = now_ms();
  for (int k = 0; k < reps; k++)
    if (loom_model_predict(xgb, in, n, score, &d) != LOOM_OK)
      die("predict", &d);
  double pred_ms = (now_ms() - t0) / reps;
  printf("xgboost prediction: %d candidates in %.2f ms: %.0f candidates/s\n", n,
         pred_ms, n / (pred_ms / 1e3));
  t0 = now_ms();
  for (int k = 0; k < reps; k++)
    if (loom_model_predict(rnd, in, n, score, &d) != LOOM_OK)
      die("predict", &d);
  pred_ms = (now_ms() - t0) / reps;
  printf("random prediction: %d candidates in %.3f ms: %.0f candidates/s\n", n,
         pred_ms, n / (pred_ms / 1e3));

  loom_buf saved;
  loom_buf_init(&saved);
  if (loom_model_save(xgb, &saved, &d) != LOOM_OK)
    die("save", &d);
  printf("saved state: %zu bytes\n", saved.len);
  loom_buf_free(&saved);

  loom_model_free(xgb);
  loom_model_free(rnd);
  for (int i = 0; i < n; i++)
    free(rows[i]);
  free(rows);
  free(in);
  free(lat);
  free(score);
  free(f);
  loom_diag_free(&d);
  loom_arena_free(a);
  return 0;
}
