/* Workloads: a function's body, whatever it is called, stored as canonical
 * TVMScript with its structural hash. Matching reads back the stored
 * functions with the same hash and compares structurally, so a hash
 * collision never confuses two workloads. */
#include "db/db_impl.h"
#include "loom/script.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* True when the stored script reads back to a function equal to g. */
static bool same_workload(const char *script, const loom_func *g) {
  loom_arena *a = loom_arena_new();
  loom_diag d;
  loom_diag_init(&d);
  loom_module *m;
  bool is_same = a && loom_script_read(script, strlen(script), "workload", a, &m, &d) == LOOM_OK &&
                 m->n_funcs == 1;
  const loom_func *h = is_same ? loom_ir_func_anonymous(a, m->funcs[0]) : NULL;
  is_same = h && loom_ir_equal_func(h, g, NULL);
  loom_diag_free(&d);
  loom_arena_free(a);
  return is_same;
}

static loom_status find(loom_db *db, const loom_func *g, const char *hash,
                        int64_t *id, loom_diag *d) {
  sqlite3_stmt *st;
  TRY(db_prepare(db, "SELECT id, script FROM workload WHERE hash = ?1 ORDER BY id", &st, d));
  sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
  int rc;
  *id = 0;
  while (!*id && (rc = sqlite3_step(st)) == SQLITE_ROW)
    if (same_workload((const char *)sqlite3_column_text(st, 1), g))
      *id = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (!*id && rc != SQLITE_DONE)
    return db_error(db, d, "finding a workload");
  return LOOM_OK;
}

loom_status db_workload(loom_db *db, const loom_func *f, bool is_add,
                        int64_t *id, loom_diag *d) {
  loom_arena *a = loom_arena_new();
  loom_func *g = a ? loom_ir_func_anonymous(a, f) : NULL;
  if (!g) {
    loom_arena_free(a);
    return LOOM_NOMEM;
  }
  char hash[17];
  snprintf(hash, sizeof hash, "%016" PRIx64, loom_ir_hash_func(g));
  loom_status st = find(db, g, hash, id, d);
  if (st == LOOM_OK && is_add && !*id) {
    loom_buf script;
    loom_buf_init(&script);
    loom_print_opts opts = {LOOM_DIALECT_TIR};
    loom_script_print_func(g, &opts, &script);
    sqlite3_stmt *ins = NULL;
    st = script.has_failed ? LOOM_NOMEM
         : db_prepare(db, "INSERT INTO workload (hash, script, created) "
                          "VALUES (?1, ?2, ?3)", &ins, d);
    if (st == LOOM_OK) {
      sqlite3_bind_text(ins, 1, hash, -1, SQLITE_STATIC);
      sqlite3_bind_text(ins, 2, script.data, (int)script.len, SQLITE_STATIC);
      sqlite3_bind_int64(ins, 3, (int64_t)time(NULL));
      if (sqlite3_step(ins) != SQLITE_DONE)
        st = db_error(db, d, "adding a workload");
      *id = sqlite3_last_insert_rowid(db->h);
    }
    sqlite3_finalize(ins);
    loom_buf_free(&script);
  }
  loom_arena_free(a);
  return st;
}

loom_status loom_db_commit_workload(loom_db *db, const loom_func *f,
                                    int64_t *id, loom_diag *d) {
  TRY(db_begin(db, d));
  loom_status st = db_workload(db, f, true, id, d);
  return st == LOOM_OK ? db_commit(db, d) : (db_rollback(db), st);
}

loom_status loom_db_find_workload(loom_db *db, const loom_func *f,
                                  int64_t *id, loom_diag *d) {
  return db_workload(db, f, false, id, d);
}
