/* The tuning database: workload matching modulo renaming, records and their
 * ranking, persistence, refusal of foreign files, concurrent writers, and a
 * writer killed mid-stream losing nothing it committed. */
#include "loom/db.h"
#include "loom/script.h"
#include "test.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *matmul =
    "@T.prim_func\n"
    "def mm(A: T.Buffer((16, 16), \"float32\"), B: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
    "    for i, j, k in T.grid(16, 16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0.0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

/* The same program with every variable and the function renamed. */
static const char *renamed =
    "@T.prim_func\n"
    "def other_name(X: T.Buffer((16, 16), \"float32\"), Y: T.Buffer((16, 16), \"float32\"), Z: T.Buffer((16, 16), \"float32\")):\n"
    "    for a, b, c in T.grid(16, 16, 16):\n"
    "        with T.block(\"C\"):\n"
    "            va, vb, vc = T.axis.remap(\"SSR\", [a, b, c])\n"
    "            with T.init():\n"
    "                Z[va, vb] = T.float32(0.0)\n"
    "            Z[va, vb] = Z[va, vb] + X[va, vc] * Y[vc, vb]\n";

static const char *different =
    "@T.prim_func\n"
    "def add(A: T.Buffer((16,), \"float32\"), B: T.Buffer((16,), \"float32\")):\n"
    "    for i in range(16):\n"
    "        with T.block(\"B\"):\n"
    "            vi = T.axis.spatial(16, i)\n"
    "            B[vi] = A[vi] + T.float32(1.0)\n";

static char path[256];

static const loom_func *read_func(loom_arena *a, const char *text) {
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_script_read(text, strlen(text), "t.py", a, &m, &d);
  loom_diag_free(&d);
  return st == LOOM_OK ? m->funcs[0] : NULL;
}

static loom_db *open_db(void) {
  loom_db *db = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_db_open(path, &db, &d) != LOOM_OK)
    fprintf(stderr, "open: %s\n", d.msg);
  loom_diag_free(&d);
  return db;
}

static int count_records(loom_db *db) {
  loom_db_records r;
  loom_diag d;
  loom_diag_init(&d);
  int n = loom_db_all_records(db, 0, &r, &d) == LOOM_OK ? r.n : -1;
  loom_db_records_free(&r);
  loom_diag_free(&d);
  return n;
}

static loom_status add(loom_db *db, int64_t w, double ms, const char *error) {
  loom_diag d;
  loom_diag_init(&d);
  loom_db_record r = {.workload = w, .target = "cpu", .trace = "[[], []]",
                      .latencies_ms = &ms, .n_latencies = error ? 0 : 1, .error = error};
  loom_status st = loom_db_commit_records(db, &r, 1, &d);
  loom_diag_free(&d);
  return st;
}

