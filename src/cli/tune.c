/* `loom tune FILE --trials N [--space SCRIPT | --block NAME=SCRIPT...]
 * [--func NAME] [--target SPEC] [--db PATH] [--seed N]
 * [--strategy evolutionary|replay-trace|replay-func] [--model xgb|random]
 * [--batch N] [--threads N] [--json]`: tunes each task of FILE over the
 * design spaces the schedule rules generate for the target (with the
 * blocks given by --block scheduled by the user's scripts first), or over
 * the one SCRIPT describes (a schedule script with sampling instructions);
 * `loom tune FILE --strategy fast [--topk K]` measures K candidates (20)
 * instead: on a cuda target the fast-tuning policy's, on a CPU the
 * evolutionary search's first K,
 * records every measurement in the database, and prints for each task the
 * best latency, its speedup over the unscheduled function and the best
 * trace. */
#include "cli/cli.h"

#include "loom/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tune_opts {
  const char *file, *func, *space, *db, *target;
  bool is_json, is_random_model;
  loom_target desc;
  cli_block_rules blocks;
  const cli_program *program;
  loom_tune_options t;
} tune_opts;

int cli_tune_option(const char *cmd, const char *a, const char *val, loom_tune_options *t,
                    bool *is_random_model) {
  long long v;
  if (!strcmp(a, "--seed")) {
    if (!cli_parse_int(val, 0, INT64_MAX, &v))
      return cli_usage_error(cmd, "bad seed '%s' (a non-negative integer)", val);
    t->seed = t->runner.seed = (uint64_t)v;
  } else if (!strcmp(a, "--model")) {
    if (strcmp(val, "xgb") && strcmp(val, "random"))
      return cli_usage_error(cmd, "unknown model '%s' (xgb or random)", val);
    *is_random_model = val[0] == 'r';
  } else if (!strcmp(a, "--strategy")) {
    static const struct {
      const char *name;
      loom_search_strategy s;
    } strategies[] = {{"evolutionary", LOOM_SEARCH_EVOLUTIONARY},
                      {"replay-trace", LOOM_SEARCH_REPLAY_TRACE},
                      {"replay-func", LOOM_SEARCH_REPLAY_FUNC},
                      {"fast", LOOM_SEARCH_FAST}};
    size_t i = 0;
    while (i < sizeof strategies / sizeof *strategies && strcmp(val, strategies[i].name))
      i++;
    if (i == sizeof strategies / sizeof *strategies)
      return cli_usage_error(cmd, "unknown strategy '%s' (evolutionary, replay-trace, "
                             "replay-func or fast)", val);
    t->strategy = strategies[i].s;
  } else {
    return 0;
  }
  return 1;
}

int cli_tune_model_open(const char *cmd, const char *file, loom_db *db, bool is_random,
                        uint64_t seed, loom_model **model) {
  loom_diag d;
  loom_diag_init(&d);
  char *note = NULL;
  int rc = 0;
  if (loom_tune_model_open(db, is_random, seed, model, &note, &d) != LOOM_OK) {
    if (d.has_error)
      cli_print_diag(&d);
    else
      fprintf(stderr, "%s: error: out of memory\n", file);
    rc = EXIT_USER;
  }
  if (note)
    fprintf(stderr, "loom %s: %s\n", cmd, note);
  free(note);
  loom_diag_free(&d);
  return rc;
}

