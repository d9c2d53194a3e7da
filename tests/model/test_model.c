/* The cost models on real measurements: scheduled variants of a 128^3
 * matmul and of a 512x512 transpose are built and measured, the XGBoost
 * model is trained on two thirds of them and must rank the held-out third
 * clearly better than the random model does. Also: training and prediction
 * are deterministic, save then load predicts the same, bad saved states and
 * bad inputs are refused with a diagnostic. */
#include "loom/model.h"
#include "loom/script.h"
#include "loom/tune.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

#define N_MATMUL 96
#define N_TRANSPOSE 60

static const loom_func *read_func(loom_arena *a, const char *text) {
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_script_read(text, strlen(text), "t.py", a, &m, &d);
  if (st != LOOM_OK)
    fprintf(stderr, "read: %s\n%s\n", d.msg, text);
  loom_diag_free(&d);
  return st == LOOM_OK ? m->funcs[0] : NULL;
}

typedef struct loop_spec {
  char name[4];
  int extent;
  bool is_reduce;
} loop_spec;

static void shuffle(loom_rng *r, loop_spec *l, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)loom_rng_below(r, (uint64_t)i + 1);
    loop_spec t = l[i];
    l[i] = l[j];
    l[j] = t;
  }
}

static int pick_factor(loom_rng *r, int max_log2) {
  return 1 << loom_rng_below(r, (uint64_t)max_log2 + 1);
}

/* Writes the loops of a nest in the given order, the innermost spatial one
 * maybe vectorized, the innermost maybe unrolled; returns the indent. */
static int write_loops(loom_buf *b, loom_rng *r, const loop_spec *l, int n) {
  int u = (int)loom_rng_below(r, 4);
  for (int i = 0; i < n; i++) {
    const char *kind = "range";
    if (i == n - 1 && !l[i].is_reduce && u < 2)
      kind = "T.vectorized";
    else if (i == n - 1 && u == 2)
      kind = "T.unroll";
    loom_buf_printf(b, "%*sfor %s in %s(%d):\n", 4 + 4 * i, "", l[i].name,
                    kind, l[i].extent);
  }
  return 4 + 4 * n;
}

static void matmul_variant(loom_buf *b, loom_rng *r) {
  int ti = pick_factor(r, 5), tj = pick_factor(r, 6), tk = pick_factor(r, 5);
  loop_spec l[6] = {
      {"i0", 128 / ti, false}, {"j0", 128 / tj, false}, {"k0", 128 / tk, true},
      {"i1", ti, false},       {"j1", tj, false},       {"k1", tk, true},
  };
  shuffle(r, l, 6);
  loom_buf_puts(b,
      "@T.prim_func\n"
      "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\"),"
      " C: T.Buffer((128, 128), \"float32\")):\n");
  int in = write_loops(b, r, l, 6);
  loom_buf_printf(b,
      "%*swith T.block(\"matmul\"):\n"
      "%*svi = T.axis.spatial(128, i0 * %d + i1)\n"
      "%*svj = T.axis.spatial(128, j0 * %d + j1)\n"
      "%*svk = T.axis.reduce(128, k0 * %d + k1)\n"
      "%*swith T.init():\n"
      "%*sC[vi, vj] = T.float32(0.0)\n"
      "%*sC[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
      in, "", in + 4, "", ti, in + 4, "", tj, in + 4, "", tk, in + 4, "",
      in + 8, "", in + 4, "");
}

static void transpose_variant(loom_buf *b, loom_rng *r) {
  int ti = pick_factor(r, 6), tj = pick_factor(r, 6);
  loop_spec l[4] = {
      {"i0", 512 / ti, false}, {"j0", 512 / tj, false},
      {"i1", ti, false},       {"j1", tj, false},
  };
  shuffle(r, l, 4);
  loom_buf_puts(b,
      "@T.prim_func\n"
      "def main(A: T.Buffer((512, 512), \"float32\"), B: T.Buffer((512, 512), \"float32\")):\n");
  int in = write_loops(b, r, l, 4);
  loom_buf_printf(b,
      "%*swith T.block(\"B\"):\n"
      "%*svi = T.axis.spatial(512, i0 * %d + i1)\n"
      "%*svj = T.axis.spatial(512, j0 * %d + j1)\n"
      "%*sB[vj, vi] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)\n",
      in, "", in + 4, "", ti, in + 4, "", tj, in + 4, "");
}

