/* The module pipeline (K2): module passes in the order the user gives,
 * each function taken by the first pass that handles it. */
#include "loom/dispatch.h"
#include "loom/schedule.h"
#include "tune/tune_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pass_names[LOOM_PASS_COUNT_] = {"dispatch", "manual", "apply-db",
                                                         "dlight", "default", "best"};

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
                             "apply-db, dlight, default or best)", (int)len, p);
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
  loom_sched **scheds; /* dlight's */
  int n_scheds, cap_scheds;
  loom_applied *applied; /* apply-db's, one per function it was asked about */
  int n_applied, cap_applied;
  loom_db *db;           /* loom_tune_compile_spec's, closed with the result */
  loom_manual *manual;
} owned;

typedef struct run {
  const loom_module *m;
  const loom_target *t;
  loom_db *db;
  const loom_manual *manual;
  loom_compiled *out;
  owned *own;
  loom_func **fs;
  char key[LOOM_TARGET_KEY_MAX]; /* the target's, for apply-db and best */
} run;

/* Grows an array of owned (elements of size, *cap of them) by one slot. */
static void *grow(void *items, int n, int *cap, size_t size) {
  if (n < *cap)
    return items;
  int c = *cap ? 2 * *cap : 8;
  void *p = realloc(items, (size_t)c * size);
  if (p)
    *cap = c;
  return p;
}

/* A pass's offer for one function: what it would make of it (NULL: it does
 * not take it) and why. */
typedef struct offer {
  loom_pass_kind kind;
  const loom_func *g;
  char why[1024];
} offer;

static loom_status offer_dlight(run *r, const loom_func *f, offer *o);

static loom_status offer_dispatch(run *r, const loom_func *f, offer *o) {
  const loom_func *nf = loom_tune_normalized(r->own->arena, f);
  char why[256];
  int n;
  if (!nf)
    return LOOM_NOMEM;
  TRY(loom_dispatch_func(r->own->arena, nf, r->t, &o->g, &n, why, sizeof why));
  if (n == 0) {
    o->g = NULL;
    snprintf(o->why, sizeof o->why, "dispatch: %s", why);
    return LOOM_OK;
  }
  snprintf(o->why, sizeof o->why, "%d loop nest(s) computed by %s", n, why);
  if (r->t->kind != LOOM_TARGET_CUDA)
    return LOOM_OK;
  /* On a GPU the nests no library takes would run in one thread:
   * dlight's Fallback binds them around the library's. */
  offer rest = {.kind = LOOM_PASS_DLIGHT};
  TRY(offer_dlight(r, o->g, &rest));
  if (rest.g) {
    o->g = rest.g;
    snprintf(o->why + strlen(o->why), sizeof o->why - strlen(o->why), "; the rest by %s",
             rest.why);
  }
  return LOOM_OK;
}

static loom_status offer_manual(run *r, const loom_func *f, offer *o, loom_diag *d) {
  if (!r->manual)
    return loom_diag_error(d, (loom_loc){0}, "the manual pass has no pairs loaded");
  const char *file = NULL;
  o->g = loom_manual_find(r->manual, r->own->arena, f, &file);
  snprintf(o->why, sizeof o->why, o->g ? "the replacement in %s" : "manual: no pair matches it%s",
           o->g ? file : "");
  return LOOM_OK;
}

