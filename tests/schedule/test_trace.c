/* Schedules and traces through the C API: forks that diverge without
 * disturbing each other, dead-code removal, replay with fresh decisions,
 * the perfect-tile sampler's distribution, the partitioned-tile sampler's
 * condition, stale decisions repaired by the tuner's replay and refused by
 * a checked one, JSON and script diagnostics with their line:col,
 * allocation failures, and the IR verifier after every primitive in the
 * builds that run it. */
#include "schedule/sched_impl.h"
#include "loom/schedule.h"
#include "loom/script.h"
#include "test.h"

#include <stdlib.h>

static const char *program =
    "# from tvm.script import tir as T\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((24, 16), \"float32\"), B: T.Buffer((24,), \"float32\")):\n"
    "    for i, k in T.grid(24, 16):\n"
    "        with T.block(\"sum\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            with T.init():\n"
    "                B[vi] = T.float32(0.0)\n"
    "            B[vi] = B[vi] + A[vi, vk]\n";

static loom_module *load(loom_arena *a) {
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_script_read(program, strlen(program), "p.py", a, &m, &d);
  loom_diag_free(&d);
  return m;
}

static char *print_py(const loom_sched *s) {
  loom_buf b;
  loom_buf_init(&b);
  loom_trace t = loom_sched_trace(s);
  loom_trace_print_py(&t, LOOM_DIALECT_TIR, &b);
  return loom_buf_take(&b);
}

static char *print_module(const loom_module *m) {
  loom_buf b;
  loom_buf_init(&b);
  loom_print_opts o = {LOOM_DIALECT_TIR};
  loom_script_print_module(m, &o, &b);
  return loom_buf_take(&b);
}

