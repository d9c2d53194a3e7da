/* The XGBoost cost model, after MetaSchedule's XGBModel: gradient-boosted
 * trees over per-store feature rows, a candidate's score being the sum of
 * its rows' outputs ("pack-sum"). It is trained from scratch on every
 * candidate measured so far, with the label of a candidate its normalized
 * throughput within its workload (fastest latency / its latency, 0 when it
 * failed) and a squared error on the summed output weighted by the label,
 * so that the fast candidates, the ones that matter, are fitted best. The
 * objective is ours, given to XGBoost as gradients round by round. */
#include "tune/model_impl.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

static const char xgb_magic[8] = "LOOMXGB1";

/* A label's weight never drops to zero, so failed and very slow candidates
 * are still pulled down towards their label. */
#define MIN_WEIGHT 0.01

typedef struct record {
  uint64_t workload;
  double latency; /* not a positive finite number: failed */
  float *rows;    /* heap */
  int n_rows;
} record;

typedef struct xgb_model {
  loom_model base;
  loom_model_options o;
  loom_rng rng;        /* scores before the first training */
  record *recs;
  int n_recs, cap_recs;
  BoosterHandle booster; /* NULL until trained */
} xgb_model;

static loom_status xgb_error(loom_diag *d, const char *what) {
  return loom_diag_error(d, (loom_loc){0}, "XGBoost: %s: %s", what,
                         XGBGetLastError());
}

static loom_status out_of_memory(loom_diag *d) {
  return loom_diag_error(d, (loom_loc){0}, "out of memory");
}

static bool has_latency(double t) { return isfinite(t) && t > 0; }

/* All rows of cands in one matrix, and where each candidate's rows start. */
static loom_status stack_rows(const loom_model_input *cands, int n,
                              DMatrixHandle *out, int **starts, loom_diag *d) {
  size_t total = 0;
  *out = NULL;
  *starts = malloc((size_t)(n + 1) * sizeof **starts);
  if (!*starts)
    return out_of_memory(d);
  for (int i = 0; i < n; i++) {
    (*starts)[i] = (int)total;
    total += (size_t)cands[i].n_rows;
  }
  (*starts)[n] = (int)total;
  float *m = malloc((total ? total : 1) * LOOM_MODEL_FEATURE_DIM * sizeof *m);
  if (!m) {
    free(*starts);
    *starts = NULL;
    return out_of_memory(d);
  }
  for (int i = 0; i < n; i++)
    memcpy(m + (size_t)(*starts)[i] * LOOM_MODEL_FEATURE_DIM, cands[i].rows,
           (size_t)cands[i].n_rows * LOOM_MODEL_FEATURE_DIM * sizeof *m);
  int rc = XGDMatrixCreateFromMat(m, total, LOOM_MODEL_FEATURE_DIM, NAN, out);
  free(m);
  if (rc) {
    free(*starts);
    *starts = NULL;
    return xgb_error(d, "cannot make a matrix of the features");
  }
  return LOOM_OK;
}

static loom_status set_params(xgb_model *x, BoosterHandle b, loom_diag *d) {
  char v[5][32];
  snprintf(v[0], sizeof v[0], "%d", x->o.max_depth);
  snprintf(v[1], sizeof v[1], "%.17g", x->o.eta);
  snprintf(v[2], sizeof v[2], "%.17g", x->o.gamma);
  snprintf(v[3], sizeof v[3], "%llu",
           (unsigned long long)(x->o.seed & 0x7fffffff));
  snprintf(v[4], sizeof v[4], "%d", x->o.threads);
  const char *params[][2] = {
      {"verbosity", "0"},          {"booster", "gbtree"},
      {"tree_method", "hist"},     {"base_score", "0"},
      {"max_depth", v[0]},         {"eta", v[1]},
      {"gamma", v[2]},             {"min_child_weight", "0"},
      {"seed", v[3]},              {"nthread", v[4]},
      {"objective", "reg:squarederror"},
  };
  for (size_t i = 0; i < sizeof params / sizeof *params; i++)
    if (XGBoosterSetParam(b, params[i][0], params[i][1]))
      return xgb_error(d, "cannot set a parameter");
  return LOOM_OK;
}

/* Labels: fastest latency of the workload over the candidate's own. */
static void make_labels(const xgb_model *x, double *label) {
  for (int i = 0; i < x->n_recs; i++) {
    const record *r = &x->recs[i];
    label[i] = 0;
    if (!has_latency(r->latency))
      continue;
    double best = r->latency;
    for (int j = 0; j < x->n_recs; j++)
      if (x->recs[j].workload == r->workload && has_latency(x->recs[j].latency) &&
          x->recs[j].latency < best)
        best = x->recs[j].latency;
    label[i] = best / r->latency;
  }
}

