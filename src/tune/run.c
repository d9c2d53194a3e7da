/* The runner: one set of seeded inputs per workload, one child process per
 * candidate. The child calls the kernel once on the shared arrays the parent
 * checks, then times it on private copies of the inputs, so a kernel that
 * updates in place is checked after exactly one call. */
#include "loom/interp.h"
#include "loom/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What a child reports, in shared memory. */
typedef struct report {
  int32_t kernel_rc;
  bool is_timed;
  loom_runtime_timing timing;
  char message[256];
} report;

typedef struct runner {
  const loom_func *f;
  const loom_runner_options *o;
  loom_interp_array **inputs;   /* the seeded inputs, per parameter */
  loom_interp_array **expect;   /* the interpreter's results, when checking */
  loom_runtime_array **arrays;  /* shared with the child */
  void **args;
  const int64_t **shapes;
  double *fscalars;
  loom_kernel kernel;           /* the candidate being measured */
  void **timed_args;            /* the child's private copies */
  report *rep;
} runner;

double loom_tune_tolerance(loom_dtype t) {
  if (t.code == LOOM_DT_BFLOAT)
    return 2e-2;
  return t.bits == 16 ? 1e-2 : t.bits == 64 ? 1e-9 : 1e-4;
}

static int timed_call(void *ctx) {
  runner *r = ctx;
  return r->kernel(r->timed_args, r->shapes) ? 1 : 0;
}

static int child_main(void *ctx) {
  runner *r = ctx;
  const loom_func *f = r->f;
  if (r->o->set_threads && r->o->threads > 0)
    r->o->set_threads(r->o->threads);
  for (int i = 0; i < f->n_params; i++) {
    r->timed_args[i] = r->args[i];
    if (!r->arrays[i])
      continue;
    void *copy = malloc(r->arrays[i]->n_bytes ? r->arrays[i]->n_bytes : 1);
    if (!copy)
      return 3;
    memcpy(copy, r->arrays[i]->data, r->arrays[i]->n_bytes);
    r->timed_args[i] = copy;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  r->rep->kernel_rc = r->kernel(r->args, r->shapes);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (r->rep->kernel_rc)
    return 0;
  /* A call this slow is its own measurement: repeating it would cost the
   * search seconds to rank a candidate that is out of the running anyway. */
  double first_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
  double long_ms = r->o->long_call_ms > 0 ? r->o->long_call_ms : 100;
  double best = r->o->best_ms;
  /* The 5 ms floor keeps a first call slowed by starting the thread pool or
   * faulting in code from passing for a slow kernel. */
  bool is_loser = best > 0 && first_ms >= 10 * best && first_ms >= 5;
  if (first_ms >= long_ms || is_loser) {
    loom_runtime_timing *t = &r->rep->timing;
    t->median_ms = t->mean_ms = t->min_ms = t->max_ms = first_ms;
    t->stddev_ms = 0;
    t->repeat = t->number = 1;
    r->rep->is_timed = true;
    return 0;
  }
  loom_runtime_timer_config cfg = loom_runtime_timer_default();
  cfg.warmup = 0; /* the checked call warmed up */
  cfg.repeat = r->o->repeat > 0 ? r->o->repeat : 3;
  if (best > 0 && first_ms >= 2 * best)
    cfg.repeat = 1;
  cfg.min_repeat_ms = r->o->min_repeat_ms > 0 ? r->o->min_repeat_ms : 2;
  cfg.flush_cache = r->o->flush_cache;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_runtime_time(timed_call, r, &cfg, &r->rep->timing, &d) == LOOM_OK)
    r->rep->is_timed = true;
  else
    snprintf(r->rep->message, sizeof r->rep->message, "%s", d.msg ? d.msg : "timing failed");
  return 0;
}

static char *heap_printf(const char *fmt, const char *a, const char *b) {
  size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
  char *s = malloc(n);
  if (s)
    snprintf(s, n, fmt, a, b);
  return s;
}

