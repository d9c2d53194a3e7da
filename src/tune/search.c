/* The search loop of one task: propose candidates from the space (fresh
 * samples, or mutations of the best measured ones), rank them, build and
 * measure a batch, record every measurement, keep the best, repeat until
 * the trials are spent or the space yields nothing new. */
#include "loom/db.h"
#include "loom/schedule.h"
#include "loom/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct parent {
  loom_sched *s;
  double ms;
} parent;

typedef struct cand {
  loom_sched *s;
  uint64_t hash;
  double score;
  float *rows;    /* the cost model's features; heap */
  int n_rows;
} cand;

typedef struct search {
  const loom_task *task;
  const loom_tune_options *o;
  const char *space, *file;
  size_t len;
  loom_module *mod;        /* the task's function alone, named main */
  loom_sched *base;        /* the space run once: its trace is the template */
  loom_rng rng;
  uint64_t *seen;          /* hashes of candidates proposed so far */
  int n_seen, cap_seen;
  parent *parents;         /* the best measured, fastest first */
  int n_parents;
  loom_tune_runner *runner;
  loom_db *db;
  int64_t workload;
  loom_tune_result *res;
  loom_sched *best;
  double t0;
  int cores;
} search;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool was_seen(const search *S, uint64_t h) {
  for (int i = 0; i < S->n_seen; i++)
    if (S->seen[i] == h)
      return true;
  return false;
}

static bool mark_seen(search *S, uint64_t h) {
  if (S->n_seen == S->cap_seen) {
    int cap = S->cap_seen ? 2 * S->cap_seen : 256;
    uint64_t *p = realloc(S->seen, (size_t)cap * sizeof *p);
    if (!p)
      return false;
    S->seen = p;
    S->cap_seen = cap;
  }
  S->seen[S->n_seen++] = h;
  return true;
}

static uint64_t cand_hash(loom_sched *s) {
  return loom_ir_hash_func(loom_sched_module(s)->funcs[0]);
}

/* A fresh sample of the space; NULL when this draw is illegal. */
static loom_sched *sample(search *S) {
  loom_sched *s = loom_sched_new(S->mod, loom_rng_next(&S->rng));
  if (!s)
    return NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st;
  if (S->o->strategy == LOOM_SEARCH_REPLAY_FUNC) {
    st = loom_sched_run_script(s, S->space, S->len, S->file, &d);
  } else {
    loom_trace t = loom_sched_trace(S->base);
    st = loom_trace_apply(&t, s, false, &d);
  }
  loom_diag_free(&d);
  if (st != LOOM_OK) {
    loom_sched_free(s);
    return NULL;
  }
  return s;
}

/* The parent's trace with one sampled decision drawn again. */
static loom_sched *mutate(search *S, const parent *p) {
  loom_trace t = loom_sched_trace(p->s);
  int n_decided = 0;
  for (int i = 0; i < t.n_insts; i++)
    n_decided += t.insts[i]->decision.kind != LOOM_TV_NONE;
  if (n_decided == 0)
    return sample(S);
  int pick = (int)loom_rng_below(&S->rng, (uint64_t)n_decided);
  loom_inst **insts = malloc((size_t)t.n_insts * sizeof *insts);
  loom_inst changed;
  if (!insts)
    return NULL;
  for (int i = 0, k = 0; i < t.n_insts; i++) {
    insts[i] = t.insts[i];
    if (t.insts[i]->decision.kind != LOOM_TV_NONE && k++ == pick) {
      changed = *t.insts[i];
      changed.decision = loom_tval_none();
      insts[i] = &changed;
    }
  }
  loom_trace mt = {insts, t.n_insts, t.n_rvs};
  loom_sched *s = loom_sched_new(S->mod, loom_rng_next(&S->rng));
  loom_diag d;
  loom_diag_init(&d);
  if (s && loom_trace_apply(&mt, s, true, &d) != LOOM_OK) {
    loom_sched_free(s);
    s = NULL;
  }
  loom_diag_free(&d);
  free(insts);
  return s;
}

/* Of two random parents, the faster (tournament selection). */
static const parent *pick_parent(search *S) {
  const parent *a = &S->parents[loom_rng_below(&S->rng, (uint64_t)S->n_parents)];
  const parent *b = &S->parents[loom_rng_below(&S->rng, (uint64_t)S->n_parents)];
  return a->ms <= b->ms ? a : b;
}

static void free_cand(cand *c) {
  loom_sched_free(c->s);
  free(c->rows);
  c->s = NULL;
  c->rows = NULL;
}

/* Scores the pool with the cost model; a candidate whose features cannot
 * be had ranks last. Without a model the random scores stand. */
