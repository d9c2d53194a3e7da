/* The CUDA backend's builder, runner and check (the cuda row of
 * src/tune/backend.c). Building lowers a function for the
 * GPU (after dlight's schedule when it binds no threads), prints its
 * CUDA C and compiles it with NVRTC for the target's architecture; none of
 * it needs a GPU. Running happens in a child process, as on the CPU: the
 * child opens the driver, copies the seeded inputs to the device, runs the
 * host statements once (launching the kernels), copies every buffer back
 * into the arrays the parent checks, then times the host statements with
 * CUDA events. A kernel that faults or hangs takes only the child down. */
#include "loom/codegen.h"
#include "tune/tune_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

struct loom_cuda_built {
  loom_arena *arena;
  loom_sched *sched;        /* owns dlight's schedule of the function */
  loom_gpu_func g;
  char *source;             /* heap */
  loom_runtime_cubin cubin;
};

/* f scheduled by dlight when it binds no thread (*sched then holds the
 * schedule), lowered into *g and printed into out. */
static loom_status emit(loom_arena *a, const loom_func *f, const loom_target *t,
                        loom_sched **sched, loom_gpu_func *g, loom_buf *out,
                        loom_diag *d) {
  const loom_func *sf;
  TRY(loom_tune_dlight(a, f, t, NULL, 0, sched, &sf, NULL, NULL, d));
  TRY(loom_lower_gpu(a, sf, t, g, d));
  TRY(loom_codegen_cuda(g, out, d));
  return out->has_failed ? LOOM_NOMEM : LOOM_OK;
}

loom_status loom_tune_cuda_emit(const loom_func *f, const loom_target *t, loom_buf *out,
                                loom_diag *d) {
  loom_arena *a = loom_arena_new();
  if (!a)
    return LOOM_NOMEM;
  loom_sched *s = NULL;
  loom_gpu_func g;
  loom_status st = emit(a, f, t, &s, &g, out, d);
  if (s)
    loom_sched_free(s);
  loom_arena_free(a);
  return st;
}

loom_status loom_tune_cuda_build(const loom_func *f, const loom_target *t,
                                 loom_cuda_built **out, loom_diag *d) {
  *out = NULL;
  loom_cuda_built *b = calloc(1, sizeof *b);
  if (!b || !(b->arena = loom_arena_new())) {
    free(b);
    return LOOM_NOMEM;
  }
  loom_buf src;
  loom_buf_init(&src);
  loom_runtime_nvrtc *nv = NULL;
  loom_status st = emit(b->arena, f, t, &b->sched, &b->g, &src, d);
  if (st == LOOM_OK && !(b->source = strndup(src.data, src.len)))
    st = LOOM_NOMEM;
  if (st == LOOM_OK)
    st = loom_runtime_nvrtc_open(&nv, d);
  if (st == LOOM_OK)
    st = loom_runtime_nvrtc_compile_cached(nv, b->source, f->name, t->gpu.sm, &b->cubin, d);
  loom_runtime_nvrtc_close(nv);
  loom_buf_free(&src);
  if (st != LOOM_OK) {
    loom_tune_cuda_built_free(b);
    return st;
  }
  *out = b;
  return LOOM_OK;
}

const char *loom_tune_cuda_source(const loom_cuda_built *b) { return b->source; }
const loom_runtime_cubin *loom_tune_cuda_cubin(const loom_cuda_built *b) { return &b->cubin; }
const loom_gpu_func *loom_tune_cuda_lowered(const loom_cuda_built *b) { return &b->g; }

void loom_tune_cuda_built_free(loom_cuda_built *b) {
  if (!b)
    return;
  loom_runtime_cubin_free(&b->cubin);
  free(b->source);
  if (b->sched)
    loom_sched_free(b->sched);
  loom_arena_free(b->arena);
  free(b);
}

/* ---- the runner ------------------------------------------------------------------ */

typedef struct cuda_run {
  tune_runner_state r;
  const loom_cuda_built *built;
  loom_cuda_host *H;
} cuda_run;

static loom_status call_host(void *ctx, loom_diag *d) {
  return loom_tune_cuda_host_call(((cuda_run *)ctx)->H, d);
}

static void say(tune_report *rep, const loom_diag *d, const char *fallback) {
  snprintf(rep->message, sizeof rep->message, "%s", d->msg ? d->msg : fallback);
}

