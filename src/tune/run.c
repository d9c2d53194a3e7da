/* The C backend's runner: one set of seeded inputs per workload, one child
 * process per candidate. The child calls the kernel once on the shared arrays the parent
 * checks, then times it on private copies of the inputs, so a kernel that
 * updates in place is checked after exactly one call. */
#define _GNU_SOURCE /* dladdr */
#include "loom/codegen.h"
#include "loom/interp.h"
#include "tune/tune_impl.h"

#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A first call is never stopped before this long: starting the thread
 * pool or faulting in code must not make a fast kernel pass for a slow
 * one. */
#define MIN_STOP_MS 5
/* A long first call this close to the best is timed again (below). */
#define CONTENDER_RATIO 1.2

double loom_tune_tolerance(loom_dtype t) {
  if (t.code == LOOM_DT_BFLOAT)
    return 2e-2;
  return t.bits == 16 ? 1e-2 : t.bits == 64 ? 1e-9 : 1e-4;
}

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* A measurement of one call of ms. */
static void one_call(loom_runtime_timing *t, double ms) {
  t->median_ms = t->mean_ms = t->min_ms = t->max_ms = ms;
  t->stddev_ms = 0;
  t->repeat = t->number = 1;
}

/* When a first call is out of the running: stop_ratio times the best, and
 * never before MIN_STOP_MS. */
static double stop_time(const tune_runner_state *r) {
  double ratio = r->o->stop_ratio > 0 ? r->o->stop_ratio : 3;
  double ms = ratio * r->o->best_ms;
  return ms > MIN_STOP_MS ? ms : MIN_STOP_MS;
}

bool tune_runner_first_call(tune_runner_state *r, double first_ms, int *repeat) {
  /* A call this slow is its own measurement: repeating it would cost the
   * search seconds to rank a candidate that is out of the running anyway.
   * One within CONTENDER_RATIO of the best is still timed as usual: a
   * single cold call on a busy host can be 10-30% off either way, and
   * the best few steer the search and are the finalists. */
  double best = r->o->best_ms;
  double long_ms = r->o->long_call_ms > 0 ? r->o->long_call_ms : 100;
  bool is_loser = best > 0 && first_ms >= stop_time(r);
  bool is_contender = best > 0 && first_ms < CONTENDER_RATIO * best;
  if ((first_ms >= long_ms && !is_contender) || is_loser) {
    one_call(&r->rep->timing, first_ms);
    r->rep->is_timed = true;
    return true;
  }
  *repeat = r->o->repeat > 0 ? r->o->repeat : 3;
  if (best > 0 && first_ms >= 2 * best)
    *repeat = 1;
  return false;
}

/* The child's report, for its stop handler: a signal handler has no
 * context argument, and the child is a process of its own, so this is the
 * one piece of file state, set only in children. */
static tune_report *child_report;

/* Runs in the child when its first call reaches the stop time: the time
 * it ran is its measurement, and the child ends at once (every call here
 * is async-signal-safe). */
static void on_stop(int sig) {
  (void)sig;
  tune_report *rep = child_report;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  one_call(&rep->timing, ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6 - rep->first_t0_ms);
  rep->is_stopped = true;
  rep->is_timed = true;
  _exit(0);
}

/* Arms a one-shot timer that stops the child after ms; false when it
 * cannot (the call then runs to its end or to the runner's time limit). */
static bool arm_stop(double ms, timer_t *timer) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = SIGALRM;
  if (sigaction(SIGALRM, &sa, NULL) != 0 || timer_create(CLOCK_MONOTONIC, &ev, timer) != 0)
    return false;
  struct itimerspec it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_sec = (time_t)(ms / 1e3);
  it.it_value.tv_nsec = (long)((ms - it.it_value.tv_sec * 1e3) * 1e6);
  if (it.it_value.tv_sec == 0 && it.it_value.tv_nsec == 0)
    it.it_value.tv_nsec = 1;
  if (timer_settime(*timer, 0, &it, NULL) != 0) {
    timer_delete(*timer);
    return false;
  }
  return true;
}

static int timed_call(void *ctx) {
  tune_runner_state *r = ctx;
  return ((loom_c_kernel)r->kernel)(r->timed_args, r->shapes) ? 1 : 0;
}

typedef void (*threads_fn)(int);
typedef void (*warm_fn)(void);

