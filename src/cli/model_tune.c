/* `loom model tune MODEL.onnx|MODULE.py [--trials N] [--graph NAME]
 * [--target SPEC] [--db PATH] [--strategy evolutionary|replay-trace|
 * replay-func|fast] [--batch K] [--topk K] [--seed N] [--model xgb|random]
 * [--json] [--no-fuse] [--skip-dispatched]`: tunes the prim funcs the graph
 * calls (but those the dispatch pass takes whole, with --skip-dispatched)
 * under one budget of N trials (32 a task when not given; fast tuning:
 * each task's top K, 20 by default: the fast-tuning policy's on a cuda
 * target, the evolutionary search's first on a CPU), committing every
 * measurement to the database (loom_tune_graph); `loom model run
 * --pipeline apply-db,default --db PATH` then runs the network with the
 * records. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tune_net_opts {
  const char *file, *graph, *target, *db;
  int trials; /* the network's budget; 0: per task */
  bool is_json, is_random_model, is_unfused, is_skip_dispatched;
  cli_rewrites rewrites;
  loom_target tg;
  loom_tune_options t;
} tune_net_opts;

static int parse(int argc, char **argv, tune_net_opts *o) {
  memset(o, 0, sizeof *o);
  o->db = "loom.db";
  o->t.runner.check = true;
  o->t.runner.timeout_ms = 10000;
  o->rewrites = cli_rewrites_unset();
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    long long v;
    bool *flag = !strcmp(a, "--json")              ? &o->is_json
                 : !strcmp(a, "--no-fuse")           ? &o->is_unfused
                 : !strcmp(a, "--skip-dispatched")   ? &o->is_skip_dispatched
                                                     : NULL;
    if (flag) {
      *flag = true;
      continue;
    }
    if (a[0] != '-') {
      if (o->file)
        return cli_usage_error("model", "one MODEL expected, got '%s' too", a);
      o->file = a;
      continue;
    }
    if (i + 1 >= argc)
      return cli_usage_error("model", "%s needs a value", a);
    const char *val = argv[++i];
    int r = cli_rewrite_option(a, val, &o->rewrites);
    if (r > 1)
      return r;
    if (r) {
      continue;
    } else if (!strcmp(a, "--graph")) {
      o->graph = val;
    } else if (!strcmp(a, "--target")) {
      o->target = val;
    } else if (!strcmp(a, "--db")) {
      o->db = val;
    } else if (!strcmp(a, "--trials") || !strcmp(a, "--batch") || !strcmp(a, "--topk")) {
      if (!cli_parse_int(val, 1, 1 << 24, &v))
        return cli_usage_error("model", "bad %s '%s' (a positive integer)", a, val);
      *(a[3] == 'r' ? &o->trials : a[2] == 'b' ? &o->t.batch : &o->t.trials) = (int)v;
    } else {
      int rc = cli_tune_option("model", a, val, &o->t, &o->is_random_model);
      if (rc != 1)
        return rc ? rc : cli_usage_error("model", "unknown option '%s' for tune", a);
    }
  }
  if (!o->file)
    return cli_usage_error("model", "missing MODEL");
  int rc = cli_target("model", o->target, &o->tg);
  o->t.target = &o->tg;
  if (rc == 0 && o->t.trials && o->t.strategy != LOOM_SEARCH_FAST)
    return cli_usage_error("model", "--topk goes with --strategy fast");
  return rc;
}

static void report(const tune_net_opts *o, const loom_graph_tuning *r) {
  for (int i = 0; i < r->n_tasks; i++) {
    const loom_graph_task *k = &r->tasks[i];
    if (o->is_json) {
      loom_buf line;
      loom_buf_init(&line);
      loom_buf_printf(&line, "{\"task\": \"%s\", \"calls\": %d, \"rounds\": %d, "
                      "\"trials\": %d, \"failures\": %d, \"best_ms\": %.6f, "
                      "\"baseline_ms\": %.6f}", k->task.func->name, k->task.weight,
                      k->rounds, k->trials, k->failures, k->best_ms, k->baseline_ms);
      printf("%s\n", line.data ? line.data : "{}");
      loom_buf_free(&line);
      continue;
    }
    printf("%s: %d call%s, %d trials in %d rounds, ", k->task.func->name, k->task.weight,
           k->task.weight == 1 ? "" : "s", k->trials, k->rounds);
    if (k->best_ms > 0)
      printf("best %.4g ms (unscheduled %.4g ms)\n", k->best_ms, k->baseline_ms);
    else if (k->rounds == 0)
      printf("not reached: the budget was spent first\n");
    else
      printf("no candidate succeeded (%d failures)\n", k->failures);
  }
  int calls = 0, unreached = 0;
  for (int i = 0; i < r->n_tasks; i++) {
    calls += r->tasks[i].task.weight;
    unreached += r->tasks[i].rounds == 0;
  }
  if (!o->is_json)
    printf("%d tasks of %d calls, %d trials: the calls' kernels take %.4g ms "
           "(unscheduled %.4g ms)%s\n", r->n_tasks, calls, r->trials, r->estimate_ms,
           r->baseline_ms, unreached ? "; the tasks not reached are not counted" : "");
}

