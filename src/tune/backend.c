/* The backends, one per target kind, and what the tuner calls them through:
 * building (at once or in a thread of its own) and running. A new backend is
 * a row here and its own builder and runner files. */
#include "loom/codegen.h"
#include "tune/tune_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The C backend refuses what its code generator cannot print. */
static loom_status c_check(const loom_target *t, const loom_module *m, loom_diag *d) {
  (void)t;
  loom_buf c;
  loom_buf_init(&c);
  loom_status st = loom_codegen_c_module(m, &c, d);
  if (st == LOOM_OK && c.has_failed)
    st = LOOM_NOMEM;
  loom_buf_free(&c);
  return st;
}

static const loom_backend backend_c = {
    .name = "c",
    .target = LOOM_TARGET_CPU,
    .check = c_check,
    .build = tune_c_build,
    .build_free = tune_c_build_free,
    .runner_new = tune_c_runner_new,
    .runner_run = tune_c_runner_run,
    .runner_free = tune_c_runner_free,
};

/* The CUDA backend (docs/gpu.md): CUDA C compiled by NVRTC, run by the
 * driver in a child process. */
static const loom_backend backend_cuda = {
    .name = "cuda",
    .target = LOOM_TARGET_CUDA,
    .check = tune_cuda_check,
    .build = tune_cuda_build,
    .build_free = tune_cuda_build_free,
    .runner_new = tune_cuda_runner_new,
    .runner_run = tune_cuda_runner_run,
    .runner_free = tune_cuda_runner_free,
};

static const loom_backend *const backends[LOOM_TARGET_KIND_COUNT_] = {
    [LOOM_TARGET_CPU] = &backend_c,
    [LOOM_TARGET_CUDA] = &backend_cuda,
};

const loom_backend *loom_tune_backend(const loom_target *t) {
  return backends[t ? t->kind : LOOM_TARGET_CPU];
}

/* Why a target has no backend, for its diagnostics. */
static loom_status no_backend(const loom_target *t, loom_diag *d) {
  return loom_diag_error(d, (loom_loc){0},
                         "Loom has no backend for %s targets",
                         loom_target_kind_name(t->kind));
}

loom_status loom_tune_check(const loom_target *t, const loom_module *m,
                            loom_diag *d) {
  const loom_backend *be = loom_tune_backend(t);
  return be ? be->check(t, m, d) : no_backend(t, d);
}

/* ---- building -------------------------------------------------------------- */

/* A build where each candidate fails for want of a backend. */
static loom_status no_backend_build(const loom_target *t, int n,
                                    loom_build_set *out) {
  memset(out, 0, sizeof *out);
  out->items = calloc((size_t)(n ? n : 1), sizeof *out->items);
  if (!out->items)
    return LOOM_NOMEM;
  out->n = n;
  for (int i = 0; i < n; i++) {
    loom_diag d;
    loom_diag_init(&d);
    no_backend(t, &d);
    out->items[i].error = d.msg ? strdup(d.msg) : NULL;
    loom_diag_free(&d);
  }
  return LOOM_OK;
}

static void free_items(loom_build_set *b) {
  for (int i = 0; b->items && i < b->n; i++)
    free(b->items[i].error);
  free(b->items);
}

loom_status loom_tune_build(const loom_func *const *funcs, int n,
                            const loom_builder_options *o,
                            loom_build_set *out) {
  const loom_backend *be = loom_tune_backend(o ? o->target : NULL);
  if (!be)
    return no_backend_build(o->target, n, out);
  loom_status st = be->build(funcs, n, o, out);
  out->backend = be;
  return st;
}

void loom_tune_build_free(loom_build_set *b) {
  if (b->backend)
    b->backend->build_free(b);
  else
    free_items(b);
  memset(b, 0, sizeof *b);
}

/* A build in a thread of its own, so the caller can measure the previous
 * batch meanwhile. */
struct loom_tune_build_job {
  pthread_t tid;
  bool is_threaded;
  const loom_func **funcs;
  int n;
  loom_builder_options o;
  loom_build_set set;
  loom_status st;
};

static void *build_thread(void *arg) {
  loom_tune_build_job *j = arg;
  j->st = loom_tune_build(j->funcs, j->n, &j->o, &j->set);
  return NULL;
}

loom_status loom_tune_build_start(const loom_func *const *funcs, int n,
                                  const loom_builder_options *o,
                                  loom_tune_build_job **out) {
  loom_tune_build_job *j = calloc(1, sizeof *j);
  if (!j || !(j->funcs = calloc((size_t)(n ? n : 1), sizeof *j->funcs))) {
    free(j);
    return LOOM_NOMEM;
  }
  memcpy(j->funcs, funcs, (size_t)n * sizeof *funcs);
  j->n = n;
  if (o)
    j->o = *o;
  j->is_threaded = pthread_create(&j->tid, NULL, build_thread, j) == 0;
  if (!j->is_threaded)
    build_thread(j); /* no thread to be had: build now */
  *out = j;
  return LOOM_OK;
}

loom_status loom_tune_build_wait(loom_tune_build_job *j, loom_build_set *out) {
  if (j->is_threaded)
    pthread_join(j->tid, NULL);
  loom_status st = j->st;
  *out = j->set;
  if (st != LOOM_OK)
    memset(out, 0, sizeof *out);
  free(j->funcs);
  free(j);
  return st;
}

/* ---- running --------------------------------------------------------------- */

/* The caller's options, which the backend's runner reads by pointer. */
struct loom_tune_runner {
  const loom_backend *backend;
  void *impl;
  loom_runner_options o;
};

loom_status loom_tune_runner_new(const loom_func *workload,
                                 const loom_runner_options *o,
                                 LOOM_GIVE loom_tune_runner **out,
                                 loom_diag *d) {
  loom_tune_runner *tr = calloc(1, sizeof *tr);
  if (!tr)
    return LOOM_NOMEM;
  if (o)
    tr->o = *o;
  tr->backend = loom_tune_backend(tr->o.target);
  loom_status st = tr->backend ? tr->backend->runner_new(workload, &tr->o,
                                                         &tr->impl, d)
                               : no_backend(tr->o.target, d);
  if (st != LOOM_OK) {
    free(tr);
    return st;
  }
  *out = tr;
  return LOOM_OK;
}

void loom_tune_runner_free(LOOM_TAKE loom_tune_runner *tr) {
  if (!tr)
    return;
  tr->backend->runner_free(tr->impl);
  free(tr);
}

void loom_tune_runner_set_timeout(loom_tune_runner *tr, double timeout_ms) {
  tr->o.timeout_ms = timeout_ms;
}

void loom_tune_runner_set_best(loom_tune_runner *tr, double best_ms) {
  tr->o.best_ms = best_ms;
}

loom_status loom_tune_runner_run(loom_tune_runner *tr,
                                 const loom_kernel *kernels, int n,
                                 loom_measured *out, loom_diag *d) {
  memset(out, 0, (size_t)n * sizeof *out);
  return tr->backend->runner_run(tr->impl, kernels, n, out, d);
}

loom_status loom_tune_run(const loom_func *workload,
                          const loom_kernel *kernels, int n,
                          const loom_runner_options *o, loom_measured *out,
                          loom_diag *d) {
  loom_tune_runner *tr;
  memset(out, 0, (size_t)n * sizeof *out);
  TRY(loom_tune_runner_new(workload, o, &tr, d));
  loom_status st = loom_tune_runner_run(tr, kernels, n, out, d);
  loom_tune_runner_free(tr);
  return st;
}