static int parse_opts(int argc, char **argv, tune_opts *o) {
  memset(o, 0, sizeof *o);
  o->db = "loom.db";
  o->t.trials = -1;
  o->t.runner.check = true;
  o->t.runner.timeout_ms = 10000;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    long long v;
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "--json")) {
      o->is_json = true;
      continue;
    }
    if (a[0] != '-' || !a[1]) {
      if (o->file)
        return cli_usage_error("tune", "one FILE expected, got '%s' too", a);
      o->file = a;
      continue;
    }
    if (!has_value)
      return !strncmp(a, "--", 2) && strchr("fstdbrS", a[2])
                 ? cli_usage_error("tune", "%s needs a value", a)
                 : cli_usage_error("tune", "unknown option '%s'", a);
    const char *val = argv[++i];
    if (!strcmp(a, "--func")) {
      o->func = val;
    } else if (!strcmp(a, "--space")) {
      o->space = val;
    } else if (!strcmp(a, "--block")) {
      int rc = cli_block_rule_add(&o->blocks, "tune", val);
      if (rc)
        return rc;
    } else if (!strcmp(a, "--db")) {
      o->db = val;
    } else if (!strcmp(a, "--target")) {
      o->target = val;
    } else if (!strcmp(a, "--trials") || !strcmp(a, "--topk") || !strcmp(a, "--batch") ||
               !strcmp(a, "--threads")) {
      if (!cli_parse_int(val, 1, 1 << 24, &v))
        return cli_usage_error("tune", "bad %s '%s' (a positive integer)", a, val);
      *(a[2] == 't' && a[3] != 'h' ? &o->t.trials : a[2] == 'b' ? &o->t.batch
                                                                 : &o->t.runner.threads) = (int)v;
    } else {
      int rc = cli_tune_option("tune", a, val, &o->t, &o->is_random_model);
      if (rc != 1)
        return rc ? rc : cli_usage_error("tune", "unknown option '%s'", a);
    }
  }
  if (!o->file)
    return cli_usage_error("tune", "missing FILE");
  bool is_fast = o->t.strategy == LOOM_SEARCH_FAST;
  if (is_fast && o->t.trials < 0)
    o->t.trials = 20;
  if (o->t.trials < 0)
    return cli_usage_error("tune", "missing --trials N");
  if (is_fast && (o->space || o->blocks.n))
    return cli_usage_error("tune", "--strategy fast makes its own candidates: "
                           "--space and --block do not apply");
  if (o->space && o->blocks.n)
    return cli_usage_error("tune", "--block adds to the generated spaces; "
                           "--space replaces them: give one of the two");
  o->t.rules = o->blocks.rules;
  o->t.n_rules = o->blocks.n;
  int rc = cli_target("tune", o->target, &o->desc);
  o->t.target = &o->desc;
  return rc;
}

static void progress(void *ctx, const loom_tune_progress *p) {
  (void)ctx;
  double left = p->trials ? p->elapsed_s * (p->max_trials - p->trials) / p->trials : 0;
  fprintf(stderr, "[%s] trials %d/%d, failures %d, rejected %d, best ", p->task,
          p->trials, p->max_trials, p->failures, p->rejected);
  if (p->best_ms > 0 && p->flops > 0)
    fprintf(stderr, "%.4f ms (%.2f GFLOP/s)", p->best_ms, p->flops / (p->best_ms * 1e6));
  else if (p->best_ms > 0)
    fprintf(stderr, "%.4f ms", p->best_ms);
  else
    fputs("none yet", stderr);
  fprintf(stderr, ", elapsed %.1f s, about %.0f s left\n", p->elapsed_s, left);
}