/* The error of a wrong result, or NULL when every buffer matches. */
static char *check(runner *r) {
  for (int i = 0; i < r->f->n_params; i++) {
    if (!r->arrays[i])
      continue;
    loom_interp_array got = loom_runtime_array_view(r->arrays[i]);
    double tol = loom_tune_tolerance(got.dtype);
    char *why = NULL;
    if (!loom_interp_compare(&got, r->expect[i], tol, tol, &why)) {
      char *e = heap_printf("wrong result: %s differs from the interpreter %s",
                            r->f->params[i].buffer->name, why ? why : "");
      free(why);
      return e;
    }
  }
  return NULL;
}

static const char *rc_meaning(int32_t rc) {
  return rc == -1 ? "a T.assert failed" : rc == -2 ? "arrays disagree on a symbolic dimension"
         : rc == -3 ? "out of memory" : "unknown";
}

static char *measure(runner *r, loom_measured *m) {
  const loom_func *f = r->f;
  for (int i = 0; i < f->n_params; i++)
    if (r->arrays[i])
      memcpy(r->arrays[i]->data, r->inputs[i]->data, r->arrays[i]->n_bytes);
  memset(r->rep, 0, sizeof *r->rep);
  loom_runtime_child_result child;
  loom_diag d;
  loom_diag_init(&d);
  double limit = r->o->timeout_ms > 0 ? r->o->timeout_ms : 10000;
  loom_status st = loom_runtime_run_child(child_main, r, limit, &child, &d);
  char buf[256];
  char *err = NULL;
  if (st != LOOM_OK)
    err = heap_printf("%s%s", "cannot run a child process: ", d.msg ? d.msg : "");
  else if (child.kind != LOOM_RUNTIME_CHILD_OK)
    err = heap_printf("%s%s", "the kernel failed: ",
                      loom_runtime_child_describe(&child, buf, sizeof buf));
  else if (r->rep->kernel_rc) {
    snprintf(buf, sizeof buf, "%d (%s)", r->rep->kernel_rc, rc_meaning(r->rep->kernel_rc));
    err = heap_printf("%s%s", "the kernel returned ", buf);
  } else if (!r->rep->is_timed)
    err = heap_printf("%s%s", "timing failed: ", r->rep->message);
  loom_diag_free(&d);
  if (!err)
    m->timing = r->rep->timing;
  return err;
}

/* Inputs (seeded as `loom interp` seeds them) and the shared arrays. */
static loom_status setup(runner *r, loom_diag *d) {
  const loom_func *f = r->f;
  int n = f->n_params ? f->n_params : 1;
  r->inputs = calloc((size_t)n, sizeof *r->inputs);
  r->arrays = calloc((size_t)n, sizeof *r->arrays);
  r->args = calloc((size_t)n, sizeof *r->args);
  r->timed_args = calloc((size_t)n, sizeof *r->timed_args);
  r->shapes = calloc((size_t)n, sizeof *r->shapes);
  r->fscalars = calloc((size_t)n, sizeof *r->fscalars);
  r->rep = loom_runtime_shared_alloc(sizeof *r->rep);
  if (!r->inputs || !r->arrays || !r->args || !r->timed_args || !r->shapes ||
      !r->fscalars || !r->rep)
    return LOOM_NOMEM;
  TRY(loom_interp_alloc_args(f, r->o->scalars, r->inputs, d));
  loom_rng rng;
  loom_rng_seed(&rng, r->o->seed);
  for (int i = 0; i < f->n_params; i++) {
    if (!r->inputs[i]) {
      bool is_float = loom_dtype_is_float(f->params[i].var->dtype);
      r->fscalars[i] = r->o->scalars ? (double)r->o->scalars[i] : 0;
      r->args[i] = is_float ? (void *)&r->fscalars[i] : (void *)&r->o->scalars[i];
      continue;
    }
    loom_interp_array *in = r->inputs[i];
    loom_interp_fill_random(in, &rng);
    r->arrays[i] = loom_runtime_array_new(in->dtype, in->shape, in->ndim, LOOM_RUNTIME_SHARED);
    if (!r->arrays[i])
      return loom_diag_error(d, f->loc, "cannot allocate '%s'", f->params[i].buffer->name);
    r->args[i] = r->arrays[i]->data;
    r->shapes[i] = r->arrays[i]->shape;
  }
  if (r->o->fill_hook)
    r->o->fill_hook(r->o->fill_ctx, f, r->inputs);
  return LOOM_OK;
}

