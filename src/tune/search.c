/* The search loop of one task: propose candidates from the design spaces
 * (fresh samples, or mutations of the best measured ones, each
 * postprocessed), rank them, build and measure a batch, record every
 * measurement, keep the best, repeat until the trials are spent or the
 * spaces yield nothing new. */
#include "loom/schedule.h"
#include "tune/tune_impl.h"

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

/* MetaSchedule's evolutionary defaults that fit a small machine: its
 * population of 512 is cut to 128 so that a round of four generations
 * (replay, postprocessing, features, model) stays well under the time of
 * measuring a batch on 2 cores; the other figures are its own. */
#define DEFAULT_POPULATION 128
#define INIT_MEASURED_RATIO 0.2
#define GENETIC_ITERS 4
#define MUTATE_PROB 0.85
#define MUTATE_TRIES 10
#define MAX_REASONS 4
/* Finalists: the fastest few measured within FINALIST_RANGE of the best
 * (the unscheduled function among them), each measured twice more. */
#define FINALISTS 4
#define FINALIST_RANGE 1.5
#define FINALIST_ROUNDS 2

typedef struct search {
  const loom_task *task;
  const loom_tune_options *o;
  const char *space, *file; /* the space's script; NULL: generated spaces */
  size_t len;
  loom_module *mod;        /* the task's function alone, named main */
  loom_sched *base;        /* a script space run once */
  loom_arena *space_arena; /* the spaces' traces */
  loom_trace *spaces;      /* the design spaces: each trace is a template */
  int n_spaces;
  loom_sched **fast;       /* fast tuning's candidates, each taken once */
  int n_fast, next_fast;
  loom_target target;
  char target_key[LOOM_TARGET_KEY_MAX]; /* what records are stored under */
  loom_builder_options builder; /* the caller's, compiling for target */
  loom_buf reasons;        /* the first distinct rejection reasons */
  int n_reasons;
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

/* Counts a candidate dropped before measuring and keeps its reason when
 * it is one of the first few distinct ones. */
static void reject(search *S, const char *why) {
  S->res->rejected++;
  if (!why || S->n_reasons >= MAX_REASONS)
    return;
  size_t n = strlen(why);
  for (const char *p = S->reasons.data; p && *p; p = strchr(p, '\n') + 1)
    if (!strncmp(p, why, n) && p[n] == '\n')
      return;
  loom_buf_printf(&S->reasons, "%s\n", why);
  S->n_reasons++;
}

/* Postprocesses s, or drops it with the reason. Takes s. */
static loom_sched *postprocess(search *S, loom_sched *s) {
  loom_diag d;
  loom_diag_init(&d);
  if (loom_space_postprocess(s, &S->target, &d) != LOOM_OK) {
    reject(S, d.msg ? d.msg : "postprocessing ran out of memory");
    loom_sched_free(s);
    s = NULL;
  }
  loom_diag_free(&d);
  return s;
}

/* Replays t on a fresh schedule and postprocesses it; NULL when the replay
 * or a postprocessor refuses (counted as rejected). */
static loom_sched *replay(search *S, const loom_trace *t, loom_replay_mode mode) {
  loom_sched *s = loom_sched_new(S->mod, loom_rng_next(&S->rng));
  if (!s)
    return NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_trace_apply(t, s, mode, &d);
  if (st != LOOM_OK) {
    reject(S, d.msg ? d.msg : "the replay ran out of memory");
    loom_sched_free(s);
    s = NULL;
  }
  loom_diag_free(&d);
  return s ? postprocess(S, s) : NULL;
}

/* A fresh sample of a design space drawn at random; NULL when this draw is
 * illegal. */
static loom_sched *sample(search *S) {
  if (S->o->strategy == LOOM_SEARCH_REPLAY_FUNC && S->space) {
    loom_sched *s = loom_sched_new(S->mod, loom_rng_next(&S->rng));
    if (!s)
      return NULL;
    loom_diag d;
    loom_diag_init(&d);
    loom_status st = loom_sched_run_script(s, S->space, S->len, S->file, &d);
    if (st != LOOM_OK) {
      reject(S, d.msg);
      loom_sched_free(s);
      s = NULL;
    }
    loom_diag_free(&d);
    return s ? postprocess(S, s) : NULL;
  }
  int k = S->n_spaces > 1 ? (int)loom_rng_below(&S->rng, (uint64_t)S->n_spaces) : 0;
  return replay(S, &S->spaces[k], LOOM_REPLAY_RESAMPLE);
}

/* The parent's trace, stripped of its postprocessing, with one decision
 * changed by a mutator, replayed and postprocessed again; NULL when no
 * mutator applies or the result is rejected. The changed decision may
 * change the loops that later decisions were made for (the extent of a
 * loop a later tile splits, the loops a compute location indexes), so the
 * replay repairs those rather than dropping the child. */
static loom_sched *mutate(search *S, loom_sched *from) {
  loom_trace full = loom_sched_trace(from);
  loom_trace t = loom_space_strip_postproc(&full), mt;
  loom_arena *a = loom_arena_new();
  if (!a)
    return NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_sched *s = NULL;
  if (loom_space_mutate(&t, &S->target, &S->rng, a, &mt, &d) == LOOM_OK)
    s = replay(S, &mt, LOOM_REPLAY_REPAIR);
  loom_diag_free(&d);
  loom_arena_free(a);
  return s;
}

static void free_cand(cand *c) {
  loom_sched_free(c->s);
  free(c->rows);
  c->s = NULL;
  c->rows = NULL;
}

/* Scores the candidates with the cost model (features are computed once
 * per candidate); a candidate whose features cannot be had ranks last.
 * Without a model the random scores they were made with stand. */
static void rank(search *S, cand *pool, int n) {
  if (!S->o->model || n == 0)
    return;
  loom_model_input *in = calloc((size_t)n, sizeof *in);
  double *scores = calloc((size_t)n, sizeof *scores);
  for (int i = 0; in && scores && i < n; i++) {
    if (!pool[i].rows && pool[i].n_rows >= 0) {
      loom_diag d;
      loom_diag_init(&d);
      if (loom_model_features(loom_sched_module(pool[i].s)->funcs[0], S->cores,
                              &pool[i].rows, &pool[i].n_rows, &d) != LOOM_OK) {
        pool[i].rows = NULL;
        pool[i].n_rows = -1; /* tried: none */
      }
      loom_diag_free(&d);
    }
    in[i] = (loom_model_input){pool[i].rows, pool[i].rows ? pool[i].n_rows : 0};
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
    /* A stopped candidate keeps its label, the time it ran: a lower bound
     * of at least stop_ratio times the best, which ranks it among the slow
     * ones where it belongs. Without these labels the model never sees a
     * slow candidate: the 512^3 matmul search fell from 225-263 GFLOP/s to
     * 147-226 in 128 trials. */
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

/* A candidate of s (taken), NULL-safe; its score random until ranked. */
static cand make_cand(search *S, loom_sched *s) {
  return (cand){s, s ? cand_hash(s) : 0, loom_rng_double(&S->rng), NULL, 0};
}

/* A copy of c that shares its IR; its features are copied too. */
static cand copy_cand(search *S, const cand *c) {
  cand k = *c;
  k.s = loom_sched_copy(c->s);
  k.rows = NULL;
  if (c->rows && c->n_rows > 0 && (k.rows = malloc((size_t)c->n_rows * LOOM_MODEL_FEATURE_DIM * sizeof *k.rows)))
    memcpy(k.rows, c->rows, (size_t)c->n_rows * LOOM_MODEL_FEATURE_DIM * sizeof *k.rows);
  else
    k.n_rows = c->n_rows < 0 ? -1 : 0;
  return k;
}

/* The best-scored distinct candidates not yet measured, at most cap,
 * best first: the evolutionary search's picks. */
typedef struct picks {
  cand *items;
  int n, cap;
} picks;

static bool picks_has(const picks *p, uint64_t h) {
  for (int i = 0; i < p->n; i++)
    if (p->items[i].hash == h)
      return true;
  return false;
}

/* Offers a copy of c when it is new and scores high enough. */
static void picks_offer(search *S, picks *p, const cand *c) {
  if (p->cap == 0 || was_seen(S, c->hash) || picks_has(p, c->hash))
    return;
  if (p->n == p->cap && !(c->score > p->items[p->n - 1].score))
    return;
  cand k = copy_cand(S, c);
  if (!k.s) {
    free(k.rows);
    return;
  }
  if (p->n == p->cap)
    free_cand(&p->items[--p->n]);
  int i = p->n;
  while (i > 0 && p->items[i - 1].score < k.score) {
    p->items[i] = p->items[i - 1];
    i--;
  }
  p->items[i] = k;
  p->n++;
}

/* A parent of the next generation, drawn with probability proportional to
 * its score (negative scores count as 0; all 0: uniform). */
static int draw_parent(search *S, const cand *pop, int n) {
  double total = 0;
  for (int i = 0; i < n; i++)
    total += pop[i].score > 0 && isfinite(pop[i].score) ? pop[i].score : 0;
  if (!(total > 0))
    return (int)loom_rng_below(&S->rng, (uint64_t)n);
  double u = loom_rng_double(&S->rng) * total;
  for (int i = 0; i < n; i++) {
    double w = pop[i].score > 0 && isfinite(pop[i].score) ? pop[i].score : 0;
    if (u < w)
      return i;
    u -= w;
  }
  return n - 1;
}

/* Fresh samples, distinct and not measured, into out[0..want); returns
 * how many were found in 8 draws per wanted candidate. */
static int fresh(search *S, cand *out, int want) {
  int n = 0;
  for (int attempt = 0; n < want && attempt < 8 * want; attempt++) {
    loom_sched *s = sample(S);
    if (!s)
      continue;
    uint64_t h = cand_hash(s);
    bool is_dup = was_seen(S, h);
    for (int i = 0; i < n && !is_dup; i++)
      is_dup = out[i].hash == h;
    if (is_dup) {
      loom_sched_free(s);
      continue;
    }
    out[n++] = make_cand(S, s);
  }
  return n;
}

/* One round of MetaSchedule's evolutionary search, for want candidates:
 * the population starts from the fastest measured parents (a fifth of it
 * at most) and fresh samples; each of the genetic iterations ranks it with
 * the cost model, offers its unmeasured members to the picks, and breeds
 * the next generation: a parent drawn in proportion to its score, mutated
 * with probability 0.85 (up to 10 tries, else the parent itself) or copied.
 * The picks are the best-scored, less an epsilon-greedy share taken at
 * random from the fresh samples. */
static int evolve(search *S, cand *out, int want) {
  int pop_size = S->o->population > 0 ? S->o->population : DEFAULT_POPULATION;
  int iters = S->o->genetic_iters > 0 ? S->o->genetic_iters : GENETIC_ITERS;
  double mutate_prob = S->o->mutate_prob > 0 ? S->o->mutate_prob : MUTATE_PROB;
  double eps = S->o->eps_greedy > 0 ? S->o->eps_greedy : 0.05;
  if (pop_size < want)
    pop_size = want;
  cand *pop = calloc((size_t)pop_size, sizeof *pop);
  cand *next = calloc((size_t)pop_size, sizeof *next);
  cand *unmeasured = calloc((size_t)pop_size, sizeof *unmeasured);
  picks best = {calloc((size_t)want, sizeof *best.items), 0, want};
  int n = 0, n_unmeasured = 0, k = 0;
  if (!pop || !next || !unmeasured || !best.items)
    goto out;
  int n_measured = (int)(pop_size * INIT_MEASURED_RATIO);
  for (int i = 0; i < S->n_parents && i < n_measured; i++) {
    loom_sched *s = loom_sched_copy(S->parents[i].s);
    if (s)
      pop[n++] = make_cand(S, s);
  }
  n_unmeasured = fresh(S, unmeasured, pop_size - n);
  for (int i = 0; i < n_unmeasured; i++) {
    cand c = copy_cand(S, &unmeasured[i]);
    if (c.s)
      pop[n++] = c;
    else
      free(c.rows);
  }
  for (int it = 0; it <= iters && n > 0; it++) {
    rank(S, pop, n);
    for (int i = 0; i < n; i++)
      picks_offer(S, &best, &pop[i]);
    if (it == iters)
      break;
    int m = 0;
    for (int j = 0; j < pop_size; j++) {
      int p = draw_parent(S, pop, n);
      loom_sched *child = NULL;
      if (loom_rng_double(&S->rng) < mutate_prob)
        for (int t = 0; t < MUTATE_TRIES && !child; t++)
          child = mutate(S, pop[p].s);
      if (child)
        next[m++] = make_cand(S, child);
      else if ((next[m] = copy_cand(S, &pop[p])).s)
        m++;
      else
        free(next[m].rows);
    }
    for (int i = 0; i < n; i++)
      free_cand(&pop[i]);
    cand *tmp = pop;
    pop = next;
    next = tmp;
    n = m;
  }
  /* The picks: random fresh samples first claim their epsilon share. */
  int n_random = (int)ceil(eps * want);
  for (int i = 0; i < n_unmeasured && k < n_random; i++) {
    int j = i + (int)loom_rng_below(&S->rng, (uint64_t)(n_unmeasured - i));
    cand c = unmeasured[j];
    unmeasured[j] = unmeasured[i];
    unmeasured[i] = c;
    if (!picks_has(&best, c.hash) && !was_seen(S, c.hash)) {
      out[k++] = c;
      unmeasured[i].s = NULL;
      unmeasured[i].rows = NULL;
    }
  }
  for (int i = 0; i < best.n; i++) {
    bool is_dup = false;
    for (int j = 0; j < k && !is_dup; j++)
      is_dup = out[j].hash == best.items[i].hash;
    if (k < want && !is_dup)
      out[k++] = best.items[i];
    else
      free_cand(&best.items[i]);
  }
out:
  for (int i = 0; pop && i < n; i++)
    free_cand(&pop[i]);
  for (int i = 0; unmeasured && i < n_unmeasured; i++)
    free_cand(&unmeasured[i]);
  free(pop);
  free(next);
  free(unmeasured);
  free(best.items);
  return k;
}

/* Up to want new candidates, best ranked first; only what is measured
 * counts as seen, the rest may be drawn again. */
static int propose(search *S, cand *out, int want) {
  int k;
  bool is_fast_cpu = S->o->strategy == LOOM_SEARCH_FAST && !S->fast;
  if (S->o->strategy == LOOM_SEARCH_EVOLUTIONARY || is_fast_cpu) {
    k = evolve(S, out, want);
  } else if (S->o->strategy == LOOM_SEARCH_FAST) {
    for (k = 0; k < want && S->next_fast < S->n_fast;) {
      loom_sched *c = postprocess(S, S->fast[S->next_fast]);
      S->fast[S->next_fast++] = NULL;
      if (c && was_seen(S, cand_hash(c)))
        loom_sched_free(c); /* measured by an earlier run */
      else if (c)
        out[k++] = make_cand(S, c);
    }
  } else {
    k = fresh(S, out, want);
  }
  for (int i = 0; i < k; i++)
    if (!mark_seen(S, out[i].hash)) {
      for (int j = i; j < k; j++)
        free_cand(&out[j]);
      return i;
    }
  return k;
}

/* How many of the fastest measured are kept: the measured share of the
 * population. */
static int parents_cap(const search *S) {
  int pop = S->o->population > 0 ? S->o->population : DEFAULT_POPULATION;
  int cap = (int)(pop * INIT_MEASURED_RATIO);
  return cap > 0 ? cap : 1;
}

/* Keeps s among the parents when it is one of the fastest. Takes s. */
static void add_parent(search *S, loom_sched *s, double ms) {
  int cap = parents_cap(S);
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

/* The trace of s as its record holds it; heap, NULL when out of memory. */
static char *trace_json(loom_sched *s) {
  loom_buf json;
  loom_buf_init(&json);
  loom_trace t = loom_sched_trace(s);
  loom_trace_print_json(&t, LOOM_DIALECT_TIR, &json);
  if (json.has_failed) {
    loom_buf_free(&json);
    return NULL;
  }
  return json.data ? loom_buf_take(&json) : strdup("[[], []]");
}

static loom_status record(search *S, loom_sched *s, const loom_measured *m,
                          loom_diag *d) {
  if (!S->db)
    return LOOM_OK;
  char *json = trace_json(s);
  if (!json)
    return LOOM_NOMEM;
  double ms = m->timing.median_ms;
  /* A stopped candidate keeps the time it ran as a failure's latency: a
   * lower bound, unchecked, that no ranking may take for a measurement. */
  char stopped[160];
  if (m->is_stopped)
    snprintf(stopped, sizeof stopped,
             "stopped: its first call ran %.6g ms, past %.3gx the best so "
             "far; not checked",
             ms, S->o->runner.stop_ratio > 0 ? S->o->runner.stop_ratio : 3.0);
  loom_db_record r = {.workload = S->workload, .target = S->target_key, .trace = json,
                      .latencies_ms = &ms, .n_latencies = m->error ? 0 : 1,
                      .error = m->is_stopped ? stopped : m->error};
  loom_status st = loom_db_commit_records(S->db, &r, 1, d);
  free(json);
  return st;
}

/* Starts building cands[0..n) in the background; beside_run says a batch
 * will be measured meanwhile, so the compiler runs niced. */
static loom_status start_build(search *S, cand *cands, int n, bool beside_run,
                               loom_tune_build_job **job) {
  const loom_func **funcs = calloc((size_t)(n ? n : 1), sizeof *funcs);
  if (!funcs)
    return LOOM_NOMEM;
  for (int i = 0; i < n; i++)
    funcs[i] = loom_sched_module(cands[i].s)->funcs[0];
  /* One file per compile job: a batch smaller than the default file size
   * would otherwise compile on one core. */
  loom_builder_options bo = S->builder;
  if (bo.per_file <= 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = bo.jobs > 0 ? bo.jobs : online > 0 ? (int)online : 1;
    bo.per_file = (n + jobs - 1) / jobs;
  }
  if (beside_run && bo.nice == 0)
    bo.nice = 19;
  loom_status st = loom_tune_build_start(funcs, n, &bo, job);
  free(funcs);
  return st;
}

/* Waits for the build of a batch; the time waited is the build's share of
 * the search. */
static loom_status wait_build(search *S, loom_tune_build_job *job, loom_build_set *b) {
  double t0 = now_s();
  loom_status st = loom_tune_build_wait(job, b);
  S->res->build_s += now_s() - t0;
  if (st == LOOM_OK)
    S->res->build_wall_s += b->wall_ms / 1e3;
  return st;
}

/* Measures the built cands[0..n); records them; keeps the good ones as
 * parents and frees the rest (and b). */
static loom_status measure(search *S, cand *cands, int n, loom_build_set *bs,
                           loom_diag *d) {
  loom_kernel *kernels = calloc((size_t)(n ? n : 1), sizeof *kernels);
  loom_measured *m = calloc((size_t)(n ? n : 1), sizeof *m);
  loom_build_set b = *bs;
  loom_status st = kernels && m ? LOOM_OK : LOOM_NOMEM;
  double t1 = now_s();
  for (int i = 0; i < n && st == LOOM_OK; i++)
    kernels[i] = b.items[i].kernel;
  /* One candidate at a time, each told the best so far, batch included:
   * the runner stops a first call that reaches a few times the best, so
   * the sooner the best is known the less the losers cost. */
  double best = S->res->best_ms;
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    loom_tune_runner_set_best(S->runner, best > 0 && isfinite(best) ? best : 0);
    st = loom_tune_runner_run(S->runner, &kernels[i], 1, &m[i], d);
    if (st == LOOM_OK && !m[i].error && (!(best > 0) || m[i].timing.median_ms < best))
      best = m[i].timing.median_ms;
  }
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
    S->res->stopped += st == LOOM_OK && !m[i].error && m[i].is_stopped;
    /* Neither a failure nor a stopped candidate is a parent or the best. */
    if (st != LOOM_OK || m[i].error || m[i].is_stopped) {
      S->res->failures += st == LOOM_OK && m[i].error;
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
  TRY(loom_tune_build(&f, 1, &S->builder, &b));
  /* The unscheduled function is often far slower than the candidates the
   * limit is set for; it gets ten minutes. */
  double limit = S->o->runner.timeout_ms > 0 ? S->o->runner.timeout_ms : 10000;
  loom_tune_runner_set_timeout(S->runner, limit > 600000 ? limit : 600000);
  double t0 = now_s();
  loom_status st = loom_tune_runner_run(S->runner, &b.items[0].kernel, 1, &m, d);
  S->res->final_s += now_s() - t0;
  loom_tune_runner_set_timeout(S->runner, limit);
  if (st == LOOM_OK && !m.error) {
    S->res->baseline_ms = m.timing.median_ms;
    /* The function as written (the empty schedule) is a candidate too, so
     * the tuned result is never slower than the untuned one. */
    loom_sched *s = loom_sched_new(S->mod, 0);
    st = s ? record(S, s, &m, d) : LOOM_NOMEM;
    if (st == LOOM_OK && mark_seen(S, cand_hash(s))) {
      S->res->best_ms = m.timing.median_ms;
      S->best = loom_sched_copy(s);
    }
    loom_sched_free(s);
  }
  loom_tune_measured_free(&m, 1);
  loom_tune_build_free(&b);
  return st;
}

/* A record's trace (JSON) replayed on a schedule of the task seeded with
 * seed, its decisions checked; NULL when it does not read or replay.
 * *n_insts (when not NULL) gets the trace's length. */
static loom_sched *replay_record(search *S, const char *json, uint64_t seed, int *n_insts) {
  loom_arena *a = loom_arena_new();
  loom_sched *s = loom_sched_new(S->mod, seed);
  loom_trace t;
  loom_diag d;
  loom_diag_init(&d);
  bool ok = a && s && json &&
            loom_trace_read_json(json, strlen(json), "database", a, &t, &d) == LOOM_OK &&
            loom_trace_apply(&t, s, LOOM_REPLAY_CHECK, &d) == LOOM_OK;
  if (ok && n_insts)
    *n_insts = t.n_insts;
  loom_diag_free(&d);
  loom_arena_free(a);
  if (!ok) {
    loom_sched_free(s);
    return NULL;
  }
  return s;
}

/* The best records of the database, replayed, as the first parents; their
 * decisions are checked, so a record edited into one that does not replay
 * as recorded is no parent. */
static void seed_parents(search *S) {
  loom_db_records top;
  loom_diag d;
  loom_diag_init(&d);
  int cap = parents_cap(S);
  if (!S->db || loom_db_top_k(S->db, S->workload, S->target_key, cap, &top, &d) != LOOM_OK) {
    loom_diag_free(&d);
    return;
  }
  for (int i = 0; i < top.n; i++) {
    loom_sched *s = replay_record(S, top.items[i].trace, loom_rng_next(&S->rng), NULL);
    if (s && mark_seen(S, cand_hash(s))) {
      double ms = INFINITY;
      if (top.items[i].n_latencies) { /* the mean: a finalist was measured again */
        ms = 0;
        for (int k = 0; k < top.items[i].n_latencies; k++)
          ms += top.items[i].latencies_ms[k] / top.items[i].n_latencies;
      }
      if (!S->best || ms < S->res->best_ms) {
        S->res->best_ms = ms;
        loom_sched_free(S->best);
        S->best = loom_sched_copy(s);
      }
      add_parent(S, s, ms);
      s = NULL;
    }
    loom_sched_free(s);
  }
  loom_db_records_free(&top);
  loom_diag_free(&d);
}

/* Every schedule the database holds for this workload and target, replayed
 * and marked seen: a run resumed after an interruption (GPU time comes in
 * short windows) measures none of them again. */
static void mark_recorded(search *S) {
  loom_db_records all;
  loom_diag d;
  loom_diag_init(&d);
  if (!S->db || loom_db_all_records(S->db, S->workload, &all, &d) != LOOM_OK) {
    loom_diag_free(&d);
    return;
  }
  for (int i = 0; i < all.n; i++) {
    if (!all.items[i].target || strcmp(all.items[i].target, S->target_key))
      continue;
    int n_insts;
    loom_sched *s = replay_record(S, all.items[i].trace, 0, &n_insts);
    if (s && !was_seen(S, cand_hash(s)))
      mark_seen(S, cand_hash(s));
    S->res->resumed += s && n_insts > 0; /* the function as written is the reference */
    loom_sched_free(s);
  }
  loom_db_records_free(&all);
  loom_diag_free(&d);
}

static void report(search *S) {
  if (!S->o->progress)
    return;
  loom_tune_progress p = {.task = S->task->func->name, .trials = S->res->trials,
                          .max_trials = S->o->trials, .failures = S->res->failures,
                          .best_ms = S->res->best_ms, .baseline_ms = S->res->baseline_ms,
                          .elapsed_s = now_s() - S->t0,
                          .flops = loom_tune_flops(S->task->func),
                          .rejected = S->res->rejected};
  S->o->progress(S->o->progress_ctx, &p);
}

/* The design spaces: the script's trace, or the generated ones. A script
 * that does not apply to the task at all is the user's error, reported at
 * its line. */
static loom_status make_spaces(search *S, loom_diag *d) {
  if (!(S->space_arena = loom_arena_new()))
    return LOOM_NOMEM;
  /* Fast tuning's candidates come from the GPU policy; on a CPU it is the
   * evolutionary search's first round over the generated spaces. */
  if (S->o->strategy == LOOM_SEARCH_FAST && S->target.kind == LOOM_TARGET_CUDA) {
    int k = S->o->trials > 0 ? S->o->trials : 1;
    if (!(S->fast = calloc((size_t)k, sizeof *S->fast)))
      return LOOM_NOMEM;
    TRY(loom_tune_fast_candidates(S->mod, &S->target, k, S->fast, &S->n_fast, d));
    S->n_spaces = S->n_fast;
    return LOOM_OK;
  }
  if (!S->space)
    return loom_space_generate_with(S->mod, &S->target, S->o->rules,
                                    S->o->n_rules, S->space_arena, &S->spaces,
                                    &S->n_spaces, d);
  if (!(S->base = loom_sched_new(S->mod, S->o->seed)) ||
      !(S->spaces = loom_arena_alloc(S->space_arena, sizeof *S->spaces)))
    return LOOM_NOMEM;
  TRY(loom_sched_run_script(S->base, S->space, S->len, S->file, d));
  S->spaces[0] = loom_sched_trace(S->base);
  S->n_spaces = 1;
  return LOOM_OK;
}

/* Proposes the next batch into out (at most batch, within the trials not
 * yet proposed); 0 when the trials are spent or the space has nothing new
 * to give. */
static int next_batch(search *S, cand *out, int batch, int *planned) {
  int left = S->o->trials - *planned;
  int want = left < batch ? left : batch;
  if (want <= 0)
    return 0;
  double t0 = now_s();
  int n = propose(S, out, want);
  S->res->propose_s += now_s() - t0;
  *planned += n;
  return n;
}

/* Names the best from the finalists measured again: the fastest parents
 * within FINALIST_RANGE of the best, and the unscheduled function when it
 * is within that range too (two or more, or there is nothing to choose). */
static loom_status choose_best(search *S, loom_diag *d) {
  int rounds = S->o->finalist_rounds > 0 ? S->o->finalist_rounds : FINALIST_ROUNDS;
  if (S->o->finalist_rounds < 0 || S->n_parents == 0)
    return LOOM_OK;
  double limit = S->parents[0].ms * FINALIST_RANGE;
  tune_finalist f[FINALISTS + 1];
  loom_sched *scheds[FINALISTS + 1];
  int n = 0;
  for (int i = 0; i < S->n_parents && n < FINALISTS && S->parents[i].ms <= limit; i++) {
    scheds[n] = S->parents[i].s;
    f[n++] = (tune_finalist){.func = loom_sched_module(S->parents[i].s)->funcs[0],
                             .ms = S->parents[i].ms};
  }
  bool has_plain = false; /* a parent from the database may be the function as written */
  for (int i = 0; i < n; i++)
    has_plain |= loom_sched_trace(scheds[i]).n_insts == 0;
  loom_sched *plain = NULL;
  if (!has_plain && S->res->baseline_ms > 0 && S->res->baseline_ms <= limit &&
      (plain = loom_sched_new(S->mod, 0))) {
    scheds[n] = plain;
    f[n++] = (tune_finalist){.func = S->mod->funcs[0], .ms = S->res->baseline_ms};
  }
  bool is_choice = n >= 2;
  loom_status st = LOOM_OK;
  for (int i = 0; is_choice && i < n && st == LOOM_OK; i++)
    if (!(f[i].trace = trace_json(scheds[i])))
      st = LOOM_NOMEM;
  double t0 = now_s();
  if (is_choice && st == LOOM_OK)
    st = tune_remeasure(S->runner, &S->builder, S->db, S->workload, S->target_key,
                        f, n, rounds, d);
  S->res->final_s += now_s() - t0;
  int best = -1;
  for (int i = 0; st == LOOM_OK && i < n; i++) {
    S->res->disqualified += f[i].error != NULL;
    if (!f[i].error && (best < 0 || f[i].ms < f[best].ms))
      best = i;
  }
  if (is_choice && st == LOOM_OK) {
    S->res->remeasured = n;
    loom_sched_free(S->best);
    /* Every finalist out: the function as written is what stands. */
    S->best = best >= 0 ? loom_sched_copy(scheds[best]) : loom_sched_new(S->mod, 0);
    S->res->best_ms = best >= 0 ? f[best].ms : S->res->baseline_ms;
    st = S->best ? LOOM_OK : LOOM_NOMEM;
  }
  for (int i = 0; i < n; i++) {
    free((char *)f[i].trace);
    free(f[i].error);
  }
  loom_sched_free(plain);
  return st;
}

static loom_status run_search(search *S, loom_diag *d) {
  if (!(S->parents = calloc((size_t)parents_cap(S) + 1, sizeof *S->parents)))
    return LOOM_NOMEM;
  TRY(make_spaces(S, d));
  if (S->n_spaces == 0)
    return loom_diag_error(d, S->task->func->loc, "no design space for '%s'",
                           S->task->func->name);
  if (S->db)
    TRY(loom_db_commit_workload(S->db, S->task->anon, &S->workload, d));
  loom_runner_options ro = S->o->runner;
  if (!ro.target)
    ro.target = &S->target;
  TRY(loom_tune_runner_new(S->mod->funcs[0], &ro, &S->runner, d));
  if (!S->o->skip_baseline)
    TRY(baseline(S, d));
  if (S->o->strategy == LOOM_SEARCH_EVOLUTIONARY || S->o->strategy == LOOM_SEARCH_FAST)
    seed_parents(S);
  mark_recorded(S);
  int batch = S->o->batch > 0 ? S->o->batch : 16;
  cand *cur = calloc((size_t)batch, sizeof *cur);
  cand *next = calloc((size_t)batch, sizeof *next);
  if (!cur || !next) {
    free(cur);
    free(next);
    return LOOM_NOMEM;
  }
  /* Pipelined, the next batch is proposed (from what was measured before
   * the current one) and built while the current one is measured. */
  bool is_pipelined = S->o->pipeline;
  int planned = 0; /* trials proposed so far */
  int n = next_batch(S, cur, batch, &planned);
  loom_tune_build_job *job = NULL, *next_job = NULL;
  loom_status st = n > 0 ? start_build(S, cur, n, false, &job) : LOOM_OK;
  while (st == LOOM_OK && n > 0) {
    loom_build_set b;
    st = wait_build(S, job, &b);
    job = NULL;
    int n_next = 0;
    if (st == LOOM_OK && is_pipelined && (n_next = next_batch(S, next, batch, &planned)) > 0)
      st = start_build(S, next, n_next, true, &next_job);
    if (st == LOOM_OK) {
      st = measure(S, cur, n, &b, d);
    } else {
      loom_tune_build_free(&b);
      for (int i = 0; i < n; i++)
        free_cand(&cur[i]);
    }
    report(S);
    if (st == LOOM_OK && !is_pipelined && (n_next = next_batch(S, next, batch, &planned)) > 0)
      st = start_build(S, next, n_next, false, &next_job);
    cand *tmp = cur;
    cur = next;
    next = tmp;
    n = n_next;
    job = next_job;
    next_job = NULL;
  }
  if (job) { /* stopped by an error with a build under way */
    loom_build_set b;
    if (loom_tune_build_wait(job, &b) == LOOM_OK)
      loom_tune_build_free(&b);
  }
  for (int i = 0; st != LOOM_OK && i < n; i++)
    free_cand(&cur[i]);
  free(cur);
  free(next);
  return st == LOOM_OK ? choose_best(S, d) : st;
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
  loom_buf_init(&S.reasons);
  if (o->target)
    S.target = *o->target;
  else
    loom_target_detect(&S.target);
  loom_target_key(&S.target, S.target_key, sizeof S.target_key);
  S.builder = o->builder;
  if (!S.builder.target)
    S.builder.target = &S.target;
  S.cores = S.target.cpu.cores > 0 ? S.target.cpu.cores : 1;
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
  for (int i = 0; i < S.n_fast; i++)
    loom_sched_free(S.fast[i]);
  free(S.fast);
  free(S.parents);
  free(S.seen);
  loom_sched_free(S.best);
  loom_sched_free(S.base);
  loom_arena_free(S.space_arena);
  if (S.reasons.data && !S.reasons.has_failed)
    out->rejections = loom_buf_take(&S.reasons);
  loom_buf_free(&S.reasons);
  loom_tune_runner_free(S.runner);
  loom_arena_free(a);
  return st;
}

void loom_tune_result_free(loom_tune_result *r) {
  free(r->best_trace);
  free(r->rejections);
  r->best_trace = NULL;
  r->rejections = NULL;
}
