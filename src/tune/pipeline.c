/* The module pipeline (K2): module passes in the order the user gives,
 * each function taken by the first pass that handles it. */
#include "loom/dispatch.h"
#include "loom/schedule.h"
#include "loom/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pass_names[LOOM_PASS_COUNT_] = {"dispatch", "manual", "apply-db",
                                                         "dlight", "default"};

const char *loom_pass_name(loom_pass_kind k) {
  return k >= 0 && k < LOOM_PASS_COUNT_ ? pass_names[k] : "?";
}

loom_status loom_pipeline_parse(const char *spec, loom_pipeline *out, loom_diag *d) {
  *out = (loom_pipeline){0};
  const char *p = spec ? spec : "";
  while (*p) {
    size_t len = strcspn(p, ","), name_len = strcspn(p, ",=");
    int k = -1;
    for (int i = 0; i < LOOM_PASS_COUNT_; i++)
      if (strlen(pass_names[i]) == name_len && !strncmp(p, pass_names[i], name_len))
        k = i;
    if (k < 0)
      return loom_diag_error(d, (loom_loc){0},
                             "unknown pass '%.*s' in the pipeline (dispatch, manual=DIR, "
                             "apply-db, dlight or default)", (int)len, p);
    if (k == LOOM_PASS_MANUAL && len <= name_len + 1)
      return loom_diag_error(d, (loom_loc){0},
                             "the manual pass needs its folder of pairs: manual=DIR");
    if (k != LOOM_PASS_MANUAL && name_len < len)
      return loom_diag_error(d, (loom_loc){0}, "pass '%.*s' takes no value", (int)name_len, p);
    if (k == LOOM_PASS_MANUAL) {
      out->manual_dir = p + name_len + 1;
      out->manual_dir_len = len - name_len - 1;
    }
    for (int i = 0; i < out->n; i++)
      if (out->passes[i] == (loom_pass_kind)k)
        return loom_diag_error(d, (loom_loc){0}, "pass '%s' is in the pipeline twice",
                               pass_names[k]);
    if (out->n == LOOM_PIPELINE_MAX)
      return loom_diag_error(d, (loom_loc){0}, "more than %d passes", LOOM_PIPELINE_MAX);
    out->passes[out->n++] = (loom_pass_kind)k;
    p += len;
    if (*p == ',')
      p++;
  }
  if (out->n == 0)
    return loom_diag_error(d, (loom_loc){0},
                           "an empty pipeline (give passes such as dispatch,apply-db,default)");
  return LOOM_OK;
}

typedef struct owned {
  loom_arena *arena;
  loom_sched **scheds; /* dlight's, one per function at most */
  int n_scheds;
  loom_applied *applied; /* apply-db's, one per pass at most */
  int n_applied;
} owned;

typedef struct run {
  const loom_module *m;
  const loom_target *t;
  loom_db *db;
  const loom_manual *manual;
  loom_compiled *out;
  owned *own;
  loom_func **fs;
} run;

static loom_status say(run *r, int i, const char *fmt, const char *detail) {
  char buf[512];
  snprintf(buf, sizeof buf, fmt, detail);
  r->out->why[i] = loom_arena_strdup(r->own->arena, buf);
  return r->out->why[i] ? LOOM_OK : LOOM_NOMEM;
}

static loom_status take(run *r, int i, loom_pass_kind k, const loom_func *g) {
  r->fs[i] = (loom_func *)g;
  r->out->pass[i] = pass_names[k];
  return LOOM_OK;
}

static loom_status dispatch(run *r, int i) {
  const loom_func *f = r->m->funcs[i], *g;
  const loom_func *nf = loom_tune_normalized(r->own->arena, f);
  char why[256];
  int n;
  if (!nf)
    return LOOM_NOMEM;
  TRY(loom_dispatch_func(r->own->arena, nf, &g, &n, why, sizeof why));
  if (n == 0)
    return say(r, i, "dispatch: %s", why);
  char what[64];
  snprintf(what, sizeof what, "%d", n);
  TRY(say(r, i, "%s loop nest(s) computed by BLAS", what));
  return take(r, i, LOOM_PASS_DISPATCH, g);
}

static loom_status manual(run *r, int i) {
  const char *file = NULL;
  const loom_func *g = loom_manual_find(r->manual, r->own->arena, r->m->funcs[i], &file);
  if (!g)
    return say(r, i, "manual: no pair of %s matches it", "the folder");
  TRY(say(r, i, "the replacement in %s", file));
  return take(r, i, LOOM_PASS_MANUAL, g);
}

static loom_status dlight(run *r, int i, loom_pass_kind k) {
  const loom_func *f = r->m->funcs[i], *g;
  loom_sched *s = NULL;
  const char *rule = NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_tune_dlight(r->own->arena, f, r->t, NULL, 0, &s, &g, &rule, NULL, &d);
  loom_diag_free(&d);
  if (st != LOOM_OK)
    return st;
  if (s)
    r->own->scheds[r->own->n_scheds++] = s;
  if (!rule && k == LOOM_PASS_DLIGHT)
    return say(r, i, "dlight: %s", "no rule takes it, or it binds threads already");
  TRY(say(r, i, rule ? "dlight's rule %s" : "%s", rule ? rule : "as written (no dlight rule takes it)"));
  return take(r, i, k, g);
}