/* A function the C backend defines in every file it makes
 * (loom_set_num_threads, loom_warm_threads), from the library the kernel
 * lives in. NULL when it cannot be found. */
static void *library_symbol(loom_kernel k, const char *name) {
  Dl_info info;
  if (!dladdr((void *)k, &info) || !info.dli_fname)
    return NULL;
  void *lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!lib)
    return NULL;
  void *p = dlsym(lib, name);
  dlclose(lib); /* the reference RTLD_NOLOAD took; the kernel's stays */
  return p;
}

static int child_main(void *ctx) {
  tune_runner_state *r = ctx;
  const loom_func *f = r->f;
  /* The kernel runs at the thread count it is measured for, in tuning as
   * in `loom run`. */
  if (r->o->threads > 0) {
    threads_fn set = r->o->set_threads
                         ? r->o->set_threads
                         : (threads_fn)library_symbol(r->kernel, "loom_set_num_threads");
    if (set)
      set(r->o->threads);
  }
  /* Then the threads are started and placed before the first call, which
   * decides whether the candidate is stopped: started there, they could
   * add milliseconds to a kernel of microseconds. */
  warm_fn warm = (warm_fn)library_symbol(r->kernel, "loom_warm_threads");
  if (warm)
    warm();
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
  /* A candidate whose first call reaches stop_ratio times the best is out
   * of the running: it is stopped there, and the time it ran is its
   * measurement, instead of costing the search the rest of a slow call. */
  double best = r->o->best_ms, stop_ms = stop_time(r);
  timer_t timer;
  child_report = r->rep;
  /* (A stop past a day is no stop: the time limit comes first.) */
  bool is_armed = best > 0 && stop_ms < 864e5 && !r->o->no_stop && arm_stop(stop_ms, &timer);
  r->rep->first_t0_ms = mono_ms();
  r->rep->kernel_rc = ((loom_c_kernel)r->kernel)(r->args, r->shapes);
  double first_ms = mono_ms() - r->rep->first_t0_ms;
  if (is_armed)
    timer_delete(timer);
  if (r->rep->kernel_rc)
    return 0;
  loom_runtime_timer_config cfg = loom_runtime_timer_default();
  cfg.warmup = 0; /* the checked call warmed up */
  if (tune_runner_first_call(r, first_ms, &cfg.repeat))
    return 0;
  cfg.min_repeat_ms = r->o->min_repeat_ms > 0 ? r->o->min_repeat_ms : 2;
  /* A first call that lasted the minimum time needs no calibration run:
   * one call per measurement is enough, and timing it again to learn so
   * would cost a call of the kernel for nothing. */
  if (first_ms >= cfg.min_repeat_ms)
    cfg.number = 1;
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

/* The largest finite magnitude among a's elements; 0 for integers. */
static double largest(const loom_interp_array *a) {
  double most = 0;
  for (int64_t i = 0; loom_dtype_is_float(a->dtype) && i < a->n_elems; i++) {
    double x = fabs(loom_interp_array_get(a, i));
    if (isfinite(x) && x > most)
      most = x;
  }
  return most;
}

/* Each element within the dtype's tolerance of the interpreter's, relative
 * to itself and to the largest element of the array: an output of small
 * values (softmax) is held to its own scale, and an element that cancels
 * to near zero is not held to more digits than its neighbours have. */
char *tune_runner_check(tune_runner_state *r) {
  for (int i = 0; i < r->f->n_params; i++) {
    if (!r->arrays[i])
      continue;
    loom_interp_array got = loom_runtime_array_view(r->arrays[i]);
    double tol = loom_tune_tolerance(got.dtype);
    char *why = NULL;
    if (!loom_interp_compare(&got, r->expect[i], tol, tol * r->largest[i], &why)) {
      char *e = heap_printf(r->is_expect_measured
                                ? "wrong result: %s differs from the first kernel measured %s"
                                : "wrong result: %s differs from the interpreter %s",
                            r->f->params[i].buffer->name, why ? why : "");
      free(why);
      return e;
    }
  }
  return NULL;
}

static char *measure(tune_runner_state *r, loom_measured *m) {
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
    snprintf(buf, sizeof buf, "%d (%s)", r->rep->kernel_rc,
             loom_codegen_rc_str(r->rep->kernel_rc));
    err = heap_printf("%s%s", "the kernel returned ", buf);
  } else if (!r->rep->is_timed)
    err = heap_printf("%s%s", "timing failed: ", r->rep->message);
  loom_diag_free(&d);
  if (!err) {
    m->timing = r->rep->timing;
    m->is_stopped = r->rep->is_stopped;
  }
  return err;
}