/* apply-db on f alone: a module of one function. */
static loom_status offer_apply_db(run *r, const loom_func *f, offer *o, loom_diag *d) {
  if (!r->db)
    return loom_diag_error(d, (loom_loc){0}, "the apply-db pass needs a database (--db PATH)");
  owned *own = r->own;
  loom_module *sub = loom_ir_module(own->arena);
  loom_func **fs = loom_arena_alloc(own->arena, sizeof *fs);
  loom_applied *ap = grow(own->applied, own->n_applied, &own->cap_applied, sizeof *ap);
  if (!sub || !fs || !ap)
    return LOOM_NOMEM;
  own->applied = ap;
  fs[0] = (loom_func *)f;
  sub->funcs = fs;
  sub->n_funcs = 1;
  sub->is_ir_module = true;
  ap = &own->applied[own->n_applied];
  TRY(loom_tune_apply_db(sub, r->db, r->key, ap, d));
  own->n_applied++;
  o->g = ap->is_applied[0] ? ap->module->funcs[0] : NULL;
  if (o->g)
    snprintf(o->why, sizeof o->why, "its best record on %s", r->key);
  else if (ap->elsewhere[0])
    snprintf(o->why, sizeof o->why, "apply-db: records only on another target (%s)",
             ap->elsewhere[0]);
  else
    snprintf(o->why, sizeof o->why, "apply-db: no record of its workload");
  return LOOM_OK;
}

/* dlight's schedule of f; for default on a cuda target, f as written when
 * no rule takes it. */
static loom_status offer_dlight(run *r, const loom_func *f, offer *o) {
  loom_sched *s = NULL;
  const char *rule = NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_sched **scheds = grow(r->own->scheds, r->own->n_scheds, &r->own->cap_scheds,
                             sizeof *scheds);
  loom_status st = scheds ? LOOM_OK : LOOM_NOMEM;
  if (scheds)
    r->own->scheds = scheds;
  if (st == LOOM_OK)
    st = loom_tune_dlight(r->own->arena, f, r->t, NULL, 0, &s, &o->g, &rule, NULL, &d);
  loom_diag_free(&d);
  if (s)
    r->own->scheds[r->own->n_scheds++] = s;
  if (st == LOOM_OK && rule)
    snprintf(o->why, sizeof o->why, "dlight's rule %s", rule);
  else if (st == LOOM_OK && o->kind == LOOM_PASS_DLIGHT)
    snprintf(o->why, sizeof o->why, "dlight: no rule takes it, or it binds threads already");
  else if (st == LOOM_OK)
    snprintf(o->why, sizeof o->why, "as written (no dlight rule takes it)");
  if (!rule && o->kind == LOOM_PASS_DLIGHT)
    o->g = NULL;
  return st;
}

static loom_status offer_of(run *r, const loom_func *f, loom_pass_kind k, offer *o,
                            loom_diag *d) {
  *o = (offer){.kind = k};
  switch (k) {
  case LOOM_PASS_DISPATCH:
    return offer_dispatch(r, f, o);
  case LOOM_PASS_MANUAL:
    return offer_manual(r, f, o, d);
  case LOOM_PASS_APPLY_DB:
    return offer_apply_db(r, f, o, d);
  case LOOM_PASS_DLIGHT:
    if (r->t->kind != LOOM_TARGET_CUDA) {
      snprintf(o->why, sizeof o->why, "dlight: it schedules for cuda targets");
      return LOOM_OK;
    }
    return offer_dlight(r, f, o);
  case LOOM_PASS_DEFAULT:
    if (r->t->kind == LOOM_TARGET_CUDA)
      return offer_dlight(r, f, o);
    o->g = f;
    snprintf(o->why, sizeof o->why, "as written: the C backend's loops");
    return LOOM_OK;
  default:
    return loom_diag_error(d, (loom_loc){0}, "pass '%s' makes no offer", loom_pass_name(k));
  }
}

static loom_status take(run *r, int i, const offer *o) {
  if (!(r->out->why[i] = loom_arena_strdup(r->own->arena, o->why)))
    return LOOM_NOMEM;
  if (o->g) {
    r->fs[i] = (loom_func *)o->g;
    r->out->pass[i] = pass_names[o->kind];
  }
  return LOOM_OK;
}

/* ---- best: the fastest offer, measured ---------------------------------------- */

/* The interpreter checks a candidate when it can run the function in
 * seconds; beyond that the offers are trusted (each pass's output is
 * checked against the interpreter in the tests, at sizes it can run). */
#define CHECK_MAX_OPS 1e8

