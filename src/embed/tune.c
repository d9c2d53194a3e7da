/* Tuning for bindings: the tasks of a module tuned as `loom tune` tunes
 * them, with progress through the caller's callback and the results as
 * JSON. */
#include "embed/embed_impl.h"

#include "loom/tune.h"

#include <stdlib.h>
#include <string.h>

typedef struct progress_ctx {
  const loom_embed_tune_options *o;
} progress_ctx;

static void report(void *ctx, const loom_tune_progress *p) {
  const loom_embed_tune_options *o = ((progress_ctx *)ctx)->o;
  o->progress(o->progress_ctx, p->task, p->trials, p->max_trials, p->failures, p->best_ms,
              p->elapsed_s);
}

static loom_status strategy_of(const char *name, loom_search_strategy *out, loom_diag *d) {
  static const char *const names[] = {
      [LOOM_SEARCH_EVOLUTIONARY] = "evolutionary",
      [LOOM_SEARCH_REPLAY_TRACE] = "replay-trace",
      [LOOM_SEARCH_REPLAY_FUNC] = "replay-func",
      [LOOM_SEARCH_FAST] = "fast",
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strcmp(name, names[i])) {
      *out = (loom_search_strategy)i;
      return LOOM_OK;
    }
  return loom_diag_error(d, (loom_loc){0}, "unknown strategy '%s' (evolutionary, "
                         "replay-trace, replay-func or fast)", name);
}

/* The options `loom tune` would run with, from the binding's. */
static loom_status options_of(const loom_embed_tune_options *o, loom_target *t,
                              loom_tune_options *out, loom_diag *d) {
  memset(out, 0, sizeof *out);
  TRY(embed_target(o->target, t, d));
  TRY(strategy_of(o->strategy ? o->strategy : "evolutionary", &out->strategy, d));
  bool is_fast = out->strategy == LOOM_SEARCH_FAST;
  if (is_fast && o->space)
    return loom_diag_error(d, (loom_loc){0}, "the fast strategy makes its own candidates: "
                           "a space does not apply");
  if (o->trials < 1)
    return loom_diag_error(d, (loom_loc){0}, "trials must be positive, not %d", o->trials);
  out->trials = o->trials;
  out->seed = o->seed;
  out->target = t;
  out->runner.check = true;
  out->runner.timeout_ms = 10000;
  out->runner.seed = o->seed;
  return LOOM_OK;
}

static loom_status tune_all(const loom_embed_module *m, const loom_embed_tune_options *o,
                            loom_tune_options *t, loom_db *db, loom_buf *out,
                            loom_diag *d) {
  loom_arena *a = loom_arena_new();
  loom_task *tasks;
  int n = 0;
  if (!a || loom_tune_extract_tasks(a, m->module, &tasks, &n) != LOOM_OK) {
    loom_arena_free(a);
    return loom_diag_error(d, (loom_loc){0}, "out of memory finding the tasks");
  }
  size_t space_len = o->space ? strlen(o->space) : 0;
  if (o->space)
    loom_diag_set_source(d, o->space, space_len);
  loom_status st = LOOM_OK;
  int n_tuned = 0;
  loom_buf_putc(out, '[');
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    const loom_func *f = tasks[i].func;
    if (o->func && strcmp(f->name, o->func))
      continue;
    for (int p = 0; p < f->n_params && st == LOOM_OK; p++)
      if (!f->params[p].buffer)
        st = loom_diag_error(d, f->loc, "%s has scalar parameters, which tuning "
                             "cannot give values yet", f->name);
    loom_tune_result r;
    if (st != LOOM_OK ||
        (st = loom_tune_task(&tasks[i], o->space, space_len, "<space>", db, t, &r, d)) !=
            LOOM_OK)
      break;
    if (n_tuned++)
      loom_buf_puts(out, ", ");
    loom_tune_result_json(&tasks[i], &r, out);
    loom_tune_result_free(&r);
  }
  loom_buf_putc(out, ']');
  if (st == LOOM_OK && o->func && !n_tuned)
    st = loom_diag_error(d, (loom_loc){0}, "no function named '%s'", o->func);
  loom_arena_free(a);
  return st;
}

char *loom_embed_tune(const loom_embed_module *m, const loom_embed_tune_options *o,
                      loom_diag *d) {
  loom_target target;
  loom_tune_options t;
  if (options_of(o, &target, &t, d) != LOOM_OK)
    return NULL;
  progress_ctx pc = {o};
  if (o->progress) {
    t.progress = report;
    t.progress_ctx = &pc;
  }
  loom_db *db = NULL;
  loom_model *model = NULL;
  loom_buf out;
  loom_buf_init(&out);
  loom_status st = loom_db_open(o->db ? o->db : "loom.db", &db, d);
  if (st == LOOM_OK)
    st = loom_tune_model_open(db, o->is_random_model, o->seed, &model, NULL, d);
  t.model = model;
  if (st == LOOM_OK)
    st = tune_all(m, o, &t, db, &out, d);
  if (st == LOOM_OK)
    st = loom_tune_model_save(model, db, d);
  loom_model_free(model);
  loom_db_close(db);
  if (st == LOOM_OK && out.has_failed)
    st = loom_diag_error(d, (loom_loc){0}, "out of memory");
  if (st != LOOM_OK) {
    if (!d->has_error)
      loom_diag_error(d, (loom_loc){0}, "out of memory tuning");
    loom_buf_free(&out);
    return NULL;
  }
  return loom_buf_take(&out);
}
