/* Stopped candidates: a candidate whose first call runs past the stop time
 * (here any call of 5 ms or more once a best exists: stop_ratio is tiny) was
 * timed only as far as it ran and never checked. It must not become a parent
 * or the best, nor a record that top-k and apply rank: it is recorded as a
 * failure that keeps the time it ran. */
#include "loom/db.h"
#include "loom/script.h"
#include "loom/tune.h"
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 16.7 million dependent float additions: tens of milliseconds, whatever
 * the schedule the space draws. */
static const char *slow =
    "@T.prim_func\n"
    "def main(A: T.Buffer((1024,), \"float32\"), B: T.Buffer((16,), \"float32\")):\n"
    "    for i, k in T.grid(16, 1048576):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            with T.init():\n"
    "                B[vi] = T.float32(0.0)\n"
    "            B[vi] = B[vi] + A[vk % 1024]\n";

static const char *space =
    "b0 = sch.get_block(name=\"B\", func_name=\"main\")\n"
    "l1, l2 = sch.get_loops(block=b0)\n"
    "v3, v4 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=16)\n"
    "l5, l6 = sch.split(loop=l1, factors=[v3, v4])\n";

int main(void) {
  loom_arena *a = loom_arena_new();
  loom_diag d;
  loom_diag_init(&d);
  loom_module *m;
  CHECK(loom_script_read(slow, strlen(slow), "slow.py", a, &m, &d) == LOOM_OK);
  loom_task *tasks;
  int n_tasks;
  CHECK(loom_tune_extract_tasks(a, m, &tasks, &n_tasks) == LOOM_OK && n_tasks == 1);
  char path[256];
  snprintf(path, sizeof path, "/tmp/loom-test-stopped-%d.db", (int)getpid());
  unlink(path);
  loom_db *db;
  CHECK(loom_db_open(path, &db, &d) == LOOM_OK);

  loom_tune_options o = {.strategy = LOOM_SEARCH_REPLAY_TRACE, .trials = 3,
                         .batch = 3, .seed = 4, .skip_baseline = true,
                         .finalist_rounds = -1};
  o.builder.cflags = "-O1";
  o.runner.repeat = 1;
  o.runner.timeout_ms = 20000;
  o.runner.stop_ratio = 1e-9;
  loom_tune_result r;
  CHECK(loom_tune_task(&tasks[0], space, strlen(space), "space.py", db, &o, &r, &d) == LOOM_OK);
  if (d.msg)
    fprintf(stderr, "%s\n", d.msg);
  CHECK(r.trials == 3 && r.failures == 0);
  CHECK(r.stopped == 2);
  CHECK(r.best_ms > 0 && r.best_trace);

  /* One measurement, two stopped records: failures that kept their time. */
  loom_db_records top, all;
  int64_t w;
  CHECK(loom_db_find_workload(db, tasks[0].anon, &w, &d) == LOOM_OK && w > 0);
  CHECK(loom_db_top_k(db, w, NULL, 10, &top, &d) == LOOM_OK);
  CHECK(top.n == 1 && top.items[0].error == NULL);
  CHECK(loom_db_all_records(db, w, &all, &d) == LOOM_OK && all.n == 3);
  int n_stopped = 0;
  for (int i = 0; i < all.n; i++)
    if (all.items[i].error) {
      n_stopped++;
      CHECK_CONTAINS(all.items[i].error, "stopped: its first call ran");
      CHECK_CONTAINS(all.items[i].error, "not checked");
      CHECK(all.items[i].n_latencies == 1 && all.items[i].latencies_ms[0] >= 5);
    }
  CHECK(n_stopped == 2);
  loom_db_records_free(&top);
  loom_db_records_free(&all);
  loom_tune_result_free(&r);
  loom_db_close(db);
  unlink(path);
  loom_diag_free(&d);
  loom_arena_free(a);
  return test_summary("stopped");
}
