/* Records: one row per measurement. Latencies are kept as a JSON array and
 * their mean in a column of its own, which the top-k query orders by (as
 * MetaSchedule's database ranks records); a failure has no mean and never
 * ranks. */
#include "db/db_impl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void latencies_json(const loom_db_record *r, loom_buf *out, double *mean) {
  double sum = 0;
  loom_buf_putc(out, '[');
  for (int i = 0; i < r->n_latencies; i++) {
    loom_buf_printf(out, "%s%.17g", i ? ", " : "", r->latencies_ms[i]);
    sum += r->latencies_ms[i];
  }
  loom_buf_putc(out, ']');
  *mean = r->n_latencies ? sum / r->n_latencies : 0;
}

static loom_status insert(loom_db *db, sqlite3_stmt *st, const loom_db_record *r,
                          loom_diag *d) {
  loom_loc loc = {db->path, 0, 0};
  if (!r->trace || !r->target)
    return loom_diag_error(d, loc, "a record needs a trace and a target");
  if (r->n_latencies == 0 && !r->error)
    return loom_diag_error(d, loc, "a record needs latencies or an error");
  loom_buf lat;
  loom_buf_init(&lat);
  double mean;
  latencies_json(r, &lat, &mean);
  if (lat.has_failed)
    return LOOM_NOMEM;
  sqlite3_reset(st);
  sqlite3_bind_int64(st, 1, r->workload);
  sqlite3_bind_text(st, 2, r->target, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, r->trace, -1, SQLITE_STATIC);
  /* A failure may keep the latencies it had before it was found wrong;
   * only a success has a mean, which is what the top-k query ranks. */
  if (r->n_latencies) {
    sqlite3_bind_text(st, 4, lat.data, (int)lat.len, SQLITE_TRANSIENT);
    if (r->error)
      sqlite3_bind_null(st, 5);
    else
      sqlite3_bind_double(st, 5, mean);
  } else {
    sqlite3_bind_null(st, 4);
    sqlite3_bind_null(st, 5);
  }
  if (r->error)
    sqlite3_bind_text(st, 6, r->error, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 6);
  sqlite3_bind_int64(st, 7, r->created ? r->created : (int64_t)time(NULL));
  loom_buf_free(&lat);
  if (sqlite3_step(st) != SQLITE_DONE)
    return db_error(db, d, "adding a record");
  return LOOM_OK;
}

loom_status db_insert_records(loom_db *db, const loom_db_record *records,
                              int n, loom_diag *d) {
  sqlite3_stmt *st = NULL;
  loom_status s = db_prepare(db, "INSERT INTO record (workload, target, trace, "
                                 "latencies, mean_ms, error, created) VALUES "
                                 "(?1, ?2, ?3, ?4, ?5, ?6, ?7)", &st, d);
  for (int i = 0; i < n && s == LOOM_OK; i++)
    s = insert(db, st, &records[i], d);
  sqlite3_finalize(st);
  return s;
}

loom_status loom_db_commit_records(loom_db *db, const loom_db_record *records,
                                   int n, loom_diag *d) {
  TRY(db_begin(db, d));
  loom_status s = db_insert_records(db, records, n, d);
  return s == LOOM_OK ? db_commit(db, d) : (db_rollback(db), s);
}

void loom_db_records_free(loom_db_records *r) {
  loom_arena_free(r->arena);
  free(r->items);
  memset(r, 0, sizeof *r);
}

/* Parses "[1.5, 2.25]" into doubles in a. */
static int parse_latencies(loom_arena *a, const char *s, double **out) {
  if (!s)
    return 0;
  int n = 1;
  for (const char *p = s; *p; p++)
    n += *p == ',';
  double *v = loom_arena_alloc(a, (size_t)n * sizeof *v);
  if (!v)
    return 0;
  int k = 0;
  const char *p = strchr(s, '[');
  for (p = p ? p + 1 : s; k < n;) {
    char *end;
    double x = strtod(p, &end);
    if (end == p)
      break;
    v[k++] = x;
    p = strchr(end, ',');
    if (!p)
      break;
    p++;
  }
  *out = v;
  return k;
}

