/* Named state blobs (a cost model's training), replaced as a whole. */
#include "db/db_impl.h"

#include <time.h>

loom_status loom_db_save_state(loom_db *db, const char *key, const void *bytes,
                               size_t len, loom_diag *d) {
  sqlite3_stmt *st;
  TRY(db_begin(db, d));
  loom_status s = db_prepare(db, "INSERT OR REPLACE INTO state (key, value, updated) "
                                 "VALUES (?1, ?2, ?3)", &st, d);
  if (s == LOOM_OK) {
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_blob64(st, 2, bytes, (sqlite3_uint64)len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (int64_t)time(NULL));
    if (sqlite3_step(st) != SQLITE_DONE)
      s = db_error(db, d, "saving state");
    sqlite3_finalize(st);
  }
  return s == LOOM_OK ? db_commit(db, d) : (db_rollback(db), s);
}

loom_status loom_db_load_state(loom_db *db, const char *key, loom_buf *out,
                               bool *found, loom_diag *d) {
  sqlite3_stmt *st;
  *found = false;
  TRY(db_prepare(db, "SELECT value FROM state WHERE key = ?1", &st, d));
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *found = true;
    loom_buf_putn(out, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return db_error(db, d, "loading state");
  return out->has_failed ? LOOM_NOMEM : LOOM_OK;
}