static void test_workloads_and_records(void) {
  loom_arena *a = loom_arena_new();
  loom_db *db = open_db();
  loom_diag d;
  loom_diag_init(&d);
  int64_t w1 = 0, w2 = 0, w3 = 0, w4 = -1;
  CHECK(db != NULL);
  CHECK(loom_db_find_workload(db, read_func(a, matmul), &w4, &d) == LOOM_OK && w4 == 0);
  CHECK(loom_db_commit_workload(db, read_func(a, matmul), &w1, &d) == LOOM_OK && w1 > 0);
  CHECK(loom_db_commit_workload(db, read_func(a, renamed), &w2, &d) == LOOM_OK);
  CHECK(w2 == w1);
  CHECK(loom_db_commit_workload(db, read_func(a, different), &w3, &d) == LOOM_OK);
  CHECK(w3 > 0 && w3 != w1);
  CHECK(loom_db_find_workload(db, read_func(a, renamed), &w4, &d) == LOOM_OK && w4 == w1);

  double lat[] = {5.0, 2.0, 9.0, 1.0, 3.0};
  for (int i = 0; i < 5; i++)
    CHECK(add(db, w1, lat[i], NULL) == LOOM_OK);
  CHECK(add(db, w1, 0, "build failed: x") == LOOM_OK);
  CHECK(add(db, w3, 0.5, NULL) == LOOM_OK);
  loom_db_record bad = {.workload = w1, .target = "cpu", .trace = "[]"};
  CHECK(loom_db_commit_records(db, &bad, 1, &d) == LOOM_ERROR);
  loom_diag_free(&d);
  loom_diag_init(&d);

  loom_db_records top;
  CHECK(loom_db_top_k(db, w1, "cpu", 3, &top, &d) == LOOM_OK);
  CHECK(top.n == 3);
  if (top.n == 3) {
    CHECK(top.items[0].latencies_ms[0] == 1.0);
    CHECK(top.items[1].latencies_ms[0] == 2.0);
    CHECK(top.items[2].latencies_ms[0] == 3.0);
    CHECK_STREQ(top.items[0].trace, "[[], []]");
  }
  loom_db_records_free(&top);
  CHECK(loom_db_top_k(db, w1, "gpu", 3, &top, &d) == LOOM_OK && top.n == 0);
  loom_db_records_free(&top);
  CHECK(count_records(db) == 7);

  loom_db_workloads ws;
  CHECK(loom_db_list_workloads(db, &ws, &d) == LOOM_OK && ws.n == 2);
  if (ws.n == 2) {
    CHECK(ws.items[0].n_records == 6 && ws.items[0].n_failures == 1);
    CHECK(ws.items[0].best_ms == 1.0);
    CHECK_CONTAINS(ws.items[0].script, "def main(");
  }
  loom_db_workloads_free(&ws);

  loom_buf st;
  loom_buf_init(&st);
  bool found = true;
  CHECK(loom_db_load_state(db, "model", &st, &found, &d) == LOOM_OK && !found);
  CHECK(loom_db_save_state(db, "model", "\0\1\2", 3, &d) == LOOM_OK);
  CHECK(loom_db_save_state(db, "model", "abcd\0e", 6, &d) == LOOM_OK); /* replaces */
  loom_db_close(db);

  db = open_db(); /* reopened: everything is there */
  CHECK(db && count_records(db) == 7);
  CHECK(loom_db_load_state(db, "model", &st, &found, &d) == LOOM_OK && found);
  CHECK(st.len == 6 && !memcmp(st.data, "abcd\0e", 6));
  loom_buf_free(&st);
  loom_db_close(db);
  loom_diag_free(&d);
  loom_arena_free(a);
}

static void test_foreign_files(void) {
  char other[300];
  snprintf(other, sizeof other, "%s.other", path);
  sqlite3 *h;
  CHECK(sqlite3_open(other, &h) == SQLITE_OK);
  sqlite3_exec(h, "CREATE TABLE t (x)", NULL, NULL, NULL);
  sqlite3_close(h);
  loom_db *db = NULL;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_db_open(other, &db, &d) == LOOM_ERROR && !db);
  CHECK_CONTAINS(d.msg, "not a Loom tuning database");
  loom_diag_free(&d);
  unlink(other);

  FILE *f = fopen(other, "w");
  fputs("this is not a database at all, just text that goes on for a while\n", f);
  fclose(f);
  loom_diag_init(&d);
  CHECK(loom_db_open(other, &db, &d) == LOOM_ERROR && !db);
  CHECK_CONTAINS(d.msg, "tuning database");
  loom_diag_free(&d);
  unlink(other);
}

/* Writers in parallel processes, one transaction per record. */
static void test_concurrent_writers(void) {
  loom_db *db = open_db();
  int before = count_records(db);
  loom_db_close(db);
  enum { WRITERS = 3, EACH = 40 };
  for (int w = 0; w < WRITERS; w++) {
    pid_t pid = fork();
    if (pid == 0) {
      loom_db *mine = open_db();
      int ok = mine != NULL;
      for (int i = 0; ok && i < EACH; i++)
        ok = add(mine, 1, 1.0 + i, NULL) == LOOM_OK;
      loom_db_close(mine);
      _exit(ok ? 0 : 1);
    }
  }
  int failed = 0, status;
  while (wait(&status) > 0)
    failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  CHECK(failed == 0);
  db = open_db();
  CHECK(count_records(db) == before + WRITERS * EACH);
  loom_db_close(db);
}

/* A writer killed at a random moment: the file opens, passes SQLite's
 * integrity check, and holds whole batches only. */