static void rank(search *S, cand *pool, int n) {
  if (!S->o->model || n == 0)
    return;
  loom_model_input *in = calloc((size_t)n, sizeof *in);
  double *scores = calloc((size_t)n, sizeof *scores);
  for (int i = 0; in && scores && i < n; i++) {
    loom_diag d;
    loom_diag_init(&d);
    if (loom_model_features(loom_sched_module(pool[i].s)->funcs[0], S->cores,
                            &pool[i].rows, &pool[i].n_rows, &d) != LOOM_OK) {
      pool[i].rows = NULL;
      pool[i].n_rows = 0;
    }
    loom_diag_free(&d);
    in[i] = (loom_model_input){pool[i].rows, pool[i].n_rows};
  }
  loom_diag d;
  loom_diag_init(&d);
  if (in && scores && loom_model_predict(S->o->model, in, n, scores, &d) == LOOM_OK)
    for (int i = 0; i < n; i++)
      pool[i].score = pool[i].rows ? scores[i] : -INFINITY;
  loom_diag_free(&d);
  free(in);
  free(scores);
}

/* Teaches the model a measured batch (failures get the worst label). */
static void learn(search *S, const cand *cands, const loom_measured *m, int n) {
  if (!S->o->model || n == 0)
    return;
  loom_model_input *in = calloc((size_t)n, sizeof *in);
  double *lat = calloc((size_t)n, sizeof *lat);
  int k = 0;
  for (int i = 0; in && lat && i < n; i++) {
    if (!cands[i].rows)
      continue;
    in[k] = (loom_model_input){cands[i].rows, cands[i].n_rows};
    lat[k++] = m[i].error ? NAN : m[i].timing.median_ms;
  }
  loom_diag d;
  loom_diag_init(&d);
  if (k > 0)
    loom_model_update(S->o->model, S->task->hash, in, lat, k, &d);
  loom_diag_free(&d);
  free(in);
  free(lat);
}

static int by_score(const void *x, const void *y) {
  double a = ((const cand *)x)->score, b = ((const cand *)y)->score;
  return a > b ? -1 : a < b;
}

/* Up to want new candidates, best ranked first. */
static int propose(search *S, cand *out, int want) {
  bool is_evo = S->o->strategy == LOOM_SEARCH_EVOLUTIONARY && S->n_parents > 0;
  int pool_size = is_evo ? 4 * want : want, n = 0;
  cand *pool = calloc((size_t)pool_size, sizeof *pool);
  if (!pool)
    return 0;
  for (int attempt = 0; n < pool_size && attempt < 8 * pool_size; attempt++) {
    bool is_fresh = !is_evo || loom_rng_double(&S->rng) < 0.2;
    loom_sched *s = is_fresh ? sample(S) : mutate(S, pick_parent(S));
    if (!s)
      continue;
    uint64_t h = cand_hash(s);
    bool is_dup = was_seen(S, h);
    for (int i = 0; i < n && !is_dup; i++)
      is_dup = pool[i].hash == h;
    if (is_dup) {
      loom_sched_free(s);
      continue;
    }
    pool[n++] = (cand){s, h, loom_rng_double(&S->rng), NULL, 0};
  }
  rank(S, pool, n);
  qsort(pool, (size_t)n, sizeof *pool, by_score);
  /* The best by score, and a few random picks from the rest (epsilon
   * greedy) so a poor model cannot starve the search. */
  double eps = S->o->eps_greedy > 0 ? S->o->eps_greedy : 0.05;
  int n_random = is_evo ? (int)ceil(eps * want) : 0;
  int k = 0;
  for (; k < want - n_random && k < n; k++)
    out[k] = pool[k];
  for (int i = k; i < n; i++) {
    int left = n - i, need = want - k;
    if (need > 0 && loom_rng_below(&S->rng, (uint64_t)left) < (uint64_t)need)
      out[k++] = pool[i];
    else
      free_cand(&pool[i]);
  }
  free(pool);
  /* Only what is measured counts as seen: the rest may be drawn again. */
  for (int i = 0; i < k; i++)
    if (!mark_seen(S, out[i].hash)) {
      for (int j = i; j < k; j++)
        free_cand(&out[j]);
      return i;
    }
  return k;
}

/* Keeps s among the parents when it is one of the fastest. Takes s. */
static void add_parent(search *S, loom_sched *s, double ms) {
  int cap = S->o->population > 0 ? S->o->population : 32;
  int i = S->n_parents;
  while (i > 0 && S->parents[i - 1].ms > ms)
    i--;
  if (i >= cap) {
    loom_sched_free(s);
    return;
  }
  if (S->n_parents == cap)
    loom_sched_free(S->parents[--S->n_parents].s);
  memmove(&S->parents[i + 1], &S->parents[i], (size_t)(S->n_parents - i) * sizeof *S->parents);
  S->parents[i] = (parent){s, ms};
  S->n_parents++;
}

