/* The mutators on traces made by a schedule script: a mutated trace changes
 * exactly one decision or annotation value, keeps every perfect tile's
 * product equal to its loop's extent and its innermost factor within the
 * limit, replays on the function, and is the same for the same seed; the
 * mutators are drawn with their documented probabilities; a decision made
 * stale by a mutation is repaired by the search's replay. */
#include "loom/script.h"
#include "loom/space.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

static const char *func =
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 48), \"float32\"), B: T.Buffer((48, 96), \"float32\"), C: T.Buffer((64, 96), \"float32\")):\n"
    "    T.func_attr({\"tir.noalias\": True})\n"
    "    for i, j, k in T.grid(64, 96, 48):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0.0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char *space =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "v4, v5, v6 = sch.sample_perfect_tile(loop=l1, n=3, max_innermost_factor=8)\n"
    "l7, l8, l9 = sch.split(loop=l1, factors=[v4, v5, v6])\n"
    "v10, v11 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16)\n"
    "l12, l13 = sch.split(loop=l2, factors=[v10, v11])\n"
    "v14, v15 = sch.sample_perfect_tile(loop=l3, n=2, max_innermost_factor=4)\n"
    "l16, l17 = sch.split(loop=l3, factors=[v14, v15])\n"
    "sch.reorder(l7, l12, l8, l16, l9, l17, l13)\n"
    "v18 = sch.sample_categorical(candidates=[0, 16, 64, 512], probs=[0.25, 0.25, 0.0, 0.5])\n"
    "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.unroll_explicit\", ann_val=v18)\n"
    "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.parallel\", ann_val=32)\n";

/* Extents of the split loops, in the order of the perfect tiles. */
static const int64_t extents[] = {64, 96, 48};
static const int64_t max_inner[] = {8, 16, 4};

static loom_module *mod;

static loom_sched *run_space(const char *text, uint64_t seed) {
  loom_sched *s = loom_sched_new(mod, seed);
  loom_diag d;
  loom_diag_init(&d);
  CHECK(s && loom_sched_run_script(s, text, strlen(text), "space.py", &d) == LOOM_OK);
  loom_diag_free(&d);
  return s;
}

static char *json(const loom_trace *t) {
  loom_buf b;
  loom_buf_init(&b);
  loom_trace_print_json(t, LOOM_DIALECT_TIR, &b);
  return loom_buf_take(&b);
}

static bool same_tval(const loom_tval *a, const loom_tval *b) {
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case LOOM_TV_NONE: return true;
  case LOOM_TV_FLOAT: return a->f == b->f;
  case LOOM_TV_STR: return !strcmp(a->s, b->s);
  case LOOM_TV_LIST:
  case LOOM_TV_DICT:
    if (a->n != b->n)
      return false;
    for (int i = 0; i < a->n; i++)
      if (!same_tval(&a->items[i], &b->items[i]))
        return false;
    return true;
  default: return a->i == b->i;
  }
}

/* Which instruction of t differs from u, and how: 'd' its decision, 'i' an
 * input; returns -1 unless exactly one thing differs. */
static int one_change(const loom_trace *t, const loom_trace *u, char *how) {
  int at = -1, n = 0;
  if (t->n_insts != u->n_insts)
    return -1;
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *a = t->insts[i], *b = u->insts[i];
    if (a->kind != b->kind || a->n_inputs != b->n_inputs)
      return -1;
    if (!same_tval(&a->decision, &b->decision)) {
      n++, at = i, *how = 'd';
    }
    for (int k = 0; k < a->n_inputs; k++)
      if (!same_tval(&a->inputs[k], &b->inputs[k]))
        n++, at = i, *how = 'i';
  }
  return n == 1 ? at : -1;
}

static void check_tiles(const loom_trace *t) {
  int k = 0;
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *inst = t->insts[i];
    if (inst->kind != LOOM_INST_SAMPLE_PERFECT_TILE)
      continue;
    int64_t prod = 1;
    for (int j = 0; j < inst->decision.n; j++)
      prod *= inst->decision.items[j].i;
    CHECK(k < 3 && prod == extents[k]);
    CHECK(inst->decision.items[inst->decision.n - 1].i <= max_inner[k]);
    k++;
  }
  CHECK(k == 3);
}

/* A tile of a loop that an earlier tile made: mutating the outer tile
 * changes the inner loop's extent, so the inner decision is stale. The
 * search's replay (LOOM_REPLAY_REPAIR) repairs it to a tile of the new
 * extent; a checked replay, as for a user's trace, refuses it. */
