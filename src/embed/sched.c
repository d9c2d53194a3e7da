/* Schedules for bindings, driven a script line at a time: each call of a
 * binding's schedule method is one line, and the outputs of earlier lines
 * are named as the trace prints them (loom_sched_run_script). */
#include "embed/embed_impl.h"

#include "loom/schedule.h"

#include <stdlib.h>
#include <string.h>

struct loom_embed_sched {
  loom_sched *s;
};

loom_embed_sched *loom_embed_sched_new(const loom_embed_module *m, uint64_t seed) {
  loom_embed_sched *e = calloc(1, sizeof *e);
  if (e && !(e->s = loom_sched_new(m->module, seed))) {
    free(e);
    return NULL;
  }
  return e;
}

loom_embed_sched *loom_embed_sched_copy(loom_embed_sched *s) {
  loom_embed_sched *e = calloc(1, sizeof *e);
  if (e && !(e->s = loom_sched_copy(s->s))) {
    free(e);
    return NULL;
  }
  return e;
}

void loom_embed_sched_free(loom_embed_sched *s) {
  if (!s)
    return;
  loom_sched_free(s->s);
  free(s);
}

loom_status loom_embed_sched_run(loom_embed_sched *s, const char *text, size_t len,
                                 const char *file, loom_diag *d) {
  return loom_sched_run_script(s->s, text, len, file ? file : "<schedule>", d);
}

int loom_embed_sched_length(const loom_embed_sched *s) {
  return loom_sched_trace(s->s).n_insts;
}

int loom_embed_sched_outputs(const loom_embed_sched *s, int i, int *ids, int max) {
  loom_trace t = loom_sched_trace(s->s);
  if (i < 0 || i >= t.n_insts)
    return 0;
  const loom_inst *in = t.insts[i];
  for (int k = 0; k < in->n_outputs && k < max; k++)
    ids[k] = in->outputs[k];
  return in->n_outputs;
}

int loom_embed_method_is_list(const char *method) {
  static const bool is_list[] = {
#define X(id, json, json_alias, method, method_alias, out, is_list, spec, is_pure, apply) \
  is_list,
#include "loom/schedule_insts.def"
#undef X
  };
  int k = loom_inst_kind_by_method(method);
  return k < 0 ? -1 : is_list[k];
}

int loom_embed_sched_rv_kind(const loom_embed_sched *s, int rv) {
  if (rv < 0 || rv >= loom_sched_trace(s->s).n_rvs)
    return 0;
  switch (loom_sched_rv_kind(s->s, rv)) {
  case LOOM_RV_BLOCK:
    return 'b';
  case LOOM_RV_LOOP:
    return 'l';
  case LOOM_RV_EXPR:
    return 'v';
  }
  return 0;
}

int64_t loom_embed_sched_rv_value(const loom_embed_sched *s, int rv) {
  return loom_sched_rv_value(s->s, rv);
}

char *loom_embed_sched_trace(const loom_embed_sched *s, bool json, loom_dialect dialect) {
  loom_trace t = loom_sched_trace(s->s);
  loom_buf b;
  loom_buf_init(&b);
  if (json)
    loom_trace_print_json(&t, dialect, &b);
  else
    loom_trace_print_py(&t, dialect, &b);
  if (b.has_failed) {
    loom_buf_free(&b);
    return NULL;
  }
  return loom_buf_take(&b);
}

/* The module of a schedule lives in the schedule's memory and shares the
 * nodes of the module it started from: the copy is the binding's own. */
loom_embed_module *loom_embed_sched_module(const loom_embed_sched *s, loom_diag *d) {
  return embed_module_copy(loom_sched_module(s->s), "<scheduled>", d);
}