static void test_killed_writer(void) {
  loom_db *db = open_db();
  int before = count_records(db);
  loom_db_close(db);
  enum { BATCH = 25 };
  pid_t pid = fork();
  if (pid == 0) {
    loom_db *mine = open_db();
    double ms = 1.0;
    loom_db_record r[BATCH];
    for (int i = 0; i < BATCH; i++)
      r[i] = (loom_db_record){.workload = 1, .target = "cpu", .trace = "[[], []]",
                              .latencies_ms = &ms, .n_latencies = 1};
    for (;;) {
      loom_diag d;
      loom_diag_init(&d);
      loom_db_commit_records(mine, r, BATCH, &d);
      loom_diag_free(&d);
    }
  }
  struct timespec pause = {0, 300 * 1000 * 1000};
  nanosleep(&pause, NULL);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  db = open_db();
  CHECK(db != NULL);
  int after = count_records(db);
  CHECK(after >= before && (after - before) % BATCH == 0);
  loom_db_close(db);
  sqlite3 *h;
  CHECK(sqlite3_open(path, &h) == SQLITE_OK);
  sqlite3_stmt *st;
  CHECK(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK);
  CHECK(sqlite3_step(st) == SQLITE_ROW);
  CHECK_STREQ((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  sqlite3_close(h);
}

/* A re-measurement grows a record's latencies and moves it in the ranking;
 * a failure and a record of another trace are left as they were. */
static void test_add_latencies(void) {
  loom_arena *a = loom_arena_new();
  loom_db *db = open_db();
  loom_diag d;
  loom_diag_init(&d);
  int64_t w = 0;
  CHECK(db && loom_db_commit_workload(db, read_func(a, different), &w, &d) == LOOM_OK);
  double lucky = 0.2, other = 0.4;
  loom_db_record rs[3] = {
      {.workload = w, .target = "cpu", .trace = "[[\"lucky\"], []]", .latencies_ms = &lucky,
       .n_latencies = 1},
      {.workload = w, .target = "cpu", .trace = "[[\"other\"], []]", .latencies_ms = &other,
       .n_latencies = 1},
      {.workload = w, .target = "cpu", .trace = "[[\"lucky\"], []]", .error = "timed out"}};
  CHECK(loom_db_commit_records(db, rs, 3, &d) == LOOM_OK);
  double again[2] = {0.5, 0.6};
  CHECK(loom_db_add_latencies(db, w, "cpu", "[[\"lucky\"], []]", again, 2, &d) == LOOM_OK);
  /* (The workload also holds a record of an earlier test.) */
  loom_db_records top;
  int at_lucky = -1, at_other = -1;
  CHECK(loom_db_top_k(db, w, "cpu", 5, &top, &d) == LOOM_OK);
  for (int i = 0; i < top.n; i++) {
    if (!strcmp(top.items[i].trace, "[[\"lucky\"], []]"))
      at_lucky = i;
    if (!strcmp(top.items[i].trace, "[[\"other\"], []]"))
      at_other = i;
  }
  CHECK(at_other >= 0 && at_lucky > at_other); /* mean 0.433 after 0.4 */
  if (at_lucky >= 0) {
    const loom_db_record *r = &top.items[at_lucky];
    CHECK(r->n_latencies == 3);
    if (r->n_latencies == 3)
      CHECK(r->latencies_ms[0] == 0.2 && r->latencies_ms[1] == 0.5 && r->latencies_ms[2] == 0.6);
  }
  if (at_other >= 0)
    CHECK(top.items[at_other].n_latencies == 1);
  loom_db_records_free(&top);
  /* The failure is still a failure, and nothing was added or lost. */
  loom_db_records all;
  CHECK(loom_db_all_records(db, w, &all, &d) == LOOM_OK && all.n == 4);
  if (all.n == 4)
    CHECK(all.items[3].n_latencies == 0 && all.items[3].error != NULL);
  loom_db_records_free(&all);
  loom_db_close(db);
  loom_diag_free(&d);
  loom_arena_free(a);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/loom-test-db-%d.db", tmp ? tmp : "/tmp", (int)getpid());
  test_workloads_and_records();
  test_add_latencies();
  test_foreign_files();
  test_concurrent_writers();
  test_killed_writer();
  char side[300];
  unlink(path);
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
  return test_summary("db");
}