static loom_status record(search *S, loom_sched *s, const loom_measured *m,
                          loom_diag *d) {
  if (!S->db)
    return LOOM_OK;
  loom_buf json;
  loom_buf_init(&json);
  loom_trace t = loom_sched_trace(s);
  loom_trace_print_json(&t, LOOM_DIALECT_TIR, &json);
  if (json.has_failed)
    return LOOM_NOMEM;
  double ms = m->timing.median_ms;
  loom_db_record r = {.workload = S->workload,
                      .target = S->o->target ? S->o->target : "cpu",
                      .trace = json.data ? json.data : "[[], []]",
                      .latencies_ms = &ms, .n_latencies = m->error ? 0 : 1,
                      .error = m->error};
  loom_status st = loom_db_commit_records(S->db, &r, 1, d);
  loom_buf_free(&json);
  return st;
}

/* Builds and measures cands[0..n); records them; keeps the good ones as
 * parents and frees the rest. */
static loom_status measure(search *S, cand *cands, int n, loom_diag *d) {
  const loom_func **funcs = calloc((size_t)n, sizeof *funcs);
  loom_kernel *kernels = calloc((size_t)n, sizeof *kernels);
  loom_measured *m = calloc((size_t)n, sizeof *m);
  loom_build_set b = {0};
  loom_status st = funcs && kernels && m ? LOOM_OK : LOOM_NOMEM;
  for (int i = 0; i < n && st == LOOM_OK; i++)
    funcs[i] = loom_sched_module(cands[i].s)->funcs[0];
  double t0 = now_s();
  if (st == LOOM_OK)
    st = loom_tune_build(funcs, n, &S->o->builder, &b);
  double t1 = now_s();
  for (int i = 0; i < n && st == LOOM_OK; i++)
    kernels[i] = b.items[i].kernel;
  if (st == LOOM_OK)
    st = loom_tune_runner_run(S->runner, kernels, n, m, d);
  S->res->build_s += t1 - t0;
  S->res->run_s += now_s() - t1;
  if (st == LOOM_OK)
    learn(S, cands, m, n);
  for (int i = 0; i < n; i++) {
    if (st == LOOM_OK && !kernels[i] && b.items[i].error) {
      free(m[i].error);
      m[i].error = strdup(b.items[i].error);
    }
    if (st == LOOM_OK)
      st = record(S, cands[i].s, &m[i], d);
    S->res->trials++;
    free(cands[i].rows);
    cands[i].rows = NULL;
    if (st != LOOM_OK || m[i].error) {
      S->res->failures += st == LOOM_OK;
      loom_sched_free(cands[i].s);
      continue;
    }
    double ms = m[i].timing.median_ms;
    if (!S->best || ms < S->res->best_ms) {
      S->res->best_ms = ms;
      loom_sched_free(S->best);
      S->best = loom_sched_copy(cands[i].s);
    }
    add_parent(S, cands[i].s, ms);
  }
  loom_tune_measured_free(m, n);
  loom_tune_build_free(&b);
  free(funcs);
  free(kernels);
  free(m);
  return st;
}

/* The unscheduled function, measured once: the speedup's denominator, and
 * the first run of the interpreter's check. */
static loom_status baseline(search *S, loom_diag *d) {
  const loom_func *f = S->mod->funcs[0];
  loom_build_set b;
  loom_measured m;
  TRY(loom_tune_build(&f, 1, &S->o->builder, &b));
  /* The unscheduled function is often far slower than the candidates the
   * limit is set for; it gets ten minutes. */
  double limit = S->o->runner.timeout_ms > 0 ? S->o->runner.timeout_ms : 10000;
  loom_tune_runner_set_timeout(S->runner, limit > 600000 ? limit : 600000);
  loom_status st = loom_tune_runner_run(S->runner, &b.items[0].kernel, 1, &m, d);
  loom_tune_runner_set_timeout(S->runner, limit);
  if (st == LOOM_OK && !m.error)
    S->res->baseline_ms = m.timing.median_ms;
  loom_tune_measured_free(&m, 1);
  loom_tune_build_free(&b);
  return st;
}

