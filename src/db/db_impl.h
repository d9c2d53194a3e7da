/* Inside the tuning database: the SQLite handle and the helpers the
 * workload and record files share. */
#ifndef LOOM_DB_IMPL_H
#define LOOM_DB_IMPL_H

#include "loom/db.h"

#include <sqlite3.h>

struct loom_db {
  sqlite3 *h;
  const char *path; /* borrowed: diagnostics point at it */
};

/* Records the SQLite error of the last call as a diagnostic on the file. */
loom_status db_error(loom_db *db, loom_diag *d, const char *what);
/* Prepares sql; on failure fills d. */
loom_status db_prepare(loom_db *db, const char *sql, sqlite3_stmt **st,
                       loom_diag *d);
/* BEGIN IMMEDIATE (waiting for other writers), COMMIT, ROLLBACK. */
loom_status db_begin(loom_db *db, loom_diag *d);
loom_status db_commit(loom_db *db, loom_diag *d);
void db_rollback(loom_db *db);
/* Finds (and with is_add, adds) the workload of f, inside the caller's
 * transaction. */
loom_status db_workload(loom_db *db, const loom_func *f, bool is_add,
                        int64_t *id, loom_diag *d);
/* Inserts records, inside the caller's transaction. */
loom_status db_insert_records(loom_db *db, const loom_db_record *records,
                              int n, loom_diag *d);
/* A copy of column i of the current row in a (NULL stays NULL). */
const char *db_text(loom_arena *a, sqlite3_stmt *st, int i);

#endif