static void test_fork(const loom_module *m) {
  loom_diag d;
  loom_diag_init(&d);
  loom_sched *s = loom_sched_new(m, 1);
  loom_sched_rv b;
  const loom_sched_rv *loops;
  int n;
  CHECK(loom_sched_get_block(s, "sum", NULL, &b, &d) == LOOM_OK);
  CHECK(loom_sched_get_loops(s, b, &loops, &n, &d) == LOOM_OK && n == 2);
  loom_sched_rv i = loops[0], k = loops[1];
  char *before = print_module(loom_sched_module(s));
  loom_sched *c = loom_sched_copy(s);
  loom_tval f[2] = {loom_tval_none(), loom_tval_int(4)};
  const loom_sched_rv *outs;
  CHECK(loom_sched_split(c, i, f, 2, true, false, &outs, &d) == LOOM_OK);
  /* The parent is untouched by its child's rewrite and keeps working. */
  char *after = print_module(loom_sched_module(s));
  CHECK_STREQ(after, before);
  CHECK(loom_sched_trace(s).n_insts == 2 && loom_sched_trace(c).n_insts == 3);
  loom_sched_rv pair[2] = {k, i};
  CHECK(loom_sched_reorder(s, pair, 2, &d) == LOOM_OK);
  loom_sched_free(s); /* the copy outlives its parent */
  char *cm = print_module(loom_sched_module(c));
  CHECK_CONTAINS(cm, "for i_0, i_1, k in T.grid(6, 4, 16):");
  CHECK_CONTAINS(cm, "vi = T.axis.spatial(24, i_0 * 4 + i_1)");
  /* A reordered-away loop is refused by name in the copy's own lineage. */
  CHECK(loom_sched_reorder(c, pair, 2, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "loop 'i' no longer exists");
  loom_sched_free(c);
  free(before);
  free(after);
  free(cm);
  loom_diag_free(&d);
}

static void test_simplify_and_resample(const loom_module *m) {
  loom_diag d;
  loom_diag_init(&d);
  loom_sched *s = loom_sched_new(m, 7);
  const char *script =
      "b0 = sch.get_block(name=\"sum\", func_name=\"main\")\n"
      "b1 = sch.get_block(name=\"sum\", func_name=\"main\")\n"
      "l2, l3 = sch.get_loops(block=b0)\n"
      "v4, v5 = sch.sample_perfect_tile(loop=l3, n=2, max_innermost_factor=16)\n"
      "v6, v7 = sch.sample_perfect_tile(loop=l2, n=2)\n"
      "l8, l9 = sch.split(loop=l3, factors=[v4, v5])\n";
  CHECK(loom_sched_run_script(s, script, strlen(script), "s.py", &d) == LOOM_OK);
  loom_trace t = loom_sched_trace(s), simple;
  loom_arena *a = loom_arena_new();
  CHECK(loom_trace_simplify(&t, a, &simple) == LOOM_OK);
  CHECK(simple.n_insts == 4); /* b1 and the unused sample are dead */
  loom_buf b;
  loom_buf_init(&b);
  loom_trace_print_py(&simple, LOOM_DIALECT_TIR, &b);
  CHECK(b.data && !strstr(b.data, "b1 =") && !strstr(b.data, "v6"));
  loom_buf_free(&b);
  /* Fresh decisions: each replay draws a perfect tile of 16 again. */
  for (int seed = 0; seed < 50; seed++) {
    loom_sched *r = loom_sched_new(m, (uint64_t)seed);
    CHECK(loom_trace_apply(&simple, r, LOOM_REPLAY_RESAMPLE, &d) == LOOM_OK);
    loom_trace rt = loom_sched_trace(r);
    const loom_tval *dec = &rt.insts[2]->decision;
    CHECK(dec->kind == LOOM_TV_LIST && dec->n == 2 &&
          dec->items[0].i * dec->items[1].i == 16 && dec->items[1].i <= 16);
    loom_sched_free(r);
  }
  loom_arena_free(a);
  loom_sched_free(s);
  loom_diag_free(&d);
}

/* Over many draws every factorization of 24 into 3 with innermost <= 4
 * appears, and nothing else does. */
static void test_sampler(const loom_module *m) {
  loom_diag d;
  loom_diag_init(&d);
  int seen[25][25] = {{0}};
  int bad = 0;
  for (int seed = 0; seed < 3000; seed++) {
    loom_sched *s = loom_sched_new(m, (uint64_t)seed);
    loom_sched_rv b;
    const loom_sched_rv *loops, *v;
    int n;
    loom_sched_get_block(s, "sum", NULL, &b, &d);
    loom_sched_get_loops(s, b, &loops, &n, &d);
    if (loom_sched_sample_perfect_tile(s, loops[0], 3, 4, &v, &d) == LOOM_OK) {
      int64_t x = loom_sched_rv_value(s, v[0]), y = loom_sched_rv_value(s, v[1]),
              z = loom_sched_rv_value(s, v[2]);
      if (x * y * z != 24 || z > 4 || x < 1 || y < 1 || z < 1)
        bad++;
      else
        seen[x][y]++;
    }
    loom_sched_free(s);
  }
  CHECK(bad == 0);
  int kinds = 0, want = 0;
  for (int x = 1; x <= 24; x++)
    for (int y = 1; y <= 24; y++)
      if (24 % (x * y) == 0 && 24 / (x * y) <= 4) {
        want++;
        kinds += seen[x][y] > 0;
      }
  CHECK(kinds == want);
  loom_diag_free(&d);
}

/* sample_partitioned_tile: every draw splits 24 into three factors whose
 * last two multiply to a multiple of 4, and every such split comes up; a
 * decision that breaks the condition and a factor that cannot divide the
 * extent are refused. */
static void test_partitioned_sampler(const loom_module *m) {
  static const char *draw =
      "b0 = sch.get_block(name=\"sum\")\n"
      "l1, l2 = sch.get_loops(block=b0)\n"
      "v3, v4, v5 = sch.sample_partitioned_tile(loop=l1, n=3, "
      "partition_pos=1, innerpart_factor=4)\n";
  int seen[25][25] = {{0}};
  int bad = 0;
  for (int seed = 0; seed < 3000; seed++) {
    loom_sched *s = loom_sched_new(m, (uint64_t)seed);
    loom_diag d;
    loom_diag_init(&d);
    if (loom_sched_run_script(s, draw, strlen(draw), "s.py", &d) != LOOM_OK) {
      bad++;
    } else {
      loom_trace t = loom_sched_trace(s);
      const loom_tval *dec = &t.insts[t.n_insts - 1]->decision;
      int64_t x = dec->items[0].i, y = dec->items[1].i, z = dec->items[2].i;
      if (dec->n != 3 || x * y * z != 24 || (y * z) % 4 || x < 1 || y < 1 ||
          z < 1)
        bad++;
      else
        seen[x][y]++;
    }
    loom_diag_free(&d);
    loom_sched_free(s);
  }
  CHECK(bad == 0);
  int kinds = 0, want = 0;
  for (int x = 1; x <= 24; x++)
    for (int y = 1; y <= 24; y++)
      if (24 % (x * y) == 0 && (24 / x) % 4 == 0) {
        want++;
        kinds += seen[x][y] > 0;
      }
  CHECK(kinds == want);
  static const struct {
    const char *call, *error;
  } refused[] = {
      {"partition_pos=1, innerpart_factor=4, decision=[4, 3, 2])",
       "sample_partitioned_tile: the factors from position 1 on do not "
       "multiply to a multiple of innerpart_factor 4"},
      {"partition_pos=0, innerpart_factor=5)",
       "sample_partitioned_tile: innerpart_factor 5 does not divide the "
       "extent 24 of loop 'i'"},
      {"partition_pos=3, innerpart_factor=1)",
       "sample_partitioned_tile: partition_pos is 3 and innerpart_factor 1; "
       "they must be a factor's position (0 to 2) and positive"},
  };
  for (int i = 0; i < (int)(sizeof refused / sizeof *refused); i++) {
    char script[512];
    snprintf(script, sizeof script,
             "b0 = sch.get_block(name=\"sum\")\n"
             "l1, l2 = sch.get_loops(block=b0)\n"
             "v3, v4, v5 = sch.sample_partitioned_tile(loop=l1, n=3, %s\n",
             refused[i].call);
    loom_sched *s = loom_sched_new(m, 1);
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_sched_run_script(s, script, strlen(script), "s.py", &d) ==
          LOOM_ERROR);
    CHECK_STREQ(d.msg, refused[i].error);
    loom_diag_free(&d);
    loom_sched_free(s);
  }
}

