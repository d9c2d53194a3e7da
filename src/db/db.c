/* Opening the database: WAL journaling (readers never block the writer, a
 * killed writer leaves a journal SQLite recovers from), synchronous=FULL (a
 * commit is on disk when it returns), a busy timeout (concurrent tuners wait
 * for each other instead of failing), and a format check. */
#include "db/db_impl.h"

#include <stdlib.h>
#include <string.h>

/* Written in the meta table; a file with another format is refused. */
#define DB_FORMAT "loom-db"
#define DB_VERSION 1
#define BUSY_TIMEOUT_MS 60000

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS workload ("
    "  id INTEGER PRIMARY KEY,"
    "  hash TEXT NOT NULL,"
    "  script TEXT NOT NULL,"
    "  created INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS workload_hash ON workload(hash);"
    "CREATE TABLE IF NOT EXISTS record ("
    "  id INTEGER PRIMARY KEY,"
    "  workload INTEGER NOT NULL REFERENCES workload(id),"
    "  target TEXT NOT NULL,"
    "  trace TEXT NOT NULL,"
    "  latencies TEXT,"
    "  mean_ms REAL,"
    "  error TEXT,"
    "  created INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS record_best ON record(workload, mean_ms);"
    "CREATE TABLE IF NOT EXISTS state ("
    "  key TEXT PRIMARY KEY,"
    "  value BLOB NOT NULL,"
    "  updated INTEGER NOT NULL);";

loom_status db_error(loom_db *db, loom_diag *d, const char *what) {
  loom_loc loc = {db->path, 0, 0};
  int code = sqlite3_extended_errcode(db->h);
  if (code == SQLITE_NOMEM)
    return LOOM_NOMEM;
  return loom_diag_error(d, loc, "tuning database: %s: %s", what,
                         sqlite3_errmsg(db->h));
}

loom_status db_prepare(loom_db *db, const char *sql, sqlite3_stmt **st,
                       loom_diag *d) {
  if (sqlite3_prepare_v2(db->h, sql, -1, st, NULL) != SQLITE_OK)
    return db_error(db, d, "query");
  return LOOM_OK;
}

static loom_status exec(loom_db *db, const char *sql, loom_diag *d) {
  if (sqlite3_exec(db->h, sql, NULL, NULL, NULL) != SQLITE_OK)
    return db_error(db, d, sql);
  return LOOM_OK;
}

loom_status db_begin(loom_db *db, loom_diag *d) {
  return exec(db, "BEGIN IMMEDIATE", d);
}

loom_status db_commit(loom_db *db, loom_diag *d) {
  loom_status st = exec(db, "COMMIT", d);
  if (st != LOOM_OK)
    db_rollback(db);
  return st;
}

void db_rollback(loom_db *db) {
  if (!sqlite3_get_autocommit(db->h))
    sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

const char *db_text(loom_arena *a, sqlite3_stmt *st, int i) {
  const unsigned char *s = sqlite3_column_text(st, i);
  return s ? loom_arena_strdup(a, (const char *)s) : NULL;
}

/* Reads meta.format and meta.version; writes them into a new file. */
static loom_status check_format(loom_db *db, loom_diag *d) {
  loom_loc loc = {db->path, 0, 0};
  sqlite3_stmt *st;
  TRY(db_prepare(db, "SELECT key, value FROM meta", &st, d));
  const char *format = NULL;
  int version = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *key = (const char *)sqlite3_column_text(st, 0);
    const char *value = (const char *)sqlite3_column_text(st, 1);
    if (key && !strcmp(key, "format"))
      format = value && !strcmp(value, DB_FORMAT) ? DB_FORMAT : "other";
    else if (key && !strcmp(key, "version"))
      version = sqlite3_column_int(st, 1);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE)
    return db_error(db, d, "reading the format");
  if (!format)
    return exec(db, "INSERT INTO meta VALUES ('format', '" DB_FORMAT "'), "
                    "('version', '1')", d);
  if (strcmp(format, DB_FORMAT))
    return loom_diag_error(d, loc, "not a Loom tuning database (its meta table "
                           "names another format)");
  if (version > DB_VERSION)
    return loom_diag_error(d, loc, "tuning database of format version %d; this "
                           "Loom reads version %d and older", version, DB_VERSION);
  return LOOM_OK;
}

/* Refuses an SQLite file whose tables are not Loom's, before adding any. */
static loom_status check_foreign(loom_db *db, loom_diag *d) {
  loom_loc loc = {db->path, 0, 0};
  sqlite3_stmt *st;
  TRY(db_prepare(db, "SELECT count(*), sum(name = 'meta') FROM sqlite_master "
                     "WHERE type = 'table'", &st, d));
  int rc = sqlite3_step(st);
  int n_tables = sqlite3_column_int(st, 0), has_meta = sqlite3_column_int(st, 1);
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW)
    return db_error(db, d, "opening");
  if (n_tables > 0 && !has_meta)
    return loom_diag_error(d, loc, "not a Loom tuning database (an SQLite file "
                           "with other tables); give another --db path");
  return LOOM_OK;
}

loom_status loom_db_open(const char *path, LOOM_GIVE loom_db **out,
                         loom_diag *d) {
  loom_db *db = calloc(1, sizeof *db);
  if (!db)
    return LOOM_NOMEM;
  db->path = path;
  loom_status st = LOOM_OK;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path, &db->h, flags, NULL) != SQLITE_OK)
    st = db->h ? db_error(db, d, "cannot open") : LOOM_NOMEM;
  if (st == LOOM_OK)
    sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
  if (st == LOOM_OK)
    st = check_foreign(db, d);
  if (st == LOOM_OK)
    st = exec(db, "PRAGMA journal_mode=WAL", d);
  if (st == LOOM_OK)
    st = exec(db, "PRAGMA synchronous=FULL", d);
  if (st == LOOM_OK && (st = db_begin(db, d)) == LOOM_OK) {
    st = exec(db, schema, d);
    if (st == LOOM_OK)
      st = check_format(db, d);
    st = st == LOOM_OK ? db_commit(db, d) : (db_rollback(db), st);
  }
  if (st != LOOM_OK) {
    loom_db_close(db);
    return st;
  }
  *out = db;
  return LOOM_OK;
}

void loom_db_close(LOOM_TAKE loom_db *db) {
  if (!db)
    return;
  sqlite3_close(db->h);
  free(db);
}