static loom_status train(xgb_model *x, loom_diag *d) {
  loom_model_input *in = malloc((size_t)x->n_recs * sizeof *in);
  double *label = malloc((size_t)x->n_recs * sizeof *label);
  if (!in || !label) {
    free(in);
    free(label);
    return out_of_memory(d);
  }
  for (int i = 0; i < x->n_recs; i++)
    in[i] = (loom_model_input){x->recs[i].rows, x->recs[i].n_rows};
  make_labels(x, label);
  DMatrixHandle dm = NULL;
  int *starts = NULL;
  float *grad = NULL, *hess = NULL;
  BoosterHandle b = NULL;
  loom_status st = stack_rows(in, x->n_recs, &dm, &starts, d);
  free(in);
  if (st != LOOM_OK)
    goto done;
  size_t n_rows = (size_t)starts[x->n_recs];
  grad = malloc((n_rows ? n_rows : 1) * sizeof *grad);
  hess = malloc((n_rows ? n_rows : 1) * sizeof *hess);
  if (!grad || !hess) {
    st = out_of_memory(d);
    goto done;
  }
  if (XGBoosterCreate(&dm, 1, &b)) {
    st = xgb_error(d, "cannot make a booster");
    goto done;
  }
  if ((st = set_params(x, b, d)) != LOOM_OK)
    goto done;
  for (int round = 0; round < x->o.rounds; round++) {
    bst_ulong len = 0;
    const float *out = NULL;
    if (XGBoosterPredict(b, dm, 1, 0, 1, &len, &out) || len != n_rows) {
      st = xgb_error(d, "cannot predict while training");
      goto done;
    }
    /* Every row of a candidate gets the gradient of the candidate's sum. */
    for (int i = 0; i < x->n_recs; i++) {
      double sum = 0;
      for (int r = starts[i]; r < starts[i + 1]; r++)
        sum += out[r];
      double w = label[i] > MIN_WEIGHT ? label[i] : MIN_WEIGHT;
      for (int r = starts[i]; r < starts[i + 1]; r++) {
        grad[r] = (float)((sum - label[i]) * w);
        hess[r] = (float)w;
      }
    }
    if (XGBoosterBoostOneIter(b, dm, grad, hess, n_rows)) {
      st = xgb_error(d, "cannot train");
      goto done;
    }
  }
  if (x->booster)
    XGBoosterFree(x->booster);
  x->booster = b;
  b = NULL;
done:
  if (b)
    XGBoosterFree(b);
  if (dm)
    XGDMatrixFree(dm);
  free(starts);
  free(grad);
  free(hess);
  free(label);
  return st;
}

static loom_status xgb_update(loom_model *m, uint64_t workload,
                              const loom_model_input *cands,
                              const double *latency, int n, loom_diag *d) {
  xgb_model *x = (xgb_model *)m;
  if (n == 0)
    return LOOM_OK;
  if (x->n_recs + n > x->cap_recs) {
    int cap = x->cap_recs ? x->cap_recs : 64;
    while (cap < x->n_recs + n)
      cap *= 2;
    record *r = realloc(x->recs, (size_t)cap * sizeof *r);
    if (!r)
      return out_of_memory(d);
    x->recs = r;
    x->cap_recs = cap;
  }
  for (int i = 0; i < n; i++) {
    size_t k = (size_t)cands[i].n_rows * LOOM_MODEL_FEATURE_DIM;
    float *rows = malloc((k ? k : 1) * sizeof *rows);
    if (!rows)
      return out_of_memory(d);
    memcpy(rows, cands[i].rows, k * sizeof *rows);
    x->recs[x->n_recs++] = (record){workload, latency[i], rows, cands[i].n_rows};
  }
  int measured = 0;
  for (int i = 0; i < x->n_recs; i++)
    measured += has_latency(x->recs[i].latency);
  if (measured < x->o.min_train)
    return LOOM_OK;
  return train(x, d);
}