static int child_main(void *ctx) {
  cuda_run *c = ctx;
  tune_runner_state *r = &c->r;
  const loom_func *f = loom_tune_cuda_lowered(c->built)->host;
  loom_diag d;
  loom_diag_init(&d);
  uint64_t dev[256] = {0};
  const int64_t *shapes[256] = {0};
  if (f->n_params > 256) {
    snprintf(r->rep->message, sizeof r->rep->message, "more than 256 parameters");
    return 2;
  }
  loom_runtime_cuda *cu = NULL;
  loom_status st = loom_runtime_cuda_open(&cu, &d);
  if (st == LOOM_OK)
    st = loom_tune_cuda_host_new(cu, c->built, NULL, &c->H, &d);
  for (int i = 0; i < f->n_params && st == LOOM_OK; i++)
    if (r->arrays[i] && (st = loom_runtime_cuda_alloc(cu, r->arrays[i]->n_bytes,
                                                      &dev[i], &d)) == LOOM_OK) {
      shapes[i] = r->arrays[i]->shape;
      st = loom_runtime_cuda_upload(cu, dev[i], r->arrays[i]->data, r->arrays[i]->n_bytes, &d);
    }
  if (st == LOOM_OK)
    st = loom_tune_cuda_host_bind(c->H, dev, shapes, r->o->scalars, &d);
  double t0 = now_ms();
  if (st == LOOM_OK)
    st = call_host(c, &d);
  if (st == LOOM_OK)
    st = loom_runtime_cuda_sync(cu, &d);
  double first_ms = now_ms() - t0;
  for (int i = 0; i < f->n_params && st == LOOM_OK; i++)
    if (r->arrays[i])
      st = loom_runtime_cuda_download(cu, r->arrays[i]->data, dev[i], r->arrays[i]->n_bytes, &d);
  if (st != LOOM_OK) {
    say(r->rep, &d, "out of memory");
    return 2;
  }
  /* A kernel cannot be stopped half-way as a CPU call is, but one whose
   * first call is out of the running is not timed again (the CPU's rule). */
  loom_runtime_timer_config cfg = loom_runtime_timer_default();
  if (tune_runner_first_call(r, first_ms, &cfg.repeat))
    return 0;
  cfg.warmup = 1;
  cfg.number = 1;
  cfg.flush_cache = r->o->flush_cache;
  if (loom_runtime_cuda_time(cu, call_host, c, &cfg, &r->rep->timing, &d) == LOOM_OK)
    r->rep->is_timed = true;
  else
    say(r->rep, &d, "timing failed");
  /* The process ends here: its context and memory go with it. */
  return 0;
}

/* Measures c->r.kernel on the shared arrays (reset to the inputs first). */
static char *measure(cuda_run *c) {
  tune_runner_state *r = &c->r;
  for (int i = 0; i < r->f->n_params; i++)
    if (r->arrays[i])
      memcpy(r->arrays[i]->data, r->inputs[i]->data, r->arrays[i]->n_bytes);
  memset(r->rep, 0, sizeof *r->rep);
  loom_runtime_child_result child;
  loom_diag d;
  loom_diag_init(&d);
  double limit = r->o->timeout_ms > 0 ? r->o->timeout_ms : 60000;
  loom_status st = loom_runtime_run_child(child_main, c, limit, &child, &d);
  char buf[512], how[256];
  buf[0] = 0;
  if (st != LOOM_OK)
    snprintf(buf, sizeof buf, "cannot run a child process: %s", d.msg ? d.msg : "?");
  else if (child.kind == LOOM_RUNTIME_CHILD_EXIT && r->rep->message[0])
    snprintf(buf, sizeof buf, "%s", r->rep->message);
  else if (child.kind != LOOM_RUNTIME_CHILD_OK)
    snprintf(buf, sizeof buf, "the kernel failed: %s",
             loom_runtime_child_describe(&child, how, sizeof how));
  else if (!r->rep->is_timed)
    snprintf(buf, sizeof buf, "timing failed: %s", r->rep->message);
  loom_diag_free(&d);
  return buf[0] ? strdup(buf) : NULL;
}