/* Replays the JSON trace text on a fresh schedule of m in mode: the status,
 * the script form of the result (heap; NULL on failure) and the
 * diagnostic. */
static loom_status replay_json(const loom_module *m, const char *text,
                               loom_replay_mode mode, char **py, loom_diag *d) {
  loom_sched *s = loom_sched_new(m, 1);
  loom_arena *a = loom_arena_new();
  loom_trace t;
  loom_status st = loom_trace_read_json(text, strlen(text), "t.json", a, &t, d);
  if (st == LOOM_OK)
    st = loom_trace_apply(&t, s, mode, d);
  *py = st == LOOM_OK ? print_py(s) : NULL;
  loom_arena_free(a);
  loom_sched_free(s);
  return st;
}

/* A perfect tile decided for another extent: the tuner's replay repairs it
 * (from the innermost factor out), a checked replay refuses it at its
 * instruction with the product and the extent, and a resampling replay
 * draws a fresh one. */
static void test_stale_decision(const loom_module *m) {
  const char *trace =
      "[[[\"GetBlock\", [], [\"sum\", \"main\"], [\"b0\"]],\n"
      "  [\"GetLoops\", [\"b0\"], [], [\"l1\", \"l2\"]],\n"
      "  [\"SamplePerfectTile\", [\"l1\"], [3, 16], [\"v3\", \"v4\", \"v5\"]],\n"
      "  [\"Split\", [\"l1\", \"v3\", \"v4\", \"v5\"], [true, false], "
      "[\"l6\", \"l7\", \"l8\"]]],\n"
      " [[2, [5, 2, 4]]]]";
  loom_diag d;
  loom_diag_init(&d);
  char *py;
  CHECK(replay_json(m, trace, LOOM_REPLAY_REPAIR, &py, &d) == LOOM_OK);
  CHECK_CONTAINS(py, "decision=[3, 2, 4]");
  free(py);
  CHECK(replay_json(m, trace, LOOM_REPLAY_CHECK, &py, &d) == LOOM_ERROR);
  CHECK(py == NULL && d.loc.line == 3 && d.loc.col == 3);
  CHECK_STREQ(d.msg, "sample_perfect_tile: the decision [5, 2, 4] multiplies "
                     "to 40, but loop 'i' has extent 24: the factors must "
                     "multiply to 24");
  loom_diag_free(&d);
  loom_diag_init(&d);
  CHECK(replay_json(m, trace, LOOM_REPLAY_RESAMPLE, &py, &d) == LOOM_OK);
  CHECK(py && !strstr(py, "decision=[5, 2, 4]"));
  free(py);
  loom_diag_free(&d);
}