static loom_status xgb_predict(loom_model *m, const loom_model_input *cands,
                               int n, double *scores, loom_diag *d) {
  xgb_model *x = (xgb_model *)m;
  if (!x->booster) {
    for (int i = 0; i < n; i++)
      scores[i] = loom_rng_double(&x->rng);
    return LOOM_OK;
  }
  if (n == 0)
    return LOOM_OK;
  DMatrixHandle dm;
  int *starts;
  TRY(stack_rows(cands, n, &dm, &starts, d));
  bst_ulong len = 0;
  const float *out = NULL;
  loom_status st = LOOM_OK;
  if (XGBoosterPredict(x->booster, dm, 1, 0, 0, &len, &out) ||
      len != (bst_ulong)starts[n]) {
    st = xgb_error(d, "cannot predict");
  } else {
    for (int i = 0; i < n; i++) {
      double sum = 0;
      for (int r = starts[i]; r < starts[i + 1]; r++)
        sum += out[r];
      scores[i] = sum;
    }
  }
  XGDMatrixFree(dm);
  free(starts);
  return st;
}

/* The state: magic, options, generator, records, then the booster in
 * XGBoost's own UBJSON model format (length 0 when untrained). */
static loom_status xgb_save(const loom_model *m, loom_buf *out, loom_diag *d) {
  const xgb_model *x = (const xgb_model *)m;
  loom_buf_putn(out, xgb_magic, 8);
  model_put_u64(out, x->o.seed);
  model_put_u64(out, (uint64_t)x->o.max_depth);
  model_put_f64(out, x->o.eta);
  model_put_f64(out, x->o.gamma);
  model_put_u64(out, (uint64_t)x->o.rounds);
  model_put_u64(out, (uint64_t)x->o.threads);
  model_put_u64(out, (uint64_t)x->o.min_train);
  for (int i = 0; i < 4; i++)
    model_put_u64(out, x->rng.s[i]);
  model_put_u64(out, LOOM_MODEL_FEATURE_DIM);
  model_put_u64(out, (uint64_t)x->n_recs);
  for (int i = 0; i < x->n_recs; i++) {
    const record *r = &x->recs[i];
    model_put_u64(out, r->workload);
    model_put_f64(out, r->latency);
    model_put_u64(out, (uint64_t)r->n_rows);
    for (size_t k = 0; k < (size_t)r->n_rows * LOOM_MODEL_FEATURE_DIM; k++)
      model_put_f32(out, r->rows[k]);
  }
  bst_ulong len = 0;
  const char *bytes = NULL;
  if (x->booster &&
      XGBoosterSaveModelToBuffer(x->booster, "{\"format\": \"ubj\"}", &len, &bytes))
    return xgb_error(d, "cannot save the booster");
  model_put_u64(out, (uint64_t)len);
  loom_buf_putn(out, bytes, (size_t)len);
  if (out->has_failed)
    return out_of_memory(d);
  return LOOM_OK;
}

static void free_records(record *recs, int n) {
  for (int i = 0; i < n; i++)
    free(recs[i].rows);
  free(recs);
}

static loom_status bad_state(loom_diag *d, const char *why) {
  return loom_diag_error(d, (loom_loc){0}, "not a saved XGBoost cost model: %s",
                         why);
}

/* XGBoost loads a model with a parallel loop over its trees at OpenMP's
 * default thread count, whatever nthread says (that applies from the first
 * update or prediction). An OpenMP thread pool started in this process
 * hangs the first parallel kernel of every measuring child forked after it
 * (libgomp does not survive fork), so the load runs with the default set to
 * one thread. OpenMP is XGBoost's, found at run time: Loom itself does not
 * link it. Returns the default to restore, 0 when there is none. */
typedef int (*omp_get_fn)(void);
typedef void (*omp_set_fn)(int);

static int one_openmp_thread(void) {
  omp_get_fn get = (omp_get_fn)dlsym(RTLD_DEFAULT, "omp_get_max_threads");
  omp_set_fn set = (omp_set_fn)dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  if (!get || !set)
    return 0;
  int n = get();
  set(1);
  return n;
}

static void restore_openmp_threads(int n) {
  omp_set_fn set = (omp_set_fn)dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  if (set && n > 0)
    set(n);
}