loom_status tune_cuda_runner_new(const loom_func *workload, const loom_runner_options *o,
                                 void **out, loom_diag *d) {
  cuda_run *c = calloc(1, sizeof *c);
  if (!c)
    return LOOM_NOMEM;
  c->r.f = workload;
  c->r.o = o;
  loom_status st = tune_runner_setup(&c->r, d);
  if (st != LOOM_OK) {
    tune_cuda_runner_free(c);
    return st;
  }
  *out = c;
  return LOOM_OK;
}

void tune_cuda_runner_free(void *p) {
  cuda_run *c = p;
  if (!c)
    return;
  tune_runner_teardown(&c->r);
  free(c);
}

loom_status tune_cuda_runner_run(void *p, const loom_kernel *kernels, int n,
                                 loom_measured *out, loom_diag *d) {
  cuda_run *c = p;
  loom_status st = LOOM_OK;
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    if (!kernels[i]) {
      out[i].error = strdup("not built");
      continue;
    }
    c->r.kernel = kernels[i];
    c->built = kernels[i];
    if ((out[i].error = measure(c)))
      continue;
    out[i].timing = c->r.rep->timing;
    if (!c->r.o->check)
      continue;
    st = tune_runner_is_too_slow(c->r.f) ? tune_runner_expect_measured(&c->r, d)
                                         : tune_runner_expect(&c->r, d);
    if (st == LOOM_OK)
      out[i].error = tune_runner_check(&c->r);
  }
  return st;
}

/* ---- the builder and the check ------------------------------------------------------ */

typedef struct build_job {
  const loom_func *const *funcs;
  const loom_target *t;
  loom_build_set *out;
  int next;
  pthread_mutex_t lock;
} build_job;

static void *build_worker(void *arg) {
  build_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    int i = j->next++;
    pthread_mutex_unlock(&j->lock);
    if (i >= j->out->n)
      return NULL;
    loom_built *item = &j->out->items[i];
    loom_cuda_built *b;
    loom_diag d;
    loom_diag_init(&d);
    double t0 = now_ms();
    if (loom_tune_cuda_build(j->funcs[i], j->t, &b, &d) == LOOM_OK) {
      item->kernel = b;
      item->registers = b->cubin.max_registers;
      item->spill_bytes = b->cubin.spill_bytes;
    } else {
      item->error = strdup(d.msg ? d.msg : "out of memory");
    }
    item->compile_ms = now_ms() - t0;
    loom_diag_free(&d);
  }
}

loom_status tune_cuda_build(const loom_func *const *funcs, int n,
                            const loom_builder_options *o, loom_build_set *out) {
  memset(out, 0, sizeof *out);
  if (!(out->items = calloc((size_t)(n ? n : 1), sizeof *out->items)))
    return LOOM_NOMEM;
  out->n = n;
  double t0 = now_ms();
  build_job j = {.funcs = funcs, .t = o->target, .out = out};
  pthread_mutex_init(&j.lock, NULL);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = o->jobs > 0 ? o->jobs : cpus > 0 ? (int)cpus : 1;
  if (jobs > n)
    jobs = n;
  if (jobs > 64)
    jobs = 64;
  pthread_t tids[64];
  int started = 0;
  while (started < jobs - 1 && pthread_create(&tids[started], NULL, build_worker, &j) == 0)
    started++;
  build_worker(&j);
  for (int i = 0; i < started; i++)
    pthread_join(tids[i], NULL);
  pthread_mutex_destroy(&j.lock);
  out->wall_ms = now_ms() - t0;
  return LOOM_OK;
}

void tune_cuda_build_free(loom_build_set *b) {
  for (int i = 0; b->items && i < b->n; i++) {
    loom_tune_cuda_built_free((loom_cuda_built *)b->items[i].kernel);
    free(b->items[i].error);
  }
  free(b->items);
}

/* What the CUDA backend cannot express: the lowering's refusals (past the
 * target's limits) and the printer's. */
loom_status tune_cuda_check(const loom_target *t, const loom_module *m, loom_diag *d) {
  loom_status st = LOOM_OK;
  for (int i = 0; i < m->n_funcs && st == LOOM_OK; i++) {
    loom_buf c;
    loom_buf_init(&c);
    st = loom_tune_cuda_emit(m->funcs[i], t, &c, d);
    loom_buf_free(&c);
  }
  return st;
}
