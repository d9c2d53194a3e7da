/* Finalists measured again: a finalist that fails a re-measurement (here a
 * wrong result: the runner checks against a workload the kernel does not
 * compute, as a kernel with a race would be wrong on a later run) is out,
 * whatever its first time, and its records become failures that top-k and
 * apply no longer see; the others get their new latencies. */
#include "loom/db.h"
#include "loom/script.h"
#include "loom/tune.h"
#include "test.h"
#include "tune/tune_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRAM(value)                                                          \
  "@T.prim_func\n"                                                             \
  "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), \"float32\")):\n" \
  "    for i in range(64):\n"                                                  \
  "        with T.block(\"B\"):\n"                                             \
  "            vi = T.axis.spatial(64, i)\n"                                   \
  "            B[vi] = A[vi] * T.float32(2.0) + T.float32(" value ")\n"

static const loom_func *read_func(loom_arena *a, const char *text) {
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_script_read(text, strlen(text), "t.py", a, &m, &d);
  loom_diag_free(&d);
  return st == LOOM_OK ? m->funcs[0] : NULL;
}

int main(void) {
  loom_arena *a = loom_arena_new();
  const loom_func *right = read_func(a, PROGRAM("1.0"));
  const loom_func *wrong = read_func(a, PROGRAM("1.5"));
  CHECK(right && wrong);
  char path[] = "/tmp/loom_finalists_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  unlink(path);
  loom_db *db;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_db_open(path, &db, &d) == LOOM_OK);
  int64_t w;
  CHECK(loom_db_commit_workload(db, right, &w, &d) == LOOM_OK);

  /* The wrong kernel's first time was the luckiest. */
  double lucky = 0.001, fair = 1.0;
  const char *target = "cpu -test";
  loom_db_record rs[2] = {
      {.workload = w, .target = target, .trace = "[[\"wrong\"], []]",
       .latencies_ms = &lucky, .n_latencies = 1},
      {.workload = w, .target = target, .trace = "[[\"right\"], []]",
       .latencies_ms = &fair, .n_latencies = 1}};
  CHECK(loom_db_commit_records(db, rs, 2, &d) == LOOM_OK);

  loom_runner_options ro = {.repeat = 1, .check = true, .seed = 1};
  loom_tune_runner *runner;
  CHECK(loom_tune_runner_new(right, &ro, &runner, &d) == LOOM_OK);
  loom_builder_options bo = {.per_file = 2, .jobs = 1, .cflags = "-O1"};
  tune_finalist f[2] = {
      {.func = wrong, .trace = "[[\"wrong\"], []]", .ms = lucky},
      {.func = right, .trace = "[[\"right\"], []]", .ms = fair}};
  CHECK(tune_remeasure(runner, &bo, db, w, target, f, 2, 2, &d) == LOOM_OK);
  if (d.msg)
    fprintf(stderr, "%s\n", d.msg);
  CHECK(f[0].error != NULL);
  CHECK_CONTAINS(f[0].error, "disqualified: its measurement again failed");
  CHECK(f[1].error == NULL && f[1].ms < fair);

  /* The database ranks the right kernel first now, with three latencies;
   * the wrong one is a failure that kept its latency. */
  loom_db_records top;
  CHECK(loom_db_top_k(db, w, target, 5, &top, &d) == LOOM_OK);
  CHECK(top.n == 1);
  if (top.n == 1) {
    CHECK_STREQ(top.items[0].trace, "[[\"right\"], []]");
    CHECK(top.items[0].n_latencies == 3);
  }
  loom_db_records_free(&top);
  loom_db_records all;
  CHECK(loom_db_all_records(db, w, &all, &d) == LOOM_OK);
  int n_failed = 0;
  for (int i = 0; i < all.n; i++)
    if (all.items[i].error) {
      n_failed++;
      CHECK_CONTAINS(all.items[i].error, "disqualified");
      CHECK(all.items[i].n_latencies == 1);
    }
  CHECK(n_failed == 1);
  loom_db_records_free(&all);

  /* Measured again later, a disqualified record stays a failure. */
  double more = 0.5;
  CHECK(loom_db_add_latencies(db, w, target, "[[\"wrong\"], []]", &more, 1, &d) == LOOM_OK);
  CHECK(loom_db_top_k(db, w, target, 5, &top, &d) == LOOM_OK && top.n == 1);
  loom_db_records_free(&top);

  for (int i = 0; i < 2; i++)
    free(f[i].error);
  loom_tune_runner_free(runner);
  loom_db_close(db);
  unlink(path);
  loom_diag_free(&d);
  loom_arena_free(a);
  return test_summary("finalists");
}
