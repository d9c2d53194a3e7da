/* The search strategies end to end on a small matmul over a hand-written
 * space: every trial measured, checked against the interpreter and recorded;
 * the evolutionary search seeded from the database; apply-db rewriting the
 * matching function (whatever its name) and leaving the other alone, with
 * the same results under the interpreter. */
#include "loom/interp.h"
#include "loom/script.h"
#include "loom/tune.h"
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

static const char *module =
    "@I.ir_module\n"
    "class Module:\n"
    "    @T.prim_func\n"
    "    def mm(A: T.Buffer((32, 32), \"float32\"), B: T.Buffer((32, 32), \"float32\"), C: T.Buffer((32, 32), \"float32\")):\n"
    "        T.func_attr({\"tir.noalias\": True})\n"
    "        for i, j, k in T.grid(32, 32, 32):\n"
    "            with T.block(\"C\"):\n"
    "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "                with T.init():\n"
    "                    C[vi, vj] = T.float32(0.0)\n"
    "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
    "    @T.prim_func\n"
    "    def other(A: T.Buffer((8,), \"float32\")):\n"
    "        for i in range(8):\n"
    "            with T.block(\"A\"):\n"
    "                vi = T.axis.spatial(8, i)\n"
    "                A[vi] = A[vi] * T.float32(2.0)\n";

static const char *space =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=8)\n"
    "l6, l7 = sch.split(loop=l1, factors=[v4, v5])\n"
    "v8, v9 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16)\n"
    "l10, l11 = sch.split(loop=l2, factors=[v8, v9])\n"
    "sch.reorder(l6, l10, l3, l7, l11)\n"
    "sch.vectorize(loop=l11)\n";

static const char *bad_space =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "b1 = sch.get_block(name=\"nowhere\", func_name=\"main\")\n";

/* Half the draws split the loop into too few iterations: the replay
 * refuses them, and the search counts them as rejected, not as trials. */
static const char *half_bad_space =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "v4 = sch.sample_categorical(candidates=[4, 3], probs=[0.5, 0.5], decision=0)\n"
    "l5, l6 = sch.split(loop=l1, factors=[v4, 8])\n";

static char db_path[256];

static loom_tune_options options(loom_search_strategy s, uint64_t seed) {
  loom_tune_options o = {.strategy = s, .trials = 12, .batch = 4, .seed = seed};
  o.builder.cflags = "-O1";
  o.runner.check = true;
  o.runner.repeat = 1;
  o.runner.timeout_ms = 5000;
  return o;
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

/* The applied function computes what the original does. */
static void check_same_results(const loom_func *f, const loom_func *g) {
  loom_interp_array *x[3], *y[3];
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_interp_alloc_args(f, NULL, x, &d) == LOOM_OK);
  CHECK(loom_interp_alloc_args(g, NULL, y, &d) == LOOM_OK);
  loom_rng r1, r2;
  loom_rng_seed(&r1, 5);
  loom_rng_seed(&r2, 5);
  for (int i = 0; i < 3; i++) {
    loom_interp_fill_random(x[i], &r1);
    loom_interp_fill_random(y[i], &r2);
  }
  CHECK(loom_interp_run(f, x, NULL, &d) == LOOM_OK);
  CHECK(loom_interp_run(g, y, NULL, &d) == LOOM_OK);
  CHECK(loom_interp_compare(y[2], x[2], 1e-5, 1e-5, NULL));
  loom_interp_free_args(f, x);
  loom_interp_free_args(g, y);
  loom_diag_free(&d);
}