static void progress(void *ctx, const loom_tune_progress *p) {
  (void)ctx;
  fprintf(stderr, "[%s] trials %d/%d, best ", p->task, p->trials, p->max_trials);
  if (p->best_ms > 0)
    fprintf(stderr, "%.4f ms\n", p->best_ms);
  else
    fprintf(stderr, "none yet\n");
}

/* --skip-dispatched: g without the calls of functions the dispatch pass
 * takes whole (a library computes them; tuning them is wasted), each
 * named on stdout with what takes it. */
static int undispatched(const tune_net_opts *o, const cli_net *m, const loom_graph **out) {
  loom_compiled c;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_tune_compile_spec(m->module, "dispatch", &o->tg, NULL, &c, &d) != LOOM_OK) {
    cli_print_diag(&d);
    loom_diag_free(&d);
    return EXIT_USER;
  }
  loom_diag_free(&d);
  const loom_graph *g = m->graph;
  loom_graph *ng = loom_arena_dup(m->arena, g, sizeof *g);
  loom_graph_call *calls = loom_arena_alloc(m->arena, sizeof *calls * (size_t)(g->n_calls + 1));
  int rc = ng && calls ? 0 : EXIT_USER, n = 0;
  for (int k = 0; k < g->n_calls && rc == 0; k++) {
    int i = 0;
    while (i < m->module->n_funcs && strcmp(m->module->funcs[i]->name, g->calls[k].func))
      i++;
    bool is_taken = i < m->module->n_funcs && c.pass[i];
    if (!is_taken)
      calls[n++] = g->calls[k];
    bool is_first = true;
    for (int j = 0; j < k; j++)
      is_first &= strcmp(g->calls[j].func, g->calls[k].func) != 0;
    if (is_taken && is_first && !o->is_json)
      printf("%s: taken by dispatch (%s), not tuned\n", g->calls[k].func, c.why[i]);
  }
  if (rc == 0) {
    ng->calls = calls;
    ng->n_calls = n;
    *out = ng;
  }
  loom_tune_compiled_free(&c);
  return rc;
}

int cli_model_tune(int argc, char **argv) {
  tune_net_opts o;
  int rc = parse(argc, argv, &o);
  if (rc)
    return rc;
  o.t.progress = progress;
  cli_net m;
  loom_onnx_options rewrites = cli_rewrites_get(&o.rewrites, true, o.tg.kind == LOOM_TARGET_CPU);
  if ((rc = cli_net_load(o.file, o.graph, o.is_unfused, &rewrites, NULL, &m)))
    return rc;
  loom_diag d;
  loom_diag_init(&d);
  loom_db *db = NULL;
  loom_model *model = NULL;
  if (loom_db_open(o.db, &db, &d) != LOOM_OK) {
    cli_print_diag(&d);
    rc = EXIT_USER;
  }
  const loom_graph *g = m.graph;
  if (rc == 0 && o.is_skip_dispatched)
    rc = undispatched(&o, &m, &g);
  if (rc == 0)
    rc = cli_tune_model_open("model tune", o.file, db, o.is_random_model, o.t.seed, &model);
  o.t.model = model;
  loom_graph_tuning r;
  if (rc == 0) {
    loom_status st = loom_tune_graph(m.module, g, o.trials, &o.t, db, &r, &d);
    if (st == LOOM_OK) {
      report(&o, &r);
      loom_graph_tuning_free(&r);
    } else {
      if (d.has_error)
        cli_print_diag(&d);
      else
        fprintf(stderr, "%s: error: out of memory\n", o.file);
      rc = EXIT_USER;
    }
  }
  if (rc == 0 && model && loom_tune_model_save(model, db, &d) != LOOM_OK)
    fprintf(stderr, "loom model tune: the cost model was not saved: %s\n",
            d.msg ? d.msg : "out of memory");
  loom_model_free(model);
  loom_db_close(db);
  loom_diag_free(&d);
  cli_net_free(&m);
  return rc;
}