/* Decisions that fit no replay: an index past the candidates (a categorical
 * has no stale decision to repair: its candidates are its attributes) and
 * a decision on an instruction that decides nothing. */
static void test_misfit_decisions(const loom_module *m) {
  static const struct {
    const char *trace, *error;
  } cases[] = {
      {"[[[\"SampleCategorical\", [], [[1, 2], [0.5, 0.5]], [\"v0\"]]],\n"
       " [[0, 2]]]",
       "sample_categorical: the decision 2 is not an index into the 2 "
       "candidates: it must be 0 to 1"},
      {"[[[\"GetBlock\", [], [\"sum\", \"main\"], [\"b0\"]]],\n [[0, 3]]]",
       "get_block: this instruction takes no decision; only the sample_* "
       "instructions have one"},
  };
  for (int i = 0; i < (int)(sizeof cases / sizeof *cases); i++)
    for (int mode = LOOM_REPLAY_CHECK; mode <= LOOM_REPLAY_REPAIR; mode++) {
      loom_diag d;
      loom_diag_init(&d);
      char *py;
      CHECK(replay_json(m, cases[i].trace, (loom_replay_mode)mode, &py, &d) ==
            LOOM_ERROR);
      CHECK(d.loc.line == 1 && d.loc.col == 3);
      CHECK_STREQ(d.msg, cases[i].error);
      loom_diag_free(&d);
    }
}

/* A compute location that is no longer a candidate: the tuner's replay
 * falls back to the nearest candidate before it, or the root (TVM's rule;
 * the consumer's loops i and j are candidates, its trailing reduce loop k,
 * index 2, is not); a checked replay refuses it and lists the candidates. */
static void test_stale_location(void) {
  static const char *producer_consumer =
      "# from tvm.script import tir as T\n"
      "@T.prim_func\n"
      "def main(A: T.Buffer((16, 16), \"float32\"), W: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")):\n"
      "    B = T.alloc_buffer((16, 16))\n"
      "    for i, j in T.grid(16, 16):\n"
      "        with T.block(\"expo\"):\n"
      "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
      "            B[vi, vj] = T.exp(A[vi, vj])\n"
      "    for i, j, k in T.grid(16, 16, 16):\n"
      "        with T.block(\"matmul\"):\n"
      "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0.0)\n"
      "            C[vi, vj] = C[vi, vj] + B[vi, vk] * W[vk, vj]\n";
  static const struct {
    int stale, repaired;
  } cases[] = {{99, 1}, {2, 1}, {-3, -1}};
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(producer_consumer, strlen(producer_consumer), "pc.py",
                         a, &m, &d) == LOOM_OK);
  for (int i = 0; m && i < (int)(sizeof cases / sizeof *cases); i++) {
    char trace[512], want[64], error[256];
    snprintf(trace, sizeof trace,
             "[[[\"GetBlock\", [], [\"expo\", \"main\"], [\"b0\"]],\n"
             "  [\"SampleComputeLocation\", [\"b0\"], [], [\"l1\"]],\n"
             "  [\"ComputeAt\", [\"b0\", \"l1\"], [1, -1], []]],\n"
             " [[1, %d]]]",
             cases[i].stale);
    char *py;
    CHECK(replay_json(m, trace, LOOM_REPLAY_REPAIR, &py, &d) == LOOM_OK);
    snprintf(want, sizeof want, "decision=%d)", cases[i].repaired);
    CHECK_CONTAINS(py, want);
    free(py);
    CHECK(replay_json(m, trace, LOOM_REPLAY_CHECK, &py, &d) == LOOM_ERROR);
    snprintf(error, sizeof error,
             "sample_compute_location: the decision %d is not a compute "
             "location of block 'expo': it must be one of -2 (inline), -1 "
             "(the root), 0 (loop 'i'), 1 (loop 'j')",
             cases[i].stale);
    CHECK(d.loc.line == 2 && d.loc.col == 3);
    CHECK_STREQ(d.msg, error);
    loom_diag_free(&d);
    loom_diag_init(&d);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
}