/* The interpreter's results, computed once, when the first candidate has
 * run: a workload whose kernels all crash or hang is never interpreted
 * (its interpretation might hang too). */
static loom_status expect(runner *r, loom_diag *d) {
  const loom_func *f = r->f;
  if (r->expect)
    return LOOM_OK;
  if (!(r->expect = calloc((size_t)(f->n_params ? f->n_params : 1), sizeof *r->expect)))
    return LOOM_NOMEM;
  TRY(loom_interp_alloc_args(f, r->o->scalars, r->expect, d));
  for (int i = 0; i < f->n_params; i++)
    if (r->expect[i])
      memcpy(r->expect[i]->data, r->inputs[i]->data, r->arrays[i]->n_bytes);
  return loom_interp_run(f, r->expect, r->o->scalars, d);
}

static void teardown(runner *r) {
  const loom_func *f = r->f;
  if (r->inputs)
    loom_interp_free_args(f, r->inputs);
  if (r->expect)
    loom_interp_free_args(f, r->expect);
  for (int i = 0; r->arrays && i < f->n_params; i++)
    loom_runtime_array_free(r->arrays[i]);
  free(r->inputs);
  free(r->expect);
  free(r->arrays);
  free(r->args);
  free(r->timed_args);
  free(r->shapes);
  free(r->fscalars);
  if (r->rep)
    loom_runtime_shared_free(r->rep, sizeof *r->rep);
}

struct loom_tune_runner {
  runner r;
  loom_runner_options o;
};

loom_status loom_tune_runner_new(const loom_func *workload,
                                 const loom_runner_options *o,
                                 LOOM_GIVE loom_tune_runner **out, loom_diag *d) {
  loom_tune_runner *tr = calloc(1, sizeof *tr);
  if (!tr)
    return LOOM_NOMEM;
  if (o)
    tr->o = *o;
  tr->r.f = workload;
  tr->r.o = &tr->o;
  loom_status st = setup(&tr->r, d);
  if (st != LOOM_OK) {
    loom_tune_runner_free(tr);
    return st;
  }
  *out = tr;
  return LOOM_OK;
}

void loom_tune_runner_free(LOOM_TAKE loom_tune_runner *tr) {
  if (!tr)
    return;
  teardown(&tr->r);
  free(tr);
}

void loom_tune_runner_set_timeout(loom_tune_runner *tr, double timeout_ms) {
  tr->o.timeout_ms = timeout_ms;
}

void loom_tune_runner_set_best(loom_tune_runner *tr, double best_ms) {
  tr->o.best_ms = best_ms;
}

loom_status loom_tune_runner_run(loom_tune_runner *tr, const loom_kernel *kernels,
                                 int n, loom_measured *out, loom_diag *d) {
  runner *r = &tr->r;
  loom_status st = LOOM_OK;
  memset(out, 0, (size_t)n * sizeof *out);
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    r->kernel = kernels[i];
    out[i].error = kernels[i] ? measure(r, &out[i]) : strdup("not built");
    if (!out[i].error && r->o->check && (st = expect(r, d)) == LOOM_OK)
      out[i].error = check(r);
  }
  return st;
}

loom_status loom_tune_run(const loom_func *workload, const loom_kernel *kernels,
                          int n, const loom_runner_options *o,
                          loom_measured *out, loom_diag *d) {
  loom_tune_runner *tr;
  memset(out, 0, (size_t)n * sizeof *out);
  TRY(loom_tune_runner_new(workload, o, &tr, d));
  loom_status st = loom_tune_runner_run(tr, kernels, n, out, d);
  loom_tune_runner_free(tr);
  return st;
}

void loom_tune_measured_free(loom_measured *m, int n) {
  for (int i = 0; m && i < n; i++) {
    free(m[i].error);
    m[i].error = NULL;
  }
}