/* The database's name for the choice best made for f on this target. */
static loom_status choice_key(run *r, const loom_func *f, char *out, size_t n) {
  loom_func *anon = tune_workload_form(r->own->arena, f);
  if (!anon)
    return LOOM_NOMEM;
  snprintf(out, n, "best/%016llx/%s", (unsigned long long)loom_ir_hash_func(anon), r->key);
  return LOOM_OK;
}

/* Measures the offers o[0..n) on f's workload, the most promising first
 * (a slow one is stopped early against the fastest so far); *pick is the
 * fastest that ran, -1 when none did; why gets every time. */
static loom_status measure(run *r, const loom_func *f, offer *o, int n, int *pick,
                           char *why, size_t why_n, loom_diag *d) {
  const loom_func *funcs[LOOM_PASS_COUNT_];
  for (int j = 0; j < n; j++)
    funcs[j] = o[j].g;
  loom_builder_options bo = {.target = r->t, .per_file = n, .jobs = 1};
  loom_build_set b;
  TRY(loom_tune_build(funcs, n, &bo, &b));
  bool is_checked = loom_tune_flops(f) <= CHECK_MAX_OPS;
  /* Every offer runs at the target's core count, set in its child before
   * the first call. */
  int threads = r->t->kind == LOOM_TARGET_CPU ? r->t->cpu.cores : 0;
  loom_runner_options ro = {.target = r->t, .check = is_checked, .seed = 1,
                            .threads = threads};
  double best = 0;
  *pick = -1;
  size_t used = (size_t)snprintf(why, why_n, "fastest of");
  loom_status st = LOOM_OK;
  for (int j = 0; j < n && st == LOOM_OK; j++) {
    loom_measured m = {0};
    st = loom_tune_run(f, &b.items[j].kernel, 1, &ro, &m, d);
    if (st != LOOM_OK)
      break;
    double ms = m.timing.median_ms;
    const char *name = pass_names[o[j].kind];
    if (m.error)
      used += (size_t)snprintf(why + used, used < why_n ? why_n - used : 0, " %s (failed: %.80s)",
                               name, m.error);
    else
      used += (size_t)snprintf(why + used, used < why_n ? why_n - used : 0, " %s %.4g ms%s",
                               name, ms, m.is_stopped ? " (stopped)" : "");
    if (!m.error && !m.is_stopped && (*pick < 0 || ms < best)) {
      best = ms;
      *pick = j;
      ro.best_ms = ms;
    }
    loom_tune_measured_free(&m, 1);
  }
  if (st == LOOM_OK && !is_checked && used < why_n)
    snprintf(why + used, why_n - used, " (not checked: too large for the interpreter)");
  loom_tune_build_free(&b);
  return st;
}