static void expect_error(const loom_module *m, const char *text, bool is_json,
                         int line, int col, const char *msg) {
  loom_diag d;
  loom_diag_init(&d);
  loom_sched *s = loom_sched_new(m, 1);
  loom_arena *a = loom_arena_new();
  loom_status st;
  if (is_json) {
    loom_trace t;
    st = loom_trace_read_json(text, strlen(text), "t.json", a, &t, &d);
    if (st == LOOM_OK)
      st = loom_trace_apply(&t, s, LOOM_REPLAY_CHECK, &d);
  } else
    st = loom_sched_run_script(s, text, strlen(text), "t.py", &d);
  CHECK(st == LOOM_ERROR);
  CHECK(d.loc.line == line && d.loc.col == col);
  CHECK_CONTAINS(d.msg, msg);
  if (d.loc.line != line || d.loc.col != col)
    fprintf(stderr, "  at %d:%d: %s\n", d.loc.line, d.loc.col, d.msg);
  loom_arena_free(a);
  loom_sched_free(s);
  loom_diag_free(&d);
}

static void test_diagnostics(const loom_module *m) {
  expect_error(m, "[[[\"GetBlock\", [], [\"sum\", \"main\"], [\"b0\"]],\n"
                  "  [\"Frob\", [\"b0\"], [], []]], []]",
               true, 2, 4, "unknown instruction kind 'Frob'");
  expect_error(m, "[[[\"GetLoops\", [\"b7\"], [], [\"l0\"]]], []]", true, 1, 17,
               "undefined variable 'b7'");
  expect_error(m, "[[[\"GetBlock\", [], [\"sum\", \"main\"], [\"b0\"]]],\n [}", true,
               2, 3, "expected a JSON value");
  expect_error(m, "[[[\"GetBlock\", [], [\"sum\"", true, 1, 26,
               "expected ',' or ']'");
  expect_error(m, "b0 = sch.get_block(name=\"sum\")\n"
                  "l1, l2 = sch.get_loops(block=b0)\n"
                  "l3, l4 = sch.split(loop=l1, factors=[None, 5, 5])\n",
               false, 3, 1, "split gives 3 outputs here, but 2 names are given");
  expect_error(m, "b0 = sch.get_block(name=\"sum\", func_name=\"nope\")\n", false,
               1, 6, "no function named 'nope'");
  expect_error(m, "b0 = sch.get_block(name=\"sum\")\nx = y\n", false, 2, 5,
               "undefined variable 'y'");
  expect_error(m, "for i in range(3):\n    pass\n", false, 1, 1,
               "a schedule script holds only");
  expect_error(m, "b0 = sch.get_block(name=\"sum\")\nl1, l2 = sch.get_loops(b0)\n"
                  "sch.parallel(loop=l2)\n",
               false, 3, 1, "is a reduction iter");
}

/* Every allocation of a scripted schedule may fail: the result is a clean
 * error or success, never a crash or a leak (under ASan). */