/* apply-db over every function not taken yet, as one module. */
static loom_status apply_db(run *r, loom_diag *d) {
  if (!r->db)
    return loom_diag_error(d, (loom_loc){0}, "the apply-db pass needs a database (--db PATH)");
  int n = r->m->n_funcs, k = 0;
  loom_module *sub = loom_ir_module(r->own->arena);
  loom_func **fs = loom_arena_alloc(r->own->arena, (size_t)(n ? n : 1) * sizeof *fs);
  int *at = calloc((size_t)(n ? n : 1), sizeof *at);
  if (!sub || !fs || !at) {
    free(at);
    return LOOM_NOMEM;
  }
  for (int i = 0; i < n; i++)
    if (!r->out->pass[i]) {
      at[k] = i;
      fs[k++] = r->m->funcs[i];
    }
  sub->funcs = fs;
  sub->n_funcs = k;
  sub->is_ir_module = true;
  char key[LOOM_TARGET_KEY_MAX];
  loom_target_key(r->t, key, sizeof key);
  loom_applied *ap = &r->own->applied[r->own->n_applied];
  loom_status st = loom_tune_apply_db(sub, r->db, key, ap, d);
  if (st == LOOM_OK)
    r->own->n_applied++;
  for (int j = 0; st == LOOM_OK && j < k; j++) {
    int i = at[j];
    if (ap->is_applied[j]) {
      st = say(r, i, "its best record on %s", key);
      if (st == LOOM_OK)
        st = take(r, i, LOOM_PASS_APPLY_DB, ap->module->funcs[j]);
    } else {
      st = say(r, i, ap->elsewhere[j] ? "apply-db: records only on another target (%s)"
                                      : "apply-db: no record of its workload%s",
               ap->elsewhere[j] ? ap->elsewhere[j] : "");
    }
  }
  free(at);
  return st;
}

loom_status loom_tune_compile(const loom_module *m, const loom_pipeline *p,
                              const loom_target *t, loom_db *db, const loom_manual *man,
                              loom_compiled *out, loom_diag *d) {
  memset(out, 0, sizeof *out);
  int n = m->n_funcs;
  owned *own = calloc(1, sizeof *own);
  if (!own)
    return LOOM_NOMEM;
  out->owned_ = own;
  own->arena = loom_arena_new();
  own->scheds = calloc((size_t)n + 1, sizeof *own->scheds);
  own->applied = calloc(LOOM_PIPELINE_MAX, sizeof *own->applied);
  out->pass = calloc((size_t)n + 1, sizeof *out->pass);
  out->why = calloc((size_t)n + 1, sizeof *out->why);
  out->module = own->arena ? loom_arena_dup(own->arena, m, sizeof *m) : NULL;
  loom_func **fs = own->arena ? loom_arena_alloc(own->arena, ((size_t)n + 1) * sizeof *fs)
                              : NULL;
  loom_status st = own->scheds && own->applied && out->pass && out->why && out->module && fs
                       ? LOOM_OK : LOOM_NOMEM;
  run r = {m, t, db, man, out, own, fs};
  for (int i = 0; i < n && fs; i++)
    fs[i] = m->funcs[i];
  for (int k = 0; k < p->n && st == LOOM_OK; k++) {
    loom_pass_kind kind = p->passes[k];
    if (kind == LOOM_PASS_APPLY_DB) {
      st = apply_db(&r, d);
      continue;
    }
    if (kind == LOOM_PASS_MANUAL && !man) {
      st = loom_diag_error(d, (loom_loc){0}, "the manual pass has no pairs loaded");
      continue;
    }
    for (int i = 0; i < n && st == LOOM_OK; i++) {
      if (out->pass[i])
        continue;
      if (kind == LOOM_PASS_DISPATCH)
        st = dispatch(&r, i);
      else if (kind == LOOM_PASS_MANUAL)
        st = manual(&r, i);
      else if (kind == LOOM_PASS_DLIGHT && t->kind != LOOM_TARGET_CUDA)
        st = say(&r, i, "dlight: %s", "it schedules for cuda targets");
      else if (kind == LOOM_PASS_DLIGHT || t->kind == LOOM_TARGET_CUDA)
        st = dlight(&r, i, kind);
      else if (!(st = say(&r, i, "%s", "as written: the C backend's loops")))
        st = take(&r, i, LOOM_PASS_DEFAULT, m->funcs[i]);
    }
  }
  if (st == LOOM_OK)
    out->module->funcs = fs;
  else
    loom_tune_compiled_free(out);
  return st;
}

void loom_tune_compiled_free(loom_compiled *c) {
  owned *own = c->owned_;
  if (own) {
    for (int i = 0; i < own->n_scheds; i++)
      loom_sched_free(own->scheds[i]);
    for (int i = 0; i < own->n_applied; i++)
      loom_tune_applied_free(&own->applied[i]);
    free(own->scheds);
    free(own->applied);
    loom_arena_free(own->arena);
    free(own);
  }
  free(c->pass);
  free(c->why);
  memset(c, 0, sizeof *c);
}