static int tune_task(const tune_opts *o, const loom_task *t, const char *space,
                     size_t len, loom_db *db) {
  for (int i = 0; i < t->func->n_params; i++)
    if (!t->func->params[i].buffer) {
      fprintf(stderr, "%s: error: %s has scalar parameters, which loom tune "
              "cannot give values yet\n", o->file, t->func->name);
      return EXIT_USER;
    }
  loom_diag d;
  loom_diag_init(&d);
  if (space)
    loom_diag_set_source(&d, space, len);
  loom_tune_result r;
  int rc = 0;
  double flops = loom_tune_flops(t->func);
  if (loom_tune_task(t, space, len, o->space, db, &o->t, &r, &d) != LOOM_OK) {
    cli_block_rules_source(&o->blocks, o->file, o->program, &d);
    if (d.has_error)
      cli_print_diag(&d);
    else
      fprintf(stderr, "%s: error: out of memory\n", o->file);
    rc = EXIT_USER;
  } else if (o->is_json) {
    loom_buf b;
    loom_buf_init(&b);
    loom_tune_result_json(t, &r, &b);
    loom_buf_putc(&b, '\n');
    if (b.data)
      fputs(b.data, stdout);
    loom_buf_free(&b);
  } else if (!r.best_trace) {
    printf("%s: no candidate succeeded (%d trials, %d failures, %d rejected)\n",
           t->func->name, r.trials, r.failures, r.rejected);
  } else {
    printf("%s: best %.6f ms", t->func->name, r.best_ms);
    if (flops > 0)
      printf(" (%.2f GFLOP/s)", flops / (r.best_ms * 1e6));
    if (r.baseline_ms > 0)
      printf(", %.2fx over the unscheduled %.6f ms", r.baseline_ms / r.best_ms, r.baseline_ms);
    printf(" (%d trials, %d failures, %d rejected, weight %d)\n%s", r.trials,
           r.failures, r.rejected, t->weight, r.best_trace);
    if (*r.best_trace && r.best_trace[strlen(r.best_trace) - 1] != '\n')
      putchar('\n');
  }
  if (rc == 0 && r.trials > 0)
    fprintf(stderr, "[%s] time: %.1f s proposing, %.1f s waiting for builds (%.1f s "
                    "building), %.1f s measuring trials, %.1f s measuring the "
                    "unscheduled function and the finalists\n",
            t->func->name, r.propose_s, r.build_s, r.build_wall_s, r.run_s, r.final_s);
  if (rc == 0 && r.disqualified)
    fprintf(stderr, "[%s] %d finalists failed when measured again and are out; "
                    "their records are failures now\n",
            t->func->name, r.disqualified);
  if (rc == 0 && r.resumed)
    fprintf(stderr, "[%s] %d schedules measured by earlier runs (in the database) are not "
                    "measured again\n", t->func->name, r.resumed);
  if (rc == 0 && r.rejections)
    fprintf(stderr, "[%s] %d candidates rejected before measuring; first reasons:\n%s",
            t->func->name, r.rejected, r.rejections);
  loom_tune_result_free(&r);
  loom_diag_free(&d);
  return rc;
}

int cli_tune(int argc, char **argv) {
  tune_opts o;
  int rc = parse_opts(argc, argv, &o);
  if (rc) {
    cli_block_rules_free(&o.blocks);
    return rc;
  }
  char *space = NULL;
  size_t len = 0;
  loom_diag d;
  loom_diag_init(&d);
  if (o.space && loom_read_file(o.space, &space, &len, &d) != LOOM_OK) {
    fprintf(stderr, "%s: error: %s\n", o.space, d.msg ? d.msg : "cannot read");
    loom_diag_free(&d);
    cli_block_rules_free(&o.blocks);
    return EXIT_USAGE;
  }
  cli_program p;
  if ((rc = cli_load(o.file, &p))) {
    free(space);
    loom_diag_free(&d);
    cli_block_rules_free(&o.blocks);
    return rc;
  }
  o.program = &p;
  o.t.progress = progress;
  loom_db *db = NULL;
  loom_task *tasks;
  int n = 0;
  loom_arena *a = loom_arena_new();
  if (!a || loom_tune_extract_tasks(a, p.module, &tasks, &n) != LOOM_OK) {
    fprintf(stderr, "%s: error: out of memory\n", o.file);
    rc = EXIT_USER;
  } else if (loom_db_open(o.db, &db, &d) != LOOM_OK) {
    cli_print_diag(&d);
    rc = EXIT_USER;
  }
  loom_model *model = NULL;
  if (rc == 0)
    rc = cli_tune_model_open("tune", o.file, db, o.is_random_model, o.t.seed, &model);
  o.t.model = model;
  int n_tuned = 0;
  for (int i = 0; i < n && rc == 0; i++)
    if (!o.func || !strcmp(tasks[i].func->name, o.func)) {
      rc = tune_task(&o, &tasks[i], space, len, db);
      n_tuned++;
    }
  if (rc == 0 && o.func && !n_tuned) {
    fprintf(stderr, "%s: error: no function named '%s'\n", o.file, o.func);
    rc = EXIT_USER;
  }
  if (rc == 0 && model && loom_tune_model_save(model, db, &d) != LOOM_OK)
    fprintf(stderr, "loom tune: the cost model was not saved: %s\n",
            d.msg ? d.msg : "out of memory");
  loom_model_free(model);
  loom_db_close(db);
  loom_arena_free(a);
  cli_program_free(&p);
  free(space);
  loom_diag_free(&d);
  cli_block_rules_free(&o.blocks);
  return rc;
}