static void test_nested_tiles(const loom_target *tg) {
  const char *nested =
      "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
      "l1, l2, l3 = sch.get_loops(block=b0)\n"
      "v4, v5 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=64, decision=[4, 16])\n"
      "l6, l7 = sch.split(loop=l1, factors=[v4, v5])\n"
      "v8, v9 = sch.sample_perfect_tile(loop=l7, n=2, max_innermost_factor=16, decision=[4, 4])\n"
      "l10, l11 = sch.split(loop=l7, factors=[v8, v9])\n";
  int stale = 0;
  for (int r = 0; r < 40; r++) {
    loom_sched *s = run_space(nested, 1);
    loom_trace t = loom_sched_trace(s), m;
    loom_arena *a = loom_arena_new();
    loom_rng rng;
    loom_rng_seed(&rng, (uint64_t)r);
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_space_mutate(&t, tg, &rng, a, &m, &d) == LOOM_OK);
    const loom_tval *outer = &m.insts[2]->decision;
    int64_t inner_extent = outer->items[1].i;
    if (inner_extent != 16) {
      stale++;
      loom_sched *s2 = loom_sched_new(mod, 1);
      CHECK(s2 && loom_trace_apply(&m, s2, LOOM_REPLAY_REPAIR, &d) == LOOM_OK);
      loom_trace t2 = loom_sched_trace(s2);
      const loom_tval *inner = &t2.insts[4]->decision;
      CHECK(inner->n == 2 &&
            inner->items[0].i * inner->items[1].i == inner_extent);
      loom_sched_free(s2);
      loom_sched *s3 = loom_sched_new(mod, 1);
      CHECK(s3 && loom_trace_apply(&m, s3, LOOM_REPLAY_CHECK, &d) == LOOM_ERROR);
      CHECK_CONTAINS(d.msg, "sample_perfect_tile: the decision [4, 4] "
                            "multiplies to 16, but loop 'i_1' has extent");
      loom_sched_free(s3);
    }
    loom_diag_free(&d);
    loom_arena_free(a);
    loom_sched_free(s);
  }
  CHECK(stale > 0);
}