/* The best records of the database, replayed, as the first parents. */
static void seed_parents(search *S) {
  loom_db_records top;
  loom_diag d;
  loom_diag_init(&d);
  int cap = S->o->population > 0 ? S->o->population : 32;
  if (!S->db || loom_db_top_k(S->db, S->workload, S->o->target, cap, &top, &d) != LOOM_OK) {
    loom_diag_free(&d);
    return;
  }
  for (int i = 0; i < top.n; i++) {
    loom_arena *a = loom_arena_new();
    loom_trace t;
    loom_sched *s = loom_sched_new(S->mod, loom_rng_next(&S->rng));
    const char *j = top.items[i].trace;
    if (a && s && loom_trace_read_json(j, strlen(j), "database", a, &t, &d) == LOOM_OK &&
        loom_trace_apply(&t, s, true, &d) == LOOM_OK && mark_seen(S, cand_hash(s))) {
      double ms = top.items[i].n_latencies ? top.items[i].latencies_ms[0] : INFINITY;
      if (!S->best || ms < S->res->best_ms) {
        S->res->best_ms = ms;
        loom_sched_free(S->best);
        S->best = loom_sched_copy(s);
      }
      add_parent(S, s, ms);
      s = NULL;
    }
    loom_sched_free(s);
    loom_arena_free(a);
  }
  loom_db_records_free(&top);
  loom_diag_free(&d);
}

static void report(search *S) {
  if (!S->o->progress)
    return;
  loom_tune_progress p = {S->task->func->name, S->res->trials, S->o->trials,
                          S->res->failures, S->res->best_ms, S->res->baseline_ms,
                          now_s() - S->t0, loom_tune_flops(S->task->func)};
  S->o->progress(S->o->progress_ctx, &p);
}

static loom_status run_search(search *S, loom_diag *d) {
  /* The space run once gives the template trace; a space that does not
   * apply to the task at all is the user's error, reported as such. */
  int population = S->o->population > 0 ? S->o->population : 32;
  if (!(S->base = loom_sched_new(S->mod, S->o->seed)) ||
      !(S->parents = calloc((size_t)population + 1, sizeof *S->parents)))
    return LOOM_NOMEM;
  TRY(loom_sched_run_script(S->base, S->space, S->len, S->file, d));
  if (S->db)
    TRY(loom_db_commit_workload(S->db, S->task->anon, &S->workload, d));
  TRY(loom_tune_runner_new(S->mod->funcs[0], &S->o->runner, &S->runner, d));
  TRY(baseline(S, d));
  if (S->o->strategy == LOOM_SEARCH_EVOLUTIONARY)
    seed_parents(S);
  int batch = S->o->batch > 0 ? S->o->batch : 16;
  cand *cands = calloc((size_t)batch, sizeof *cands);
  if (!cands)
    return LOOM_NOMEM;
  loom_status st = LOOM_OK;
  while (st == LOOM_OK && S->res->trials < S->o->trials) {
    int want = S->o->trials - S->res->trials < batch ? S->o->trials - S->res->trials : batch;
    double t0 = now_s();
    int n = propose(S, cands, want);
    S->res->propose_s += now_s() - t0;
    if (n == 0)
      break; /* the space has nothing new to give */
    st = measure(S, cands, n, d);
    report(S);
  }
  free(cands);
  return st;
}

loom_status loom_tune_task(const loom_task *task, const char *space,
                           size_t space_len, const char *space_file,
                           loom_db *db, const loom_tune_options *o,
                           loom_tune_result *out, loom_diag *d) {
  memset(out, 0, sizeof *out);
  loom_arena *a = loom_arena_new();
  search S = {.task = task, .o = o, .space = space, .len = space_len,
              .file = space_file, .db = db, .res = out, .t0 = now_s()};
  loom_rng_seed(&S.rng, o->seed);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  S.cores = cores > 0 ? (int)cores : 1;
  S.mod = a ? loom_ir_module(a) : NULL;
  loom_func **fs = a ? loom_arena_alloc(a, sizeof *fs) : NULL;
  loom_status st = S.mod && fs ? LOOM_OK : LOOM_NOMEM;
  if (st == LOOM_OK) {
    fs[0] = (loom_func *)task->anon;
    S.mod->funcs = fs;
    S.mod->n_funcs = 1;
    S.mod->is_ir_module = true;
    st = run_search(&S, d);
  }
  if (st == LOOM_OK && S.best) {
    loom_buf b;
    loom_buf_init(&b);
    loom_trace t = loom_sched_trace(S.best);
    loom_trace_print_py(&t, LOOM_DIALECT_TIR, &b);
    out->best_trace = loom_buf_take(&b);
  }
  for (int i = 0; i < S.n_parents; i++)
    loom_sched_free(S.parents[i].s);
  free(S.parents);
  free(S.seen);
  loom_sched_free(S.best);
  loom_sched_free(S.base);
  loom_tune_runner_free(S.runner);
  loom_arena_free(a);
  return st;
}

void loom_tune_result_free(loom_tune_result *r) {
  free(r->best_trace);
  r->best_trace = NULL;
}