/* Inputs (seeded as `loom interp` seeds them) and the shared arrays. */
loom_status tune_runner_setup(tune_runner_state *r, loom_diag *d) {
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
/* The expected results, made once: the interpreter run on a copy of the
 * inputs, or (from_kernel) a copy of what the kernel just measured left in
 * the arrays; then each parameter's largest magnitude. */
static loom_status make_expect(tune_runner_state *r, bool from_kernel, loom_diag *d) {
  const loom_func *f = r->f;
  if (r->largest)
    return LOOM_OK;
  if (!from_kernel && r->expect) /* an earlier try failed, and said why */
    return loom_diag_error(d, (loom_loc){0}, "the interpreter could not run %s",
                           f->name);
  size_t n = (size_t)(f->n_params ? f->n_params : 1);
  if (!r->expect && !(r->expect = calloc(n, sizeof *r->expect)))
    return LOOM_NOMEM;
  TRY(loom_interp_alloc_args(f, r->o->scalars, r->expect, d));
  for (int i = 0; i < f->n_params; i++)
    if (r->expect[i])
      memcpy(r->expect[i]->data, from_kernel ? r->arrays[i]->data : r->inputs[i]->data,
             r->arrays[i]->n_bytes);
  if (!from_kernel)
    TRY(loom_interp_run(f, r->expect, r->o->scalars, d));
  if (!(r->largest = calloc(n, sizeof *r->largest)))
    return LOOM_NOMEM;
  for (int i = 0; i < f->n_params; i++)
    if (r->expect[i])
      r->largest[i] = largest(r->expect[i]);
  r->is_expect_measured = from_kernel;
  return LOOM_OK;
}

loom_status tune_runner_expect(tune_runner_state *r, loom_diag *d) {
  return make_expect(r, false, d);
}

loom_status tune_runner_expect_measured(tune_runner_state *r, loom_diag *d) {
  return make_expect(r, true, d);
}

/* The interpreter runs some 10^7 operations a second. */
#define INTERP_MAX_OPS 1e8

bool tune_runner_is_too_slow(const loom_func *f) {
  return loom_tune_flops(f) > INTERP_MAX_OPS;
}

void tune_runner_teardown(tune_runner_state *r) {
  const loom_func *f = r->f;
  if (r->inputs)
    loom_interp_free_args(f, r->inputs);
  if (r->expect)
    loom_interp_free_args(f, r->expect);
  for (int i = 0; r->arrays && i < f->n_params; i++)
    loom_runtime_array_free(r->arrays[i]);
  free(r->inputs);
  free(r->expect);
  free(r->largest);
  free(r->arrays);
  free(r->args);
  free(r->timed_args);
  free(r->shapes);
  free(r->fscalars);
  if (r->rep)
    loom_runtime_shared_free(r->rep, sizeof *r->rep);
}

/* The C backend's runner: o is the caller's, read at each run. */
loom_status tune_c_runner_new(const loom_func *workload,
                              const loom_runner_options *o, void **out,
                              loom_diag *d) {
  tune_runner_state *r = calloc(1, sizeof *r);
  if (!r)
    return LOOM_NOMEM;
  r->f = workload;
  r->o = o;
  loom_status st = tune_runner_setup(r, d);
  if (st != LOOM_OK) {
    tune_c_runner_free(r);
    return st;
  }
  *out = r;
  return LOOM_OK;
}

void tune_c_runner_free(void *p) {
  tune_runner_state *r = p;
  if (!r)
    return;
  tune_runner_teardown(r);
  free(r);
}

loom_status tune_c_runner_run(void *p, const loom_kernel *kernels, int n,
                              loom_measured *out, loom_diag *d) {
  tune_runner_state *r = p;
  loom_status st = LOOM_OK;
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    r->kernel = kernels[i];
    out[i].error = kernels[i] ? measure(r, &out[i]) : strdup("not built");
    if (!out[i].error && !out[i].is_stopped && r->o->check && (st = tune_runner_expect(r, d)) == LOOM_OK)
      out[i].error = tune_runner_check(r);
  }
  return st;
}

void loom_tune_measured_free(loom_measured *m, int n) {
  for (int i = 0; m && i < n; i++) {
    free(m[i].error);
    m[i].error = NULL;
  }
}
