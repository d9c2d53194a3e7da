/* Tuning a network: the prim funcs a graph calls, under one budget of
 * trials, as MetaSchedule tunes the tasks it extracts from a model. Equal
 * workloads are one task, weighted by how many calls of the graph reach it;
 * tasks take rounds of trials in the order the gradient task scheduler
 * picks (task.c), each round a resumed loom_tune_task (what the database
 * holds is not measured again), until the budget is spent or every task's
 * space is; fast tuning gives each task one round of its top K. The unscheduled function is measured in a task's first round
 * only, and finalists are not measured again between rounds: the records
 * say which schedule is best. */
#include "tune/tune_impl.h"

#include <stdlib.h>
#include <string.h>

void loom_graph_tuning_free(loom_graph_tuning *t) {
  if (!t)
    return;
  for (int i = 0; i < t->n_tasks; i++)
    free(t->tasks[i].best_trace);
  free(t->tasks);
  loom_arena_free(t->arena);
  memset(t, 0, sizeof *t);
}

/* The tasks of the functions g calls, each weighted by its calls. */
static loom_status graph_tasks(loom_arena *a, const loom_module *m, const loom_graph *g,
                               loom_graph_tuning *out, loom_diag *d) {
  loom_task *t = loom_arena_alloc(a, (size_t)(g->n_calls + 1) * sizeof *t);
  out->tasks = calloc((size_t)(g->n_calls + 1), sizeof *out->tasks);
  if (!t || !out->tasks)
    return LOOM_NOMEM;
  int n = 0;
  for (int c = 0; c < g->n_calls; c++) {
    const loom_func *f = NULL;
    for (int i = 0; i < m->n_funcs && !f; i++)
      if (!strcmp(m->funcs[i]->name, g->calls[c].func))
        f = m->funcs[i];
    if (!f)
      return loom_diag_error(d, g->calls[c].loc, "graph '%s' calls '%s', which the module "
                             "does not define", g->name, g->calls[c].func);
    loom_func *w = tune_workload_form(a, f);
    if (!w)
      return LOOM_NOMEM;
    uint64_t h = loom_ir_hash_func(w);
    int j = tune_task_find(t, n, w, h);
    if (j < 0)
      t[j = n++] = (loom_task){f, w, h, 0};
    t[j].weight++;
  }
  for (int i = 0; i < n; i++)
    out->tasks[i].task = t[i];
  out->n_tasks = n;
  return LOOM_OK;
}

/* The graph's time as its tasks' best times say: each call at its task's
 * best, or at the unscheduled time where none succeeded. */
static void estimate(loom_graph_tuning *t) {
  t->estimate_ms = t->baseline_ms = 0;
  for (int i = 0; i < t->n_tasks; i++) {
    const loom_graph_task *k = &t->tasks[i];
    double best = k->best_ms > 0 ? k->best_ms : k->baseline_ms;
    t->estimate_ms += k->task.weight * best;
    t->baseline_ms += k->task.weight * k->baseline_ms;
  }
}

loom_status loom_tune_graph(const loom_module *m, const loom_graph *g, int trials,
                            const loom_tune_options *o, loom_db *db,
                            loom_graph_tuning *out, loom_diag *d) {
  memset(out, 0, sizeof *out);
  if (!(out->arena = loom_arena_new()))
    return LOOM_NOMEM;
  loom_status st = graph_tasks(out->arena, m, g, out, d);
  if (st == LOOM_OK && out->n_tasks == 0)
    return LOOM_OK; /* a graph that calls nothing */
  int *weights = st == LOOM_OK ? malloc((size_t)(out->n_tasks + 1) * sizeof *weights) : NULL;
  if (st == LOOM_OK && !weights)
    st = LOOM_NOMEM;
  for (int i = 0; st == LOOM_OK && i < out->n_tasks; i++)
    weights[i] = out->tasks[i].task.weight;
  loom_task_scheduler *s = st == LOOM_OK
                               ? loom_task_scheduler_new(LOOM_TASK_GRADIENT, weights,
                                                         out->n_tasks, o->seed)
                               : NULL;
  if (st == LOOM_OK && !s)
    st = LOOM_NOMEM;
  /* Fast tuning measures each task's top K in one round. */
  bool is_fast = o->strategy == LOOM_SEARCH_FAST;
  int round = is_fast ? (o->trials > 0 ? o->trials : 20) : o->batch > 0 ? o->batch : 16;
  if (trials <= 0)
    trials = out->n_tasks * (is_fast ? round : 32);
  while (st == LOOM_OK && out->trials < trials) {
    int i = loom_task_scheduler_next(s);
    if (i < 0)
      break;
    loom_graph_task *k = &out->tasks[i];
    loom_tune_options ro = *o;
    ro.trials = round < trials - out->trials ? round : trials - out->trials;
    ro.skip_baseline = k->rounds > 0;
    ro.finalist_rounds = -1;
    ro.seed = o->seed + (uint64_t)k->rounds; /* each round samples afresh */
    loom_tune_result r;
    st = loom_tune_task(&k->task, NULL, 0, NULL, db, &ro, &r, d);
    if (st != LOOM_OK)
      break;
    k->rounds++;
    k->trials += r.trials;
    k->failures += r.failures;
    out->trials += r.trials;
    if (!ro.skip_baseline)
      k->baseline_ms = r.baseline_ms;
    if (r.best_ms > 0 && (k->best_ms == 0 || r.best_ms <= k->best_ms)) {
      k->best_ms = r.best_ms;
      free(k->best_trace);
      k->best_trace = r.best_trace;
      r.best_trace = NULL;
    }
    bool is_seen = r.trials < ro.trials;
    loom_tune_result_free(&r);
    loom_task_scheduler_report(s, i, k->best_ms);
    /* A round that found fewer new candidates than it asked for has seen
     * its space. */
    if (is_seen || is_fast)
      loom_task_scheduler_finish(s, i);
  }
  estimate(out);
  loom_task_scheduler_free(s);
  free(weights);
  if (st != LOOM_OK)
    loom_graph_tuning_free(out);
  return st;
}