/* ---- measuring ------------------------------------------------------------ */

typedef struct dataset {
  loom_model_input *in;
  float **rows;
  double *latency;
  int n;
} dataset;

static void dataset_free(dataset *s) {
  for (int i = 0; i < s->n; i++)
    free(s->rows[i]);
  free(s->rows);
  free(s->in);
  free(s->latency);
}

static bool measure(loom_arena *a, void (*variant)(loom_buf *, loom_rng *),
                    int n, uint64_t seed, dataset *out) {
  loom_rng r;
  loom_rng_seed(&r, seed);
  const loom_func **f = calloc((size_t)n, sizeof *f);
  out->n = n;
  out->in = calloc((size_t)n, sizeof *out->in);
  out->rows = calloc((size_t)n, sizeof *out->rows);
  out->latency = calloc((size_t)n, sizeof *out->latency);
  bool ok = true;
  loom_diag d;
  loom_diag_init(&d);
  for (int i = 0; i < n && ok; i++) {
    loom_buf b;
    loom_buf_init(&b);
    variant(&b, &r);
    f[i] = read_func(a, b.data);
    loom_buf_free(&b);
    ok = f[i] && loom_model_features(f[i], 1, &out->rows[i],
                                     &out->in[i].n_rows, &d) == LOOM_OK;
    out->in[i].rows = out->rows[i];
  }
  CHECK(ok);
  loom_builder_options bo = {.per_file = 16, .jobs = 2, .cflags = "-O1"};
  loom_build_set bs;
  if (ok && loom_tune_build(f, n, &bo, &bs) == LOOM_OK) {
    loom_kernel *k = calloc((size_t)n, sizeof *k);
    loom_measured *m = calloc((size_t)n, sizeof *m);
    for (int i = 0; i < n; i++)
      k[i] = bs.items[i].kernel;
    /* The least of a few short measurements: what a busy machine adds to
     * a run is noise, never a speedup. */
    loom_runner_options ro = {.repeat = 5, .min_repeat_ms = 0.5,
                              .timeout_ms = 5000, .seed = 1};
    ok = loom_tune_run(f[0], k, n, &ro, m, &d) == LOOM_OK;
    int failed = 0;
    for (int i = 0; i < n && ok; i++) {
      out->latency[i] = m[i].error ? NAN : m[i].timing.min_ms;
      if (m[i].error && failed++ < 3)
        fprintf(stderr, "candidate %d failed: %s\n", i, m[i].error);
    }
    CHECK(ok && failed == 0);
    loom_tune_measured_free(m, n);
    free(m);
    free(k);
    loom_tune_build_free(&bs);
  } else {
    ok = false;
  }
  CHECK(ok);
  loom_diag_free(&d);
  free(f);
  return ok;
}

/* ---- ranking quality ------------------------------------------------------ */

/* Kendall's tau-a between scores (higher: better) and speed (lower
 * latency: better) over the held-out items. */
static double kendall(const double *score, const double *lat, const int *idx,
                      int n) {
  double conc = 0, pairs = 0;
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++) {
      double ds = score[a] - score[b];
      double dl = lat[idx[b]] - lat[idx[a]];
      pairs++;
      if (ds * dl > 0)
        conc++;
      else if (ds * dl < 0)
        conc--;
    }
  return pairs ? conc / pairs : 0;
}

/* The share of pairs ordered right among those whose latencies differ by
 * more than a quarter, which noise does not swap. */
