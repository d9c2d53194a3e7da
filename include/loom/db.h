/* The tuning database: workloads (prim funcs, keyed by structural hash and
 * matched by structural equality) and the measurement records of their
 * schedules (a trace as JSON, latencies or the failure, the target, when).
 * It lives in one SQLite file. Every write is a transaction, committed
 * durably before the call returns: a process killed at any moment loses no
 * committed record and leaves a file the next run opens, and several
 * processes may write one file at once. */
#ifndef LOOM_DB_H
#define LOOM_DB_H

#include "loom/ir.h"

typedef struct loom_db loom_db;

/* Opens (creating when absent) the database at path, which must outlive the
 * database and its diagnostics (they are located at it). Fails with d when
 * the file is not a Loom database, is of a newer format, or cannot be
 * opened. */
LOOM_API loom_status loom_db_open(const char *path, LOOM_GIVE loom_db **out,
                                  loom_diag *d);
LOOM_API void loom_db_close(LOOM_TAKE loom_db *db);

/* The workload of f: its body under the name "main" without its
 * global_symbol, so a function matches whatever it is called. Finds the
 * stored workload structurally equal to it (by hash, then equality), or adds
 * it (commit) or sets *id to 0 (find). */
LOOM_API loom_status loom_db_commit_workload(loom_db *db, const loom_func *f,
                                             int64_t *id, loom_diag *d);
LOOM_API loom_status loom_db_find_workload(loom_db *db, const loom_func *f,
                                           int64_t *id, loom_diag *d);

/* A measurement. A failure has no latencies and an error. */
typedef struct loom_db_record {
  int64_t id;              /* set by the database */
  int64_t workload;
  const char *target;      /* "cpu", or a fuller description */
  const char *trace;       /* the schedule, as a JSON trace */
  const double *latencies_ms;
  int n_latencies;
  const char *error;       /* NULL for a success */
  int64_t created;         /* unix seconds; 0: now */
} loom_db_record;

/* Commits n records in one transaction (all or none). */
LOOM_API loom_status loom_db_commit_records(loom_db *db,
                                            const loom_db_record *records,
                                            int n, loom_diag *d);

/* Records read back; strings and latencies belong to the list. */
typedef struct loom_db_records {
  loom_db_record *items;
  int n;
  loom_arena *arena;
} loom_db_records;

LOOM_API void loom_db_records_free(loom_db_records *r);
/* A re-measurement: the successful records of workload on target with
 * this trace get ms[0..n) added to their latencies and their mean
 * recomputed, in one transaction. Nothing measured before is dropped; a
 * disqualified record (loom_db_disqualify) stays a failure. */
LOOM_API loom_status loom_db_add_latencies(loom_db *db, int64_t workload,
                                           const char *target,
                                           const char *trace, const double *ms,
                                           int n, loom_diag *d);
/* A schedule found wrong when measured again (a wrong result, a crash, a
 * time-out: a race, say, right once and wrong later): the successful
 * records of workload on target with this trace become failures with this
 * error, their latencies kept, in one transaction. */
LOOM_API loom_status loom_db_disqualify(loom_db *db, int64_t workload,
                                        const char *target, const char *trace,
                                        const char *error, loom_diag *d);
/* The k fastest successful records of a workload on target (NULL: any), by
 * mean latency. */
LOOM_API loom_status loom_db_top_k(loom_db *db, int64_t workload,
                                   const char *target, int k,
                                   loom_db_records *out, loom_diag *d);
/* Every record of a workload (0: of all workloads), oldest first. */
LOOM_API loom_status loom_db_all_records(loom_db *db, int64_t workload,
                                         loom_db_records *out, loom_diag *d);

/* What `loom db list` shows of a workload. */
typedef struct loom_db_workload_info {
  int64_t id;
  uint64_t hash;
  const char *script;  /* canonical TVMScript of the workload */
  int n_records, n_failures;
  double best_ms;      /* 0 when no record succeeded */
} loom_db_workload_info;

typedef struct loom_db_workloads {
  loom_db_workload_info *items;
  int n;
  loom_arena *arena;
} loom_db_workloads;

LOOM_API void loom_db_workloads_free(loom_db_workloads *w);
LOOM_API loom_status loom_db_list_workloads(loom_db *db, loom_db_workloads *out,
                                            loom_diag *d);

/* Named state kept with the records, such as a cost model's, so that a new
 * tuning run starts where the last one stopped. Saving replaces. */
LOOM_API loom_status loom_db_save_state(loom_db *db, const char *key,
                                        const void *bytes, size_t len,
                                        loom_diag *d);
/* Appends the state to out; *found is false (out untouched) when absent. */
LOOM_API loom_status loom_db_load_state(loom_db *db, const char *key,
                                        loom_buf *out, bool *found,
                                        loom_diag *d);

/* Every record as a JSON line: {"workload": SCRIPT, "target", "trace",
 * "latencies_ms", "error", "created"}. */
LOOM_API loom_status loom_db_export_jsonl(loom_db *db, loom_buf *out,
                                          loom_diag *d);
/* Reads such lines (blank lines skipped) and commits them, with their
 * workloads, in one transaction: all of them, or nothing, with d at the
 * first bad line. */
LOOM_API loom_status loom_db_import_jsonl(loom_db *db, const char *text,
                                          size_t len, const char *file,
                                          int *n_imported, loom_diag *d);

#endif