static loom_status read_rows(loom_db *db, sqlite3_stmt *st, loom_db_records *out,
                             loom_diag *d) {
  memset(out, 0, sizeof *out);
  if (!(out->arena = loom_arena_new()))
    return LOOM_NOMEM;
  int cap = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (out->n == cap) {
      cap = cap ? 2 * cap : 16;
      loom_db_record *p = realloc(out->items, (size_t)cap * sizeof *p);
      if (!p)
        return LOOM_NOMEM;
      out->items = p;
    }
    loom_db_record *r = &out->items[out->n++];
    double *lat = NULL;
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->workload = sqlite3_column_int64(st, 1);
    r->target = db_text(out->arena, st, 2);
    r->trace = db_text(out->arena, st, 3);
    r->n_latencies = parse_latencies(out->arena, (const char *)sqlite3_column_text(st, 4), &lat);
    r->latencies_ms = lat;
    r->error = db_text(out->arena, st, 5);
    r->created = sqlite3_column_int64(st, 6);
  }
  if (rc != SQLITE_DONE)
    return db_error(db, d, "reading records");
  return loom_arena_status(out->arena);
}

#define RECORD_COLUMNS "id, workload, target, trace, latencies, error, created"

loom_status loom_db_top_k(loom_db *db, int64_t workload, const char *target,
                          int k, loom_db_records *out, loom_diag *d) {
  sqlite3_stmt *st;
  TRY(db_prepare(db, "SELECT " RECORD_COLUMNS " FROM record WHERE workload = ?1 "
                     "AND mean_ms IS NOT NULL AND (?2 IS NULL OR target = ?2) "
                     "ORDER BY mean_ms, id LIMIT ?3", &st, d));
  sqlite3_bind_int64(st, 1, workload);
  if (target)
    sqlite3_bind_text(st, 2, target, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 2);
  sqlite3_bind_int(st, 3, k);
  loom_status s = read_rows(db, st, out, d);
  sqlite3_finalize(st);
  if (s != LOOM_OK)
    loom_db_records_free(out);
  return s;
}

loom_status loom_db_all_records(loom_db *db, int64_t workload,
                                loom_db_records *out, loom_diag *d) {
  sqlite3_stmt *st;
  TRY(db_prepare(db, "SELECT " RECORD_COLUMNS " FROM record WHERE ?1 = 0 OR "
                     "workload = ?1 ORDER BY id", &st, d));
  sqlite3_bind_int64(st, 1, workload);
  loom_status s = read_rows(db, st, out, d);
  sqlite3_finalize(st);
  if (s != LOOM_OK)
    loom_db_records_free(out);
  return s;
}

void loom_db_workloads_free(loom_db_workloads *w) {
  loom_arena_free(w->arena);
  free(w->items);
  memset(w, 0, sizeof *w);
}

loom_status loom_db_list_workloads(loom_db *db, loom_db_workloads *out,
                                   loom_diag *d) {
  memset(out, 0, sizeof *out);
  sqlite3_stmt *st;
  TRY(db_prepare(db, "SELECT w.id, w.hash, w.script, count(r.id), "
                     "count(r.id) - count(r.mean_ms), min(r.mean_ms) FROM workload w "
                     "LEFT JOIN record r ON r.workload = w.id GROUP BY w.id "
                     "ORDER BY w.id", &st, d));
  loom_status s = (out->arena = loom_arena_new()) ? LOOM_OK : LOOM_NOMEM;
  int cap = 0, rc = SQLITE_DONE;
  while (s == LOOM_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (out->n == cap) {
      cap = cap ? 2 * cap : 16;
      loom_db_workload_info *p = realloc(out->items, (size_t)cap * sizeof *p);
      if (!p) {
        s = LOOM_NOMEM;
        break;
      }
      out->items = p;
    }
    loom_db_workload_info *w = &out->items[out->n++];
    const char *hash = (const char *)sqlite3_column_text(st, 1);
    w->id = sqlite3_column_int64(st, 0);
    w->hash = hash ? strtoull(hash, NULL, 16) : 0;
    w->script = db_text(out->arena, st, 2);
    w->n_records = sqlite3_column_int(st, 3);
    w->n_failures = sqlite3_column_int(st, 4);
    w->best_ms = sqlite3_column_double(st, 5);
  }
  if (s == LOOM_OK && rc != SQLITE_DONE)
    s = db_error(db, d, "listing workloads");
  sqlite3_finalize(st);
  if (s == LOOM_OK)
    s = loom_arena_status(out->arena);
  if (s != LOOM_OK)
    loom_db_workloads_free(out);
  return s;
}

/* A record to grow: its id and its latencies as stored. */
typedef struct stored {
  int64_t id;
  char *latencies;
} stored;