static double pair_accuracy(const double *score, const double *lat,
                            const int *idx, int n) {
  double right = 0, pairs = 0;
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      if (!(lat[idx[a]] * 1.25 < lat[idx[b]]))
        continue;
      pairs++;
      right += score[a] > score[b] ? 1 : score[a] == score[b] ? 0.5 : 0;
    }
  return pairs ? right / pairs : 0.5;
}

/* Of the k fastest held-out candidates, the share among the k best scored. */
static double top_k_recall(const double *score, const double *lat,
                           const int *idx, int n, int k) {
  int hits = 0;
  for (int a = 0; a < n; a++) {
    int faster = 0, higher = 0;
    for (int b = 0; b < n; b++) {
      faster += lat[idx[b]] < lat[idx[a]];
      higher += score[b] > score[a];
    }
    hits += faster < k && higher < k;
  }
  return (double)hits / k;
}

typedef struct quality {
  double tau, pairs, recall;
} quality;

/* Trains m on the items of each set not in its held-out third, in a fixed
 * shuffled order, and scores the held-out items. */
static quality evaluate(loom_model *m, dataset *sets, int n_sets,
                        uint64_t seed) {
  quality q = {0, 0, 0};
  loom_diag d;
  loom_diag_init(&d);
  int *order[4];
  loom_rng r;
  loom_rng_seed(&r, seed);
  for (int s = 0; s < n_sets; s++) {
    int n = sets[s].n;
    order[s] = malloc((size_t)n * sizeof *order[s]);
    for (int i = 0; i < n; i++)
      order[s][i] = i;
    for (int i = n - 1; i > 0; i--) {
      int j = (int)loom_rng_below(&r, (uint64_t)i + 1);
      int t = order[s][i];
      order[s][i] = order[s][j];
      order[s][j] = t;
    }
    int n_train = n * 2 / 3;
    loom_model_input *in = malloc((size_t)n_train * sizeof *in);
    double *lat = malloc((size_t)n_train * sizeof *lat);
    for (int i = 0; i < n_train; i++) {
      in[i] = sets[s].in[order[s][i]];
      lat[i] = sets[s].latency[order[s][i]];
    }
    CHECK(loom_model_update(m, (uint64_t)s + 1, in, lat, n_train, &d) == LOOM_OK);
    free(in);
    free(lat);
  }
  for (int s = 0; s < n_sets; s++) {
    int n = sets[s].n, n_train = n * 2 / 3, n_test = n - n_train;
    const int *idx = order[s] + n_train;
    loom_model_input *in = malloc((size_t)n_test * sizeof *in);
    double *score = malloc((size_t)n_test * sizeof *score);
    for (int i = 0; i < n_test; i++)
      in[i] = sets[s].in[idx[i]];
    CHECK(loom_model_predict(m, in, n_test, score, &d) == LOOM_OK);
    q.tau += kendall(score, sets[s].latency, idx, n_test) / n_sets;
    q.pairs += pair_accuracy(score, sets[s].latency, idx, n_test) / n_sets;
    q.recall += top_k_recall(score, sets[s].latency, idx, n_test, n_test / 5) / n_sets;
    free(in);
    free(score);
    free(order[s]);
  }
  if (d.has_error)
    fprintf(stderr, "model: %s\n", d.msg);
  loom_diag_free(&d);
  return q;
}