static loom_status xgb_load(loom_model *m, const void *bytes, size_t len,
                            loom_diag *d) {
  xgb_model *x = (xgb_model *)m;
  model_reader rd = {bytes, (const unsigned char *)bytes + len, false};
  const void *magic = model_get_bytes(&rd, 8);
  if (!magic || memcmp(magic, xgb_magic, 8))
    return bad_state(d, "bad magic");
  loom_model_options o;
  o.seed = model_get_u64(&rd);
  o.max_depth = (int)model_get_u64(&rd);
  o.eta = model_get_f64(&rd);
  o.gamma = model_get_f64(&rd);
  o.rounds = (int)model_get_u64(&rd);
  o.threads = (int)model_get_u64(&rd);
  o.min_train = (int)model_get_u64(&rd);
  loom_rng rng;
  for (int i = 0; i < 4; i++)
    rng.s[i] = model_get_u64(&rd);
  if (model_get_u64(&rd) != LOOM_MODEL_FEATURE_DIM)
    return bad_state(d, "made with features of another dimension");
  uint64_t n = model_get_u64(&rd);
  /* Each record takes at least 24 bytes: a count beyond that is a lie. */
  if (rd.is_short || n > (uint64_t)(rd.end - rd.p) / 24)
    return bad_state(d, "truncated");
  record *recs = calloc(n ? (size_t)n : 1, sizeof *recs);
  if (!recs)
    return out_of_memory(d);
  loom_status st = LOOM_OK;
  size_t row_bytes = (size_t)LOOM_MODEL_FEATURE_DIM * 4;
  for (uint64_t i = 0; i < n && st == LOOM_OK; i++) {
    record *r = &recs[i];
    r->workload = model_get_u64(&rd);
    r->latency = model_get_f64(&rd);
    uint64_t rows = model_get_u64(&rd);
    if (rd.is_short || rows > (uint64_t)(rd.end - rd.p) / row_bytes) {
      st = bad_state(d, "truncated");
      break;
    }
    r->n_rows = (int)rows;
    r->rows = malloc((rows ? rows : 1) * row_bytes);
    if (!r->rows) {
      st = out_of_memory(d);
      break;
    }
    for (size_t k = 0; k < rows * LOOM_MODEL_FEATURE_DIM; k++) {
      r->rows[k] = model_get_f32(&rd);
      if (!isfinite(r->rows[k]))
        st = bad_state(d, "a feature is not finite");
    }
  }
  uint64_t blen = st == LOOM_OK ? model_get_u64(&rd) : 0;
  const void *blob = st == LOOM_OK ? model_get_bytes(&rd, (size_t)blen) : NULL;
  if (st == LOOM_OK && (rd.is_short || rd.p != rd.end))
    st = bad_state(d, rd.is_short ? "truncated" : "bytes after the end");
  if (st == LOOM_OK && (o.max_depth <= 0 || o.rounds < 0 || o.threads <= 0 ||
                        o.max_depth > 64 || o.threads > 1024 ||
                        !isfinite(o.eta) || !isfinite(o.gamma)))
    st = bad_state(d, "options out of range");
  BoosterHandle b = NULL;
  if (st == LOOM_OK && blen > 0) {
    xgb_model tmp = *x;
    tmp.o = o;
    int threads = one_openmp_thread();
    if (XGBoosterCreate(NULL, 0, &b) || XGBoosterLoadModelFromBuffer(b, blob, (bst_ulong)blen))
      st = xgb_error(d, "cannot load the booster");
    else
      st = set_params(&tmp, b, d);
    restore_openmp_threads(threads);
  }
  if (st != LOOM_OK) {
    if (b)
      XGBoosterFree(b);
    free_records(recs, (int)n);
    return st;
  }
  free_records(x->recs, x->n_recs);
  if (x->booster)
    XGBoosterFree(x->booster);
  x->o = o;
  x->rng = rng;
  x->recs = recs;
  x->n_recs = x->cap_recs = (int)n;
  x->booster = b;
  return LOOM_OK;
}

static void xgb_free(loom_model *m) {
  xgb_model *x = (xgb_model *)m;
  free_records(x->recs, x->n_recs);
  if (x->booster)
    XGBoosterFree(x->booster);
  free(x);
}

static const loom_model_vtable xgb_vt = {
    "xgboost", xgb_update, xgb_predict, xgb_save, xgb_load, xgb_free,
};

loom_status loom_model_xgb_new(const loom_model_options *o, loom_model **out,
                               loom_diag *d) {
  *out = NULL;
  xgb_model *x = calloc(1, sizeof *x);
  if (!x)
    return out_of_memory(d);
  x->base.vt = &xgb_vt;
  if (o)
    x->o = *o;
  if (x->o.max_depth <= 0)
    x->o.max_depth = 10;
  if (x->o.eta <= 0)
    x->o.eta = 0.2;
  if (x->o.gamma <= 0)
    x->o.gamma = 0.001;
  if (x->o.rounds <= 0)
    x->o.rounds = 60;
  if (x->o.threads <= 0)
    x->o.threads = 1;
  if (x->o.min_train <= 0)
    x->o.min_train = 1;
  if (x->o.max_depth > 64 || x->o.threads > 1024) {
    free(x);
    return loom_diag_error(d, (loom_loc){0},
                           "cost model options out of range (max_depth at most "
                           "64, threads at most 1024)");
  }
  loom_rng_seed(&x->rng, x->o.seed);
  *out = &x->base;
  return LOOM_OK;
}