/* The (id, latencies) rows of st; *out is heap, each string too. */
static loom_status read_stored(loom_db *db, sqlite3_stmt *st, stored **out, int *n,
                               loom_diag *d) {
  int cap = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 4;
      stored *p = realloc(*out, (size_t)cap * sizeof *p);
      if (!p)
        return LOOM_NOMEM;
      *out = p;
    }
    const char *lat = (const char *)sqlite3_column_text(st, 1);
    char *copy = strdup(lat ? lat : "[]");
    if (!copy)
      return LOOM_NOMEM;
    (*out)[(*n)++] = (stored){sqlite3_column_int64(st, 0), copy};
  }
  return rc == SQLITE_DONE ? LOOM_OK : db_error(db, d, "reading records");
}

/* One record's latencies grown by ms[0..n), its mean recomputed. */
static loom_status grow(loom_db *db, sqlite3_stmt *upd, int64_t id, const char *old,
                        const double *ms, int n, loom_diag *d) {
  loom_arena *a = loom_arena_new();
  double *have = NULL;
  int k = a ? parse_latencies(a, old, &have) : 0;
  double *all = malloc((size_t)(k + n) * sizeof *all);
  if (!a || !all) {
    loom_arena_free(a);
    free(all);
    return LOOM_NOMEM;
  }
  for (int i = 0; i < k; i++)
    all[i] = have[i];
  for (int i = 0; i < n; i++)
    all[k + i] = ms[i];
  loom_db_record r = {.latencies_ms = all, .n_latencies = k + n};
  loom_buf lat;
  loom_buf_init(&lat);
  double mean;
  latencies_json(&r, &lat, &mean);
  loom_status s = lat.has_failed ? LOOM_NOMEM : LOOM_OK;
  if (s == LOOM_OK) {
    sqlite3_reset(upd);
    sqlite3_bind_text(upd, 1, lat.data, (int)lat.len, SQLITE_TRANSIENT);
    sqlite3_bind_double(upd, 2, mean);
    sqlite3_bind_int64(upd, 3, id);
    if (sqlite3_step(upd) != SQLITE_DONE)
      s = db_error(db, d, "updating a record");
  }
  loom_buf_free(&lat);
  free(all);
  loom_arena_free(a);
  return s;
}

loom_status loom_db_add_latencies(loom_db *db, int64_t workload, const char *target,
                                  const char *trace, const double *ms, int n,
                                  loom_diag *d) {
  sqlite3_stmt *sel = NULL, *upd = NULL;
  TRY(db_begin(db, d));
  loom_status s = db_prepare(db, "SELECT id, latencies FROM record WHERE workload = ?1 "
                                 "AND target = ?2 AND trace = ?3 AND latencies IS NOT NULL "
                                 "AND error IS NULL",
                             &sel, d);
  if (s == LOOM_OK)
    s = db_prepare(db, "UPDATE record SET latencies = ?1, mean_ms = ?2 WHERE id = ?3",
                   &upd, d);
  /* The rows are read to the end before any changes: an update moves a
   * row in the mean's index, where a scan still under way would meet it
   * again. */
  stored *rows = NULL;
  int n_rows = 0;
  if (s == LOOM_OK) {
    sqlite3_bind_int64(sel, 1, workload);
    sqlite3_bind_text(sel, 2, target, -1, SQLITE_STATIC);
    sqlite3_bind_text(sel, 3, trace, -1, SQLITE_STATIC);
    s = read_stored(db, sel, &rows, &n_rows, d);
  }
  for (int i = 0; s == LOOM_OK && i < n_rows; i++)
    s = grow(db, upd, rows[i].id, rows[i].latencies, ms, n, d);
  for (int i = 0; i < n_rows; i++)
    free(rows[i].latencies);
  free(rows);
  sqlite3_finalize(sel);
  sqlite3_finalize(upd);
  return s == LOOM_OK ? db_commit(db, d) : (db_rollback(db), s);
}

loom_status loom_db_disqualify(loom_db *db, int64_t workload, const char *target,
                               const char *trace, const char *error,
                               loom_diag *d) {
  sqlite3_stmt *st = NULL;
  TRY(db_begin(db, d));
  loom_status s = db_prepare(db, "UPDATE record SET error = ?4, mean_ms = NULL "
                                 "WHERE workload = ?1 AND target = ?2 AND trace = ?3 "
                                 "AND error IS NULL",
                             &st, d);
  if (s == LOOM_OK) {
    sqlite3_bind_int64(st, 1, workload);
    sqlite3_bind_text(st, 2, target, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, trace, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, error, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE)
      s = db_error(db, d, "disqualifying a record");
  }
  sqlite3_finalize(st);
  return s == LOOM_OK ? db_commit(db, d) : (db_rollback(db), s);
}