int main(void) {
  snprintf(db_path, sizeof db_path, "/tmp/loom-test-search-%d.db", (int)getpid());
  loom_arena *a = loom_arena_new();
  loom_module *m;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(module, strlen(module), "m.py", a, &m, &d) == LOOM_OK);
  loom_task *tasks;
  int n_tasks;
  CHECK(loom_tune_extract_tasks(a, m, &tasks, &n_tasks) == LOOM_OK && n_tasks == 2);
  loom_db *db;
  CHECK(loom_db_open(db_path, &db, &d) == LOOM_OK);

  loom_search_strategy kinds[] = {LOOM_SEARCH_REPLAY_FUNC, LOOM_SEARCH_REPLAY_TRACE,
                                  LOOM_SEARCH_EVOLUTIONARY, LOOM_SEARCH_EVOLUTIONARY};
  int expected = 0, remeasured = 0;
  for (int k = 0; k < 4; k++) {
    loom_tune_options o = options(kinds[k], (uint64_t)k + 1);
    loom_tune_result r;
    CHECK(loom_tune_task(&tasks[0], space, strlen(space), "space.py", db, &o, &r, &d) == LOOM_OK);
    if (d.has_error)
      fprintf(stderr, "tune: %s\n", d.msg);
    /* The space has 20 points: the first two runs measure them all between
     * them (nothing the database holds is measured again), and the later
     * ones have nothing new to measure, yet know the best. */
    CHECK((k < 2 ? r.trials > 0 : r.trials == 0) && r.trials <= 12 && r.failures == 0);
    CHECK(r.best_ms > 0 && r.baseline_ms > 0);
    CHECK_CONTAINS(r.best_trace, "sample_perfect_tile(loop=l1, n=2, max_innermost_factor=8, decision=[");
    expected += r.trials + 1; /* and the unscheduled function, measured */
    CHECK(count_records(db) == expected);
    remeasured += r.remeasured;
    CHECK(r.remeasured == 0 || r.remeasured >= 2);
    loom_tune_result_free(&r);
  }
  /* The finalists were measured again: their records hold three latencies
   * each (more when a later search measured them again), no new records. */
  loom_db_records all;
  int with_more = 0;
  CHECK(loom_db_all_records(db, 0, &all, &d) == LOOM_OK);
  for (int i = 0; i < all.n; i++)
    with_more += all.items[i].n_latencies >= 3;
  loom_db_records_free(&all);
  CHECK(remeasured >= 2);
  CHECK(with_more >= 2);

  loom_tune_options o = options(LOOM_SEARCH_REPLAY_TRACE, 9);
  loom_tune_result r;
  loom_diag bad;
  loom_diag_init(&bad);
  CHECK(loom_tune_task(&tasks[0], bad_space, strlen(bad_space), "bad.py", db, &o, &r, &bad) == LOOM_ERROR);
  CHECK(bad.loc.line == 2);
  CHECK_CONTAINS(bad.msg, "nowhere");
  loom_tune_result_free(&r);
  loom_diag_free(&bad);

  loom_applied res;
  CHECK(loom_tune_apply_db(m, db, NULL, &res, &d) == LOOM_OK);
  CHECK(res.n_applied == 1 && res.is_applied[0] && !res.is_applied[1]);
  CHECK_STREQ(res.module->funcs[0]->name, "mm");
  CHECK(res.module->funcs[1] == m->funcs[1]);
  CHECK(!loom_ir_equal_func(res.module->funcs[0], m->funcs[0], NULL));
  check_same_results(m->funcs[0], res.module->funcs[0]);
  loom_tune_applied_free(&res);

  loom_db_close(db);
  unlink(db_path);

  /* The evolutionary search ranked by the XGBoost model, which learns from
   * each batch: every trial measured, and a state worth saving; then the
   * same pipelined (each batch built while the one before is measured):
   * every trial measured and checked. */
  loom_model *model;
  CHECK(loom_model_xgb_new(NULL, &model, &d) == LOOM_OK);
  for (int is_pipelined = 0; is_pipelined < 2; is_pipelined++) {
    loom_tune_options mo = options(LOOM_SEARCH_EVOLUTIONARY, 11);
    mo.model = model;
    mo.pipeline = is_pipelined;
    CHECK(loom_tune_task(&tasks[0], space, strlen(space), "space.py", NULL, &mo, &r, &d) == LOOM_OK);
    if (r.trials != 12 || r.failures)
      fprintf(stderr, "model run: %d trials, %d failures\n", r.trials, r.failures);
    CHECK(r.trials == 12 && r.failures == 0 && r.best_ms > 0);
    CHECK(r.build_wall_s > 0 && r.build_s > 0);
    loom_tune_result_free(&r);
  }
  loom_buf state;
  loom_buf_init(&state);
  CHECK(loom_model_save(model, &state, &d) == LOOM_OK && state.len > 1000);
  loom_buf_free(&state);
  loom_model_free(model);

  /* Rejections: counted, with their reason, never measured. */
  for (int k = 0; k < 2; k++) {
    loom_tune_options ro = options(k ? LOOM_SEARCH_EVOLUTIONARY : LOOM_SEARCH_REPLAY_TRACE, 21);
    ro.trials = 4;
    ro.population = 8;
    CHECK(loom_tune_task(&tasks[0], half_bad_space, strlen(half_bad_space), "half.py", NULL,
                         &ro, &r, &d) == LOOM_OK);
    CHECK(r.trials == 1 && r.failures == 0 && r.rejected > 0);
    CHECK_CONTAINS(r.rejections, "less than the extent");
    loom_tune_result_free(&r);
  }

  /* The generated design spaces (space NULL), for a given target: every
   * trial measured and checked, and the best record replays under apply-db
   * to the same results. */
  loom_target tg;
  loom_target_detect(&tg);
  tg.cpu.cores = 2;
  char gen_db[300];
  snprintf(gen_db, sizeof gen_db, "%s-gen", db_path);
  CHECK(loom_db_open(gen_db, &db, &d) == LOOM_OK);
  for (int k = 0; k < 2; k++) {
    loom_tune_options go = options(k ? LOOM_SEARCH_EVOLUTIONARY : LOOM_SEARCH_REPLAY_TRACE, 31);
    go.trials = 8;
    go.population = 16;
    go.target = &tg;
    CHECK(loom_tune_task(&tasks[0], NULL, 0, NULL, db, &go, &r, &d) == LOOM_OK);
    CHECK((r.trials >= 1 || k == 1) && r.failures == 0 && r.best_ms > 0 && r.best_trace);
    loom_tune_result_free(&r);
  }
  CHECK(loom_tune_apply_db(m, db, NULL, &res, &d) == LOOM_OK);
  CHECK(res.n_applied == 1 && res.is_applied[0]);
  check_same_results(m->funcs[0], res.module->funcs[0]);
  loom_tune_applied_free(&res);
  loom_db_close(db);
  unlink(gen_db);

  loom_diag_free(&d);
  loom_arena_free(a);
  char side[300];
  snprintf(side, sizeof side, "%s-wal", db_path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", db_path);
  unlink(side);
  snprintf(side, sizeof side, "%s-gen-wal", db_path);
  unlink(side);
  snprintf(side, sizeof side, "%s-gen-shm", db_path);
  unlink(side);
  return test_summary("search");
}
