/* Tasks: distinct workloads of a module, and the schedulers that share the
 * trial budget among them (see include/loom/tune.h for the policies). */
#include "loom/normalize.h"
#include "tune/tune_impl.h"

#include <stdlib.h>
#include <string.h>

const loom_func *loom_tune_normalized(loom_arena *a, const loom_func *f) {
  const loom_func *g = NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_normalize_func(a, f, &g, &d);
  loom_diag_free(&d);
  if (st == LOOM_NOMEM)
    return NULL;
  return st == LOOM_OK ? g : f;
}

loom_func *tune_workload_form(loom_arena *a, const loom_func *f) {
  const loom_func *nf = loom_tune_normalized(a, f);
  return nf ? loom_ir_func_anonymous(a, nf) : NULL;
}

int tune_task_find(const loom_task *t, int n, const loom_func *anon, uint64_t hash) {
  for (int j = 0; j < n; j++)
    if (t[j].hash == hash && loom_ir_equal_func(t[j].anon, anon, NULL))
      return j;
  return -1;
}

loom_status loom_tune_extract_tasks(loom_arena *a, const loom_module *m,
                                    loom_task **tasks, int *n) {
  loom_task *t = loom_arena_alloc(a, (size_t)(m->n_funcs + 1) * sizeof *t);
  if (!t)
    return LOOM_NOMEM;
  int k = 0;
  for (int i = 0; i < m->n_funcs; i++) {
    loom_func *g = tune_workload_form(a, m->funcs[i]);
    if (!g)
      return LOOM_NOMEM;
    uint64_t h = loom_ir_hash_func(g);
    int j = tune_task_find(t, k, g, h);
    if (j >= 0)
      t[j].weight++;
    else
      t[k++] = (loom_task){m->funcs[i], g, h, 1};
  }
  *tasks = t;
  *n = k;
  return LOOM_OK;
}

#define GRADIENT_ALPHA 0.2
#define GRADIENT_WINDOW 3

typedef struct task_state {
  int weight;
  bool is_finished;
  double *best;   /* best latency after each round; 0 = none valid */
  int n_rounds, cap_rounds;
} task_state;

struct loom_task_scheduler {
  loom_task_policy policy;
  task_state *tasks;
  int n;
  int cursor; /* round robin, and the gradient policy's first pass */
  loom_rng rng;
};

loom_task_scheduler *loom_task_scheduler_new(loom_task_policy p,
                                             const int *weights, int n,
                                             uint64_t seed) {
  loom_task_scheduler *s = calloc(1, sizeof *s);
  if (!s || !(s->tasks = calloc((size_t)(n ? n : 1), sizeof *s->tasks))) {
    free(s);
    return NULL;
  }
  s->policy = p;
  s->n = n;
  for (int i = 0; i < n; i++)
    s->tasks[i].weight = weights ? weights[i] : 1;
  loom_rng_seed(&s->rng, seed);
  return s;
}

void loom_task_scheduler_free(loom_task_scheduler *s) {
  if (!s)
    return;
  for (int i = 0; i < s->n; i++)
    free(s->tasks[i].best);
  free(s->tasks);
  free(s);
}

static int next_round_robin(loom_task_scheduler *s) {
  for (int k = 0; k < s->n; k++) {
    int i = (s->cursor + k) % s->n;
    if (!s->tasks[i].is_finished) {
      s->cursor = (i + 1) % s->n;
      return i;
    }
  }
  return -1;
}

static double gradient(const task_state *t) {
  int n = t->n_rounds;
  double last = n ? t->best[n - 1] : 0;
  if (last <= 0)
    return -1e9; /* nothing valid yet: a round elsewhere is surely better */
  double g1 = n >= GRADIENT_WINDOW + 1
                  ? (t->best[n - 1 - GRADIENT_WINDOW] - last) / GRADIENT_WINDOW
                  : 0;
  double g2 = last / n;
  return (GRADIENT_ALPHA * g1 + (1 - GRADIENT_ALPHA) * g2) * t->weight;
}

int loom_task_scheduler_next(loom_task_scheduler *s) {
  if (s->policy == LOOM_TASK_ROUND_ROBIN)
    return next_round_robin(s);
  /* The first pass gives every task one round. */
  for (int i = 0; i < s->n; i++)
    if (!s->tasks[i].is_finished && s->tasks[i].n_rounds == 0)
      return i;
  int best = -1, n_ties = 0;
  double best_g = 0;
  for (int i = 0; i < s->n; i++) {
    if (s->tasks[i].is_finished)
      continue;
    double g = gradient(&s->tasks[i]);
    if (best < 0 || g > best_g) {
      best = i;
      best_g = g;
      n_ties = 1;
    } else if (g == best_g && loom_rng_below(&s->rng, (uint64_t)++n_ties) == 0) {
      best = i; /* uniform among equal gradients (reservoir choice) */
    }
  }
  return best;
}

void loom_task_scheduler_report(loom_task_scheduler *s, int i, double best_ms) {
  if (i < 0 || i >= s->n)
    return;
  task_state *t = &s->tasks[i];
  if (t->n_rounds == t->cap_rounds) {
    int cap = t->cap_rounds ? 2 * t->cap_rounds : 8;
    double *p = realloc(t->best, (size_t)cap * sizeof *p);
    if (!p)
      return; /* the round is not counted: the choice stays sound */
    t->best = p;
    t->cap_rounds = cap;
  }
  t->best[t->n_rounds++] = best_ms;
}

void loom_task_scheduler_finish(loom_task_scheduler *s, int i) {
  if (i >= 0 && i < s->n)
    s->tasks[i].is_finished = true;
}

/* ---- results ---------------------------------------------------------------- */

void loom_tune_result_json(const loom_task *t, const loom_tune_result *r, loom_buf *out) {
  double flops = loom_tune_flops(t->func);
  loom_buf_puts(out, "{\"task\": ");
  loom_json_print_str(t->func->name, out);
  loom_buf_printf(out, ", \"weight\": %d, \"trials\": %d, \"failures\": %d, "
                  "\"rejected\": %d, \"stopped\": %d, \"disqualified\": %d, \"resumed\": %d, "
                  "\"best_ms\": %.17g, \"baseline_ms\": %.17g, \"gflops\": %.17g, "
                  "\"trace\": ",
                  t->weight, r->trials, r->failures, r->rejected, r->stopped, r->disqualified,
                  r->resumed, r->best_ms, r->baseline_ms,
                  r->best_ms > 0 ? flops / (r->best_ms * 1e6) : 0.0);
  if (r->best_trace)
    loom_json_print_str(r->best_trace, out);
  else
    loom_buf_puts(out, "null");
  loom_buf_putc(out, '}');
}
