/* The apply-db pass: the tuning database as a compiler pass. */
#include "loom/schedule.h"
#include "tune/tune_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct owned {
  loom_arena *arena;
  loom_sched **scheds;
  int n_scheds;
} owned;

/* The target of the best record of workload w on any target, in a; NULL
 * when it has none. */
static loom_status best_elsewhere(loom_arena *a, loom_db *db, int64_t w,
                                  const char **out, loom_diag *d) {
  loom_db_records top;
  TRY(loom_db_top_k(db, w, NULL, 1, &top, d));
  *out = NULL;
  loom_status st = LOOM_OK;
  if (top.n > 0 && !(*out = loom_arena_strdup(a, top.items[0].target)))
    st = LOOM_NOMEM;
  loom_db_records_free(&top);
  return st;
}

/* Replays record r's trace on s, its decisions checked. A refusal is located
 * in the record's text, which the caller frees before the diagnostic is
 * shown: the diagnostic lets go of that text and names the record. */
static loom_status replay_record(loom_sched *s, const loom_db_record *r,
                                 loom_arena *a, loom_diag *d) {
  const char *source = d->source;
  size_t source_len = d->source_len;
  loom_trace t;
  loom_status st = loom_trace_read_json(r->trace, strlen(r->trace), "database",
                                        a, &t, d);
  if (st == LOOM_OK)
    st = loom_trace_apply(&t, s, LOOM_REPLAY_CHECK, d);
  if (st == LOOM_OK) {
    loom_diag_set_source(d, source, source_len);
    return LOOM_OK;
  }
  loom_diag_set_source(d, NULL, 0);
  loom_diag_note(d, (loom_loc){0},
                 "in record %lld of workload %lld (loom db show %lld)",
                 (long long)r->id, (long long)r->workload,
                 (long long)r->workload);
  return st;
}

/* Replays the best record of f's workload on target; *g stays NULL when
 * there is none, and *elsewhere then names another target that has one. */
static loom_status apply_one(owned *own, const loom_func *f, loom_db *db,
                             const char *target, loom_func **g,
                             const char **elsewhere, loom_diag *d) {
  loom_arena *a = own->arena;
  loom_func *anon = tune_workload_form(a, f);
  int64_t w;
  *g = NULL;
  if (!anon)
    return LOOM_NOMEM;
  TRY(loom_db_find_workload(db, anon, &w, d));
  if (!w)
    return LOOM_OK;
  loom_db_records top;
  TRY(loom_db_top_k(db, w, target, 1, &top, d));
  if (top.n == 0 && target) {
    loom_db_records_free(&top);
    return best_elsewhere(a, db, w, elsewhere, d);
  }
  loom_status st = LOOM_OK;
  loom_module *m = loom_ir_module(a);
  loom_func **fs = loom_arena_alloc(a, sizeof *fs);
  loom_sched *s = NULL;
  if (top.n == 0 || !m || !fs) {
    st = top.n == 0 ? LOOM_OK : LOOM_NOMEM;
  } else {
    fs[0] = anon;
    m->funcs = fs;
    m->n_funcs = 1;
    m->is_ir_module = true;
    s = loom_sched_new(m, 0);
    st = s ? replay_record(s, &top.items[0], a, d) : LOOM_NOMEM;
  }
  if (st == LOOM_OK && s) {
    own->scheds[own->n_scheds++] = s;
    const loom_func *sf = loom_sched_module(s)->funcs[0];
    loom_func *out = loom_arena_dup(a, sf, sizeof *sf);
    loom_attr *attrs = loom_arena_alloc(a, (size_t)(f->n_attrs + 1) * sizeof *attrs);
    loom_value *yes = loom_ir_value_expr(a, loom_ir_int(a, LOOM_BOOL, 1));
    if (!out || !attrs || !yes)
      return LOOM_NOMEM;
    memcpy(attrs, f->attrs, (size_t)f->n_attrs * sizeof *attrs);
    out->n_attrs = f->n_attrs;
    if (!loom_ir_attr_get(f->attrs, f->n_attrs, "tir.is_scheduled"))
      attrs[out->n_attrs++] = (loom_attr){"tir.is_scheduled", yes};
    out->attrs = attrs;
    out->name = f->name;
    *g = out;
  } else {
    loom_sched_free(s);
  }
  loom_db_records_free(&top);
  return st;
}

loom_status loom_tune_apply_db(const loom_module *m, loom_db *db,
                               const char *target, loom_applied *out,
                               loom_diag *d) {
  memset(out, 0, sizeof *out);
  owned *own = calloc(1, sizeof *own);
  if (!own)
    return LOOM_NOMEM;
  out->owned_ = own;
  own->arena = loom_arena_new();
  own->scheds = calloc((size_t)(m->n_funcs + 1), sizeof *own->scheds);
  out->module = own->arena ? loom_arena_dup(own->arena, m, sizeof *m) : NULL;
  out->is_applied = calloc((size_t)(m->n_funcs + 1), sizeof *out->is_applied);
  out->elsewhere = calloc((size_t)(m->n_funcs + 1), sizeof *out->elsewhere);
  loom_func **fs = own->arena ? loom_arena_alloc(own->arena, (size_t)(m->n_funcs + 1) * sizeof *fs) : NULL;
  loom_status st = own->scheds && out->module && out->is_applied &&
                            out->elsewhere && fs
                        ? LOOM_OK
                        : LOOM_NOMEM;
  for (int i = 0; i < m->n_funcs && st == LOOM_OK; i++) {
    loom_func *g;
    st = apply_one(own, m->funcs[i], db, target, &g, &out->elsewhere[i], d);
    fs[i] = g ? g : m->funcs[i];
    out->is_applied[i] = g != NULL;
    out->n_applied += g != NULL;
  }
  if (st == LOOM_OK)
    out->module->funcs = fs;
  else
    loom_tune_applied_free(out);
  return st;
}

void loom_tune_applied_free(loom_applied *a) {
  owned *own = a->owned_;
  if (own) {
    for (int i = 0; i < own->n_scheds; i++)
      loom_sched_free(own->scheds[i]);
    free(own->scheds);
    loom_arena_free(own->arena);
    free(own);
  }
  free(a->is_applied);
  free(a->elsewhere);
  memset(a, 0, sizeof *a);
}