int main(void) {
  loom_arena *ma = loom_arena_new();
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(func, strlen(func), "f.py", ma, &mod, &d) == LOOM_OK);
  loom_target tg;
  CHECK(loom_target_parse("cpu -cores=2 -vector-bytes=32", &tg, &d) == LOOM_OK);

  double sum = 0;
  for (int k = 0; k < LOOM_MUTATOR_COUNT_; k++)
    sum += loom_mutator_probability(NULL, k);
  CHECK(fabs(sum - 1) < 1e-12 && loom_mutator_probability(NULL, LOOM_MUTATOR_TILE_SIZE) == 0.9);

  int counts[3] = {0}, n_runs = 3000;
  for (int r = 0; r < n_runs; r++) {
    loom_sched *s = run_space(space, (uint64_t)r + 1);
    loom_trace t = loom_sched_trace(s), m, m2;
    loom_arena *a = loom_arena_new();
    loom_rng rng, rng2;
    loom_rng_seed(&rng, (uint64_t)r);
    loom_rng_seed(&rng2, (uint64_t)r);
    CHECK(loom_space_mutate(&t, &tg, &rng, a, &m, &d) == LOOM_OK);
    CHECK(loom_space_mutate(&t, &tg, &rng2, a, &m2, &d) == LOOM_OK);
    char how = 0;
    int at = one_change(&t, &m, &how);
    CHECK(at >= 0);
    if (at < 0) {
      loom_arena_free(a);
      loom_sched_free(s);
      continue;
    }
    const loom_inst *was = t.insts[at], *now = m.insts[at];
    if (now->kind == LOOM_INST_SAMPLE_PERFECT_TILE) {
      counts[0]++;
      CHECK(how == 'd');
    } else if (now->kind == LOOM_INST_SAMPLE_CATEGORICAL) {
      counts[1]++;
      /* Another choice, never one of probability zero. */
      CHECK(how == 'd' && now->decision.i != was->decision.i && now->decision.i != 2);
    } else {
      counts[2]++;
      int64_t v = now->inputs[1].i;
      CHECK(now->kind == LOOM_INST_ANNOTATE && how == 'i' && v != 32);
      CHECK(v == 2 || v == 4 || v == 8 || v == 16);
    }
    check_tiles(&m);
    if (r < 200) {
      /* The same seed, the same mutation; and it replays. */
      char *j1 = json(&m), *j2 = json(&m2);
      CHECK_STREQ(j1, j2);
      free(j1);
      free(j2);
      loom_sched *s2 = loom_sched_new(mod, 7);
      CHECK(s2 && loom_trace_apply(&m, s2, LOOM_REPLAY_REPAIR, &d) == LOOM_OK);
      loom_trace t2 = loom_sched_trace(s2);
      check_tiles(&t2);
      loom_sched_free(s2);
    }
    loom_arena_free(a);
    loom_sched_free(s);
  }
  /* No compute location here: the three others share 0.95 (loose bounds,
   * several standard deviations wide). */
  double tile = counts[0] / (double)n_runs, unroll = counts[1] / (double)n_runs,
         par = counts[2] / (double)n_runs;
  printf("tile %.3f unroll %.3f parallel %.3f\n", tile, unroll, par);
  CHECK(tile > 0.92 && tile < 0.975);
  CHECK(unroll > 0.018 && unroll < 0.048);
  CHECK(par > 0.009 && par < 0.035);

  /* With only the annotations, the other mutators are drawn. */
  const char *ann_only =
      "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
      "v1 = sch.sample_categorical(candidates=[0, 16], probs=[0.5, 0.5])\n"
      "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.unroll_implicit\", ann_val=v1)\n";
  for (int r = 0; r < 20; r++) {
    loom_sched *s = run_space(ann_only, (uint64_t)r);
    loom_trace t = loom_sched_trace(s), m;
    loom_arena *a = loom_arena_new();
    loom_rng rng;
    loom_rng_seed(&rng, (uint64_t)r);
    CHECK(loom_space_mutate(&t, &tg, &rng, a, &m, &d) == LOOM_OK);
    char how;
    int at = one_change(&t, &m, &how);
    CHECK(at == 1 && m.insts[1]->decision.i == 1 - t.insts[1]->decision.i);
    loom_arena_free(a);
    loom_sched_free(s);
  }

  /* Nothing to mutate: a unit tile, a lone choice, no knobs at all. */
  const char *none =
      "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
      "l1, l2, l3 = sch.get_loops(block=b0)\n"
      "v4 = sch.sample_categorical(candidates=[0, 16], probs=[1.0, 0.0])\n"
      "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.unroll_explicit\", ann_val=v4)\n";
  loom_sched *s = run_space(none, 1);
  loom_trace t = loom_sched_trace(s), m;
  loom_arena *a = loom_arena_new();
  loom_rng rng;
  loom_rng_seed(&rng, 1);
  loom_diag nd;
  loom_diag_init(&nd);
  CHECK(loom_space_mutate(&t, &tg, &rng, a, &m, &nd) == LOOM_ERROR);
  CHECK_CONTAINS(nd.msg, "no mutator");
  loom_diag_free(&nd);
  loom_arena_free(a);
  loom_sched_free(s);

  /* A compute location (where the instruction kind exists): cleared, so
   * that the replay draws it again among the valid ones. */
  if (loom_inst_kind_by_json("SampleComputeLocation") >= 0) {
    const char *two =
        "@T.prim_func\n"
        "def main(A: T.Buffer((64, 64), \"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
        "    B = T.alloc_buffer((64, 64))\n"
        "    for i, j in T.grid(64, 64):\n"
        "        with T.block(\"B\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            B[vi, vj] = A[vi, vj] * T.float32(2.0)\n"
        "    for i, j in T.grid(64, 64):\n"
        "        with T.block(\"C\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            C[vi, vj] = B[vi, vj] + T.float32(1.0)\n";
    const char *loc =
        "b0 = sch.get_block(name=\"B\", func_name=\"main\")\n"
        "v1 = sch.sample_compute_location(block=b0)\n"
        "sch.compute_at(block=b0, loop=v1)\n";
    loom_module *m2;
    loom_arena *a2 = loom_arena_new();
    CHECK(loom_script_read(two, strlen(two), "two.py", a2, &m2, &d) == LOOM_OK);
    loom_module *keep = mod;
    mod = m2;
    for (int r = 0; r < 20; r++) {
      loom_sched *s2 = run_space(loc, (uint64_t)r);
      loom_trace t2 = loom_sched_trace(s2), m3;
      loom_arena *a3 = loom_arena_new();
      loom_rng rng3;
      loom_rng_seed(&rng3, (uint64_t)r);
      CHECK(loom_space_mutate(&t2, &tg, &rng3, a3, &m3, &d) == LOOM_OK);
      char how;
      int at = one_change(&t2, &m3, &how);
      CHECK(at == 1 && how == 'd' && m3.insts[1]->decision.kind == LOOM_TV_NONE);
      loom_sched *s3 = loom_sched_new(m2, (uint64_t)r + 100);
      CHECK(s3 && loom_trace_apply(&m3, s3, LOOM_REPLAY_REPAIR, &d) == LOOM_OK);
      loom_sched_free(s3);
      loom_arena_free(a3);
      loom_sched_free(s2);
    }
    mod = keep;
    loom_arena_free(a2);
  }

  test_nested_tiles(&tg);

  /* Stripping a trace without postprocessing keeps it whole. */
  s = run_space(space, 3);
  t = loom_sched_trace(s);
  loom_trace st = loom_space_strip_postproc(&t);
  CHECK(st.n_insts == t.n_insts && st.insts == t.insts);
  loom_sched_free(s);

  loom_diag_free(&d);
  loom_arena_free(ma);
  return test_summary("test_mutators");
}
