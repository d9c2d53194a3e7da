/* The cost-model interface: dispatch through a model's vtable, the byte
 * format of saved states, and the random model that any learned model must
 * beat. */
#include "tune/model_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- dispatch ------------------------------------------------------------- */

loom_status loom_model_update(loom_model *m, uint64_t workload,
                              const loom_model_input *cands,
                              const double *latency, int n, loom_diag *d) {
  if (n < 0)
    return loom_diag_error(d, (loom_loc){0}, "negative candidate count %d", n);
  if (n > 0 && (!cands || !latency))
    return loom_diag_error(d, (loom_loc){0},
                           "no candidates or latencies given for %d", n);
  TRY(model_check_inputs(cands, n, d));
  return m->vt->update(m, workload, cands, latency, n, d);
}

loom_status loom_model_predict(loom_model *m, const loom_model_input *cands,
                               int n, double *scores, loom_diag *d) {
  if (n < 0)
    return loom_diag_error(d, (loom_loc){0}, "negative candidate count %d", n);
  if (n > 0 && (!cands || !scores))
    return loom_diag_error(d, (loom_loc){0},
                           "no candidates or scores given for %d", n);
  TRY(model_check_inputs(cands, n, d));
  return m->vt->predict(m, cands, n, scores, d);
}

loom_status loom_model_save(const loom_model *m, loom_buf *out, loom_diag *d) {
  return m->vt->save(m, out, d);
}

loom_status loom_model_load(loom_model *m, const void *bytes, size_t len,
                            loom_diag *d) {
  return m->vt->load(m, bytes, len, d);
}

void loom_model_free(loom_model *m) {
  if (m)
    m->vt->free(m);
}

const char *loom_model_name(const loom_model *m) { return m->vt->name; }

loom_status model_check_inputs(const loom_model_input *cands, int n,
                               loom_diag *d) {
  for (int i = 0; i < n; i++) {
    if (cands[i].n_rows < 0 || (cands[i].n_rows > 0 && !cands[i].rows))
      return loom_diag_error(d, (loom_loc){0},
                             "candidate %d has no feature rows", i);
    size_t k = (size_t)cands[i].n_rows * LOOM_MODEL_FEATURE_DIM;
    for (size_t j = 0; j < k; j++)
      if (!isfinite(cands[i].rows[j]))
        return loom_diag_error(d, (loom_loc){0},
                               "candidate %d has a feature that is not finite "
                               "(row %zu, column %zu)",
                               i, j / LOOM_MODEL_FEATURE_DIM,
                               j % LOOM_MODEL_FEATURE_DIM);
  }
  return LOOM_OK;
}

/* ---- bytes ---------------------------------------------------------------- */

void model_put_u64(loom_buf *b, uint64_t v) {
  char s[8];
  for (int i = 0; i < 8; i++)
    s[i] = (char)(v >> (8 * i));
  loom_buf_putn(b, s, 8);
}

void model_put_f64(loom_buf *b, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  model_put_u64(b, u);
}

void model_put_f32(loom_buf *b, float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  char s[4];
  for (int i = 0; i < 4; i++)
    s[i] = (char)(u >> (8 * i));
  loom_buf_putn(b, s, 4);
}

const void *model_get_bytes(model_reader *r, size_t n) {
  if (r->is_short || (size_t)(r->end - r->p) < n) {
    r->is_short = true;
    return NULL;
  }
  const void *p = r->p;
  r->p += n;
  return p;
}

uint64_t model_get_u64(model_reader *r) {
  const unsigned char *p = model_get_bytes(r, 8);
  uint64_t v = 0;
  for (int i = 0; p && i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

double model_get_f64(model_reader *r) {
  uint64_t u = model_get_u64(r);
  double v;
  memcpy(&v, &u, 8);
  return v;
}

float model_get_f32(model_reader *r) {
  const unsigned char *p = model_get_bytes(r, 4);
  uint32_t u = 0;
  for (int i = 0; p && i < 4; i++)
    u |= (uint32_t)p[i] << (8 * i);
  float v;
  memcpy(&v, &u, 4);
  return v;
}

/* ---- the random model ----------------------------------------------------- */

static const char random_magic[8] = "LOOMRND1";

typedef struct random_model {
  loom_model base;
  loom_rng rng;
} random_model;

static loom_status random_update(loom_model *m, uint64_t workload,
                                 const loom_model_input *cands,
                                 const double *latency, int n, loom_diag *d) {
  return LOOM_OK;
}

static loom_status random_predict(loom_model *m, const loom_model_input *cands,
                                  int n, double *scores, loom_diag *d) {
  random_model *r = (random_model *)m;
  for (int i = 0; i < n; i++)
    scores[i] = loom_rng_double(&r->rng);
  return LOOM_OK;
}

static loom_status random_save(const loom_model *m, loom_buf *out,
                               loom_diag *d) {
  const random_model *r = (const random_model *)m;
  loom_buf_putn(out, random_magic, 8);
  for (int i = 0; i < 4; i++)
    model_put_u64(out, r->rng.s[i]);
  if (out->has_failed)
    return loom_diag_error(d, (loom_loc){0}, "out of memory");
  return LOOM_OK;
}

static loom_status random_load(loom_model *m, const void *bytes, size_t len,
                               loom_diag *d) {
  random_model *r = (random_model *)m;
  model_reader rd = {bytes, (const unsigned char *)bytes + len, false};
  const void *magic = model_get_bytes(&rd, 8);
  if (!magic || memcmp(magic, random_magic, 8))
    return loom_diag_error(d, (loom_loc){0},
                           "not a saved random cost model (bad magic)");
  loom_rng s;
  for (int i = 0; i < 4; i++)
    s.s[i] = model_get_u64(&rd);
  if (rd.is_short || rd.p != rd.end)
    return loom_diag_error(d, (loom_loc){0},
                           "saved random cost model has %s bytes",
                           rd.is_short ? "too few" : "too many");
  r->rng = s;
  return LOOM_OK;
}

static void random_free(loom_model *m) { free(m); }

static const loom_model_vtable random_vt = {
    "random", random_update, random_predict, random_save, random_load,
    random_free,
};

loom_status loom_model_random_new(uint64_t seed, loom_model **out,
                                  loom_diag *d) {
  random_model *r = calloc(1, sizeof *r);
  *out = NULL;
  if (!r)
    return loom_diag_error(d, (loom_loc){0}, "out of memory");
  r->base.vt = &random_vt;
  loom_rng_seed(&r->rng, seed);
  *out = &r->base;
  return LOOM_OK;
}