static void test_ranking(dataset *sets, int n_sets) {
  loom_diag d;
  loom_diag_init(&d);
  loom_model_options o = {.seed = 7};
  quality rq = {0, 0, 0}, xq = {0, 0, 0};
  /* The random model's quality over several seeds and splits; the learned
   * model's on the same splits. */
  int trials = 3, random_trials = 20;
  for (int t = 0; t < random_trials; t++) {
    loom_model *rnd;
    CHECK(loom_model_random_new(100 + t, &rnd, &d) == LOOM_OK);
    quality a = evaluate(rnd, sets, n_sets, 50 + t % trials);
    rq.tau += a.tau / random_trials, rq.recall += a.recall / random_trials;
    rq.pairs += a.pairs / random_trials;
    loom_model_free(rnd);
  }
  for (int t = 0; t < trials; t++) {
    loom_model *xgb;
    CHECK(loom_model_xgb_new(&o, &xgb, &d) == LOOM_OK);
    quality b = evaluate(xgb, sets, n_sets, 50 + t);
    xq.tau += b.tau / trials, xq.recall += b.recall / trials;
    xq.pairs += b.pairs / trials;
    loom_model_free(xgb);
  }
  printf("held-out Kendall tau: xgboost %.3f, random %.3f; pairs apart by "
         "25%% ordered right: xgboost %.3f, random %.3f; top-20%% recall: "
         "xgboost %.3f, random %.3f\n",
         xq.tau, rq.tau, xq.pairs, rq.pairs, xq.recall, rq.recall);
  /* Measured on a quiet and on a busy machine: xgboost 0.24-0.50 against
   * random 0.0 for tau, 0.31-0.52 against 0.2 for recall. The pairs that
   * noise cannot swap carry the firm margin. */
  CHECK(xq.pairs > 0.7);
  CHECK(xq.pairs > rq.pairs + 0.15);
  CHECK(xq.tau > rq.tau + 0.1);
  CHECK(xq.recall > rq.recall + 0.05);
  loom_diag_free(&d);
}

/* Same seed and data: same predictions; save, load into a fresh model:
 * same predictions, bit for bit; bad states are refused. */
/* The threads of this process, as /proc says; 0 where it cannot be read. */
static int threads_now(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Threads: %d", &n) == 1)
      break;
  if (f)
    fclose(f);
  return n;
}