static loom_status best_of(run *r, int i, loom_diag *d) {
  const loom_func *f = r->m->funcs[i];
  static const loom_pass_kind order[] = {LOOM_PASS_DISPATCH, LOOM_PASS_MANUAL,
                                         LOOM_PASS_APPLY_DB, LOOM_PASS_DEFAULT};
  offer o[LOOM_PASS_COUNT_];
  int n = 0;
  for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
    if ((order[k] == LOOM_PASS_MANUAL && !r->manual) || (order[k] == LOOM_PASS_APPLY_DB && !r->db))
      continue;
    TRY(offer_of(r, f, order[k], &o[n], d));
    n += o[n].g != NULL;
  }
  if (n == 1) {
    snprintf(o[0].why + strlen(o[0].why), sizeof o[0].why - strlen(o[0].why),
             " (best: the only offer)");
    return take(r, i, &o[0]);
  }
  char key[128];
  TRY(choice_key(r, f, key, sizeof key));
  loom_buf kept;
  loom_buf_init(&kept);
  bool found = false;
  if (r->db)
    TRY(loom_db_load_state(r->db, key, &kept, &found, d));
  for (int j = 0; found && j < n; j++)
    if (kept.len > 0 && !strncmp(kept.data, pass_names[o[j].kind], kept.len) &&
        strlen(pass_names[o[j].kind]) == kept.len) {
      loom_buf_free(&kept);
      snprintf(o[j].why + strlen(o[j].why), sizeof o[j].why - strlen(o[j].why),
               " (best: chosen by an earlier measurement, kept in the database)");
      return take(r, i, &o[j]);
    }
  loom_buf_free(&kept);
  int pick;
  char why[768];
  TRY(measure(r, f, o, n, &pick, why, sizeof why, d));
  if (pick < 0) {
    offer none = {.kind = LOOM_PASS_BEST};
    snprintf(none.why, sizeof none.why, "best: %s", why);
    return take(r, i, &none);
  }
  if (r->db) {
    const char *name = pass_names[o[pick].kind];
    TRY(loom_db_save_state(r->db, key, name, strlen(name), d));
  }
  snprintf(o[pick].why, sizeof o[pick].why, "%s", why);
  return take(r, i, &o[pick]);
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
  out->pass = calloc((size_t)n + 1, sizeof *out->pass);
  out->why = calloc((size_t)n + 1, sizeof *out->why);
  out->module = own->arena ? loom_arena_dup(own->arena, m, sizeof *m) : NULL;
  loom_func **fs = own->arena ? loom_arena_alloc(own->arena, ((size_t)n + 1) * sizeof *fs)
                              : NULL;
  loom_status st = out->pass && out->why && out->module && fs ? LOOM_OK : LOOM_NOMEM;
  run r = {m, t, db, man, out, own, fs, {0}};
  loom_target_key(t, r.key, sizeof r.key);
  for (int i = 0; i < n && fs; i++)
    fs[i] = m->funcs[i];
  for (int k = 0; k < p->n && st == LOOM_OK; k++)
    for (int i = 0; i < n && st == LOOM_OK; i++) {
      if (out->pass[i])
        continue;
      offer o;
      if (p->passes[k] == LOOM_PASS_BEST)
        st = best_of(&r, i, d);
      else if ((st = offer_of(&r, m->funcs[i], p->passes[k], &o, d)) == LOOM_OK)
        st = take(&r, i, &o);
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
    loom_db_close(own->db);
    loom_manual_free(own->manual);
    loom_arena_free(own->arena);
    free(own);
  }
  free(c->pass);
  free(c->why);
  memset(c, 0, sizeof *c);
}

loom_status loom_tune_compile_spec(const loom_module *m, const char *spec,
                                   const loom_target *t, const char *db_path,
                                   loom_compiled *out, loom_diag *d) {
  memset(out, 0, sizeof *out);
  loom_pipeline p;
  TRY(loom_pipeline_parse(spec, &p, d));
  bool reads_db = false;
  for (int i = 0; i < p.n; i++)
    reads_db |= p.passes[i] == LOOM_PASS_APPLY_DB;
  if (reads_db && !db_path)
    db_path = "loom.db";
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", (int)p.manual_dir_len, p.manual_dir ? p.manual_dir : "");
  loom_manual *man = NULL;
  loom_db *db = NULL;
  loom_status st = LOOM_OK;
  if (p.manual_dir && !(man = loom_manual_new()))
    st = LOOM_NOMEM;
  if (st == LOOM_OK && man)
    st = loom_manual_load(man, dir, d);
  if (st == LOOM_OK && db_path)
    st = loom_db_open(db_path, &db, d);
  if (st == LOOM_OK)
    st = loom_tune_compile(m, &p, t, db, man, out, d);
  /* On failure too: d may point into the pairs' files. */
  owned *own = out->owned_ ? out->owned_ : calloc(1, sizeof *own);
  if (!own) {
    loom_db_close(db);
    loom_manual_free(man);
    return LOOM_NOMEM;
  }
  out->owned_ = own;
  own->db = db;
  own->manual = man;
  return st;
}