static void test_faults(const loom_module *m) {
  const char *script =
      "b0 = sch.get_block(name=\"sum\")\n"
      "l1, l2 = sch.get_loops(block=b0)\n"
      "l3, l4 = sch.split(loop=l1, factors=[None, 5])\n"
      "sch.reorder(l2, l3)\n"
      "l5 = sch.fuse(l2, l3)\n";
  int failures = 0;
  for (long at = 1; at < 400; at++) {
    loom_sched *s = loom_sched_new(m, 1);
    if (!s)
      continue;
    loom_faultsim fs = {at, 0};
    loom_arena_set_faultsim(sched_arena(s), &fs);
    loom_diag d;
    loom_diag_init(&d);
    loom_status st = loom_sched_run_script(s, script, strlen(script), "f.py", &d);
    failures += st != LOOM_OK;
    CHECK(st == LOOM_OK || d.has_error);
    loom_diag_free(&d);
    loom_sched_free(s);
  }
  CHECK(failures > 0);
}

/* Mutated scripts and JSON traces (bytes replaced, inserted, deleted) are
 * read and applied: every outcome is a success or a diagnostic, never a
 * crash (ASan and UBSan watch the memory). */
static void test_mutations(const loom_module *m) {
  static const char *const seeds[] = {
      "b0 = sch.get_block(name=\"sum\", func_name=\"main\")\n"
      "l1, l2 = sch.get_loops(block=b0)\n"
      "v3, v4 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision=[4, 4])\n"
      "l5, l6 = sch.split(loop=l2, factors=[v3, v4], preserve_unit_iters=True, disable_predication=False)\n"
      "sch.reorder(l5, l1, l6)\n"
      "l7 = sch.add_unit_loop(block_or_loop=l6)\n"
      "sch.annotate(block_or_loop=b0, ann_key=\"k\", ann_val={\"a\": [1, 2.5, \"x\"]})\n"
      "b8 = sch.decompose_reduction(block=b0, loop=l5)\n",
      "[[[\"GetBlock\", [], [\"sum\", \"main\"], [\"b0\"]], [\"GetLoops\", [\"b0\"], [], "
      "[\"l1\", \"l2\"]], [\"SamplePerfectTile\", [\"l2\"], [2, 16], [\"v3\", \"v4\"]], "
      "[\"Split\", [\"l2\", \"v3\", \"None\"], [true, false], [\"l5\", \"l6\"]], "
      "[\"Annotate\", [\"l1\", [\"\\\"aa\\\"\", 1]], [\"t\"], []], "
      "[\"SampleCategorical\", [], [[1, 2], [0.5, 0.5]], [\"v7\"]]], [[2, [4, 4]], [5, 1]]]",
  };
  loom_rng r;
  loom_rng_seed(&r, 99);
  static const char alphabet[] = "[]{}(),:=\"_ .0123456789-abclvNTF\n\\";
  int applied = 0;
  for (int round = 0; round < 3000; round++) {
    int which = round % 2;
    const char *seed = seeds[which];
    size_t n = strlen(seed);
    char *text = malloc(n + 8);
    memcpy(text, seed, n + 1);
    int edits = round < 2 ? 0 : 1 + (int)loom_rng_below(&r, 3); /* seeds as they are first */
    for (int e = 0; e < edits && n > 1; e++) {
      size_t at = (size_t)loom_rng_below(&r, n);
      char ch = alphabet[loom_rng_below(&r, sizeof alphabet - 1)];
      switch (loom_rng_below(&r, 3)) {
      case 0:
        text[at] = ch;
        break;
      case 1: /* delete */
        memmove(text + at, text + at + 1, n - at);
        n--;
        break;
      default: /* insert, within the spare bytes */
        if (n + 1 < strlen(seed) + 8) {
          memmove(text + at + 1, text + at, n - at + 1);
          text[at] = ch;
          n++;
        }
        break;
      }
    }
    loom_diag d;
    loom_diag_init(&d);
    loom_sched *s = loom_sched_new(m, (uint64_t)round);
    loom_arena *a = loom_arena_new();
    loom_status st;
    if (which == 1) {
      loom_trace t;
      st = loom_trace_read_json(text, n, "m.json", a, &t, &d);
      if (st == LOOM_OK)
        st = loom_trace_apply(&t, s, (loom_replay_mode)loom_rng_below(&r, 3), &d);
    } else
      st = loom_sched_run_script(s, text, n, "m.py", &d);
    CHECK(st == LOOM_OK || d.has_error);
    if (round < 2 && st != LOOM_OK)
      fprintf(stderr, "seed %d: %s\n", round, d.msg);
    CHECK(round >= 2 || st == LOOM_OK);
    applied += st == LOOM_OK;
    if (st == LOOM_OK) {
      loom_buf b;
      loom_buf_init(&b);
      loom_trace t = loom_sched_trace(s);
      loom_trace_print_py(&t, LOOM_DIALECT_TIR, &b);
      loom_trace_print_json(&t, LOOM_DIALECT_TIRX, &b);
      loom_buf_free(&b);
    }
    loom_arena_free(a);
    loom_sched_free(s);
    loom_diag_free(&d);
    free(text);
  }
  CHECK(applied > 0);
}