static void test_save_load(dataset *s) {
  loom_diag d;
  loom_diag_init(&d);
  loom_model_options o = {.seed = 3, .rounds = 20};
  loom_model *m1, *m2, *m3;
  CHECK(loom_model_xgb_new(&o, &m1, &d) == LOOM_OK);
  CHECK(loom_model_xgb_new(&o, &m2, &d) == LOOM_OK);
  CHECK(loom_model_xgb_new(NULL, &m3, &d) == LOOM_OK);
  int n = s->n, half = n / 2;
  /* one failed candidate among them */
  double *lat = malloc((size_t)n * sizeof *lat);
  memcpy(lat, s->latency, (size_t)n * sizeof *lat);
  lat[1] = NAN;
  lat[2] = -1;
  CHECK(loom_model_update(m1, 9, s->in, lat, half, &d) == LOOM_OK);
  CHECK(loom_model_update(m2, 9, s->in, lat, half, &d) == LOOM_OK);
  double *p1 = malloc((size_t)n * sizeof *p1), *p2 = malloc((size_t)n * sizeof *p2),
         *p3 = malloc((size_t)n * sizeof *p3);
  CHECK(loom_model_predict(m1, s->in + half, n - half, p1, &d) == LOOM_OK);
  CHECK(loom_model_predict(m2, s->in + half, n - half, p2, &d) == LOOM_OK);
  CHECK(!memcmp(p1, p2, (size_t)(n - half) * sizeof *p1));
  bool all_finite = true;
  for (int i = 0; i < n - half; i++)
    all_finite = all_finite && isfinite(p1[i]);
  CHECK(all_finite);

  loom_buf b;
  loom_buf_init(&b);
  CHECK(loom_model_save(m1, &b, &d) == LOOM_OK);
  /* Loading and predicting start no thread: an OpenMP pool in the tuner's
   * process would hang the parallel kernels of the measuring children
   * forked after it. */
  int threads = threads_now();
  CHECK(loom_model_load(m3, b.data, b.len, &d) == LOOM_OK);
  CHECK(loom_model_predict(m3, s->in + half, n - half, p3, &d) == LOOM_OK);
  CHECK(threads > 0 && threads_now() == threads);
  CHECK(!memcmp(p1, p3, (size_t)(n - half) * sizeof *p1));
  /* the loaded model goes on learning as the saved one does */
  CHECK(loom_model_update(m1, 9, s->in + half, lat + half, n - half, &d) == LOOM_OK);
  CHECK(loom_model_update(m3, 9, s->in + half, lat + half, n - half, &d) == LOOM_OK);
  CHECK(loom_model_predict(m1, s->in, half, p1, &d) == LOOM_OK);
  CHECK(loom_model_predict(m3, s->in, half, p3, &d) == LOOM_OK);
  CHECK(!memcmp(p1, p3, (size_t)half * sizeof *p1));
  if (d.has_error)
    fprintf(stderr, "model: %s\n", d.msg);

  /* truncated, extended and foreign states are refused, the model kept */
  size_t cuts[] = {0, 7, 8, 100, b.len / 2, b.len - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
    loom_diag e;
    loom_diag_init(&e);
    CHECK(loom_model_load(m3, b.data, cuts[i], &e) == LOOM_ERROR);
    CHECK_CONTAINS(e.msg, "not a saved XGBoost cost model");
    loom_diag_free(&e);
  }
  loom_buf_putc(&b, 'x');
  loom_diag e;
  loom_diag_init(&e);
  CHECK(loom_model_load(m3, b.data, b.len, &e) == LOOM_ERROR);
  loom_diag_free(&e);
  CHECK(loom_model_predict(m3, s->in, half, p3, &d) == LOOM_OK);
  CHECK(!memcmp(p1, p3, (size_t)half * sizeof *p1));

  /* a random model saves and loads too, and refuses the other's state */
  loom_model *r1, *r2;
  CHECK(loom_model_random_new(5, &r1, &d) == LOOM_OK);
  CHECK(loom_model_random_new(6, &r2, &d) == LOOM_OK);
  loom_diag_init(&e);
  CHECK(loom_model_load(r2, b.data, b.len, &e) == LOOM_ERROR);
  loom_diag_free(&e);
  loom_buf rb;
  loom_buf_init(&rb);
  CHECK(loom_model_save(r1, &rb, &d) == LOOM_OK);
  CHECK(loom_model_load(r2, rb.data, rb.len, &d) == LOOM_OK);
  CHECK(loom_model_predict(r1, s->in, half, p1, &d) == LOOM_OK);
  CHECK(loom_model_predict(r2, s->in, half, p2, &d) == LOOM_OK);
  CHECK(!memcmp(p1, p2, (size_t)half * sizeof *p1));
  CHECK_STREQ(loom_model_name(r1), "random");
  CHECK_STREQ(loom_model_name(m1), "xgboost");

  /* inputs that are not features */
  float bad_row[LOOM_MODEL_FEATURE_DIM] = {0};
  bad_row[3] = NAN;
  loom_model_input bad = {bad_row, 1};
  loom_diag_init(&e);
  CHECK(loom_model_predict(m1, &bad, 1, p1, &e) == LOOM_ERROR);
  CHECK_CONTAINS(e.msg, "not finite");
  loom_diag_free(&e);
  loom_model_input none = {NULL, 2};
  loom_diag_init(&e);
  CHECK(loom_model_update(m1, 1, &none, lat, 1, &e) == LOOM_ERROR);
  loom_diag_free(&e);

  loom_buf_free(&rb);
  loom_buf_free(&b);
  loom_model_free(r1);
  loom_model_free(r2);
  loom_model_free(m1);
  loom_model_free(m2);
  loom_model_free(m3);
  free(lat);
  free(p1);
  free(p2);
  free(p3);
  loom_diag_free(&d);
}

int main(void) {
  loom_arena *a = loom_arena_new();
  dataset sets[2];
  memset(sets, 0, sizeof sets);
  bool ok = measure(a, matmul_variant, N_MATMUL, 11, &sets[0]) &&
            measure(a, transpose_variant, N_TRANSPOSE, 12, &sets[1]);
  if (ok) {
    test_ranking(sets, 2);
    test_save_load(&sets[0]);
  }
  dataset_free(&sets[0]);
  dataset_free(&sets[1]);
  loom_arena_free(a);
  return test_summary("model/model");
}