/* The first store under s, NULL when there is none. */
static loom_stmt *first_store(loom_stmt *s) {
  if (!s || s->kind == LOOM_STMT_STORE)
    return s;
  if (s->kind == LOOM_STMT_FOR)
    return first_store(s->u.loop.body);
  if (s->kind == LOOM_STMT_BLOCK_REALIZE)
    return first_store(s->u.realize.block->body);
  for (int i = 0; s->kind == LOOM_STMT_SEQ && i < s->u.seq.n_stmts; i++) {
    loom_stmt *t = first_store(s->u.seq.stmts[i]);
    if (t)
      return t;
  }
  return NULL;
}

/* The IR verifier after every primitive: in debug and sanitizer builds
 * (LOOM_VERIFY_EACH) a primitive whose result breaks an IR invariant is an
 * internal error that names it, at its call; the release build does not
 * verify. The broken invariant is planted in the input (a store with too
 * few indices), on a copy of the program of its own. */
static void test_verify_each(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = load(a);
  loom_stmt *store = m ? first_store(m->funcs[0]->body) : NULL;
  CHECK(store && store->u.store.n_indices == 1);
  if (!store) {
    loom_arena_free(a);
    return;
  }
  store->u.store.n_indices = 0;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_ir_verify_module(m, &d) == LOOM_ERROR);
  loom_diag_free(&d);
  loom_diag_init(&d);
  loom_sched *s = loom_sched_new(m, 1);
  const char *script = "b0 = sch.get_block(name=\"sum\")\n"
                       "l1, l2 = sch.get_loops(block=b0)\n"
                       "l3, l4 = sch.split(loop=l1, factors=[None, 4])\n";
  loom_status st = loom_sched_run_script(s, script, strlen(script), "s.py", &d);
#ifdef LOOM_VERIFY_EACH
  /* The lookups change nothing and are not verified; the split is. */
  CHECK(st == LOOM_ERROR && d.loc.line == 3);
  CHECK_CONTAINS(d.msg, "internal error: after split, the IR fails "
                        "verification: buffer \"B\" has 1 dimension but is "
                        "stored to with 0 indices");
  CHECK(loom_sched_trace(s).n_insts == 2);
#else
  CHECK(st == LOOM_OK);
#endif
  loom_sched_free(s);
  loom_diag_free(&d);
  loom_arena_free(a);
}

int main(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = load(a);
  CHECK(m != NULL);
  if (m) {
    test_fork(m);
    test_simplify_and_resample(m);
    test_sampler(m);
    test_partitioned_sampler(m);
    test_stale_decision(m);
    test_misfit_decisions(m);
    test_stale_location();
    test_diagnostics(m);
    test_faults(m);
    test_mutations(m);
    test_verify_each();
  }
  loom_arena_free(a);
  return test_summary("schedule/trace");
}
