/* The design spaces of a matmul: MetaSchedule's three (tiling "SSRSRS"
 * with no write cache, or a cache written back at tile level 1 or 2), in
 * the instruction order of TVM's recorded CPU trace, and the postprocessed
 * candidate ending as that trace does; then the same three reading B
 * through a copy packed by the vector lanes. Decisions are left
 * out of the comparison: they are random draws. Also: blocks a user claims
 * with the `schedule_rule` annotation are left alone, and reductions with
 * few outputs are rfactored. */
#include "loom/script.h"
#include "loom/space.h"
#include "program.h"
#include "test.h"

#include <stdlib.h>

/* TVM's recorded CPU trace of a 128x128x128 matmul (metaschedule-facts.md,
 * section 2.5), with Split in the two-attribute form of TVM 0.17 on. */
static const char *tvm_record =
    "[[[\"GetBlock\",[],[\"update\",\"main\"],[\"b0\"]],[\"GetBlock\",[],[\""
    "root\",\"main\"],[\"b1\"]],[\"Annotate\",[\"b0\",\"\\\"SSRSRS\\\"\"],["
    "\"meta_schedule.tiling_structure\"],[]],[\"GetLoops\",[\"b0\"],[],[\"l"
    "2\",\"l3\",\"l4\"]],[\"SamplePerfectTile\",[\"l2\"],[4,64],[\"v5\",\"v"
    "6\",\"v7\",\"v8\"]],[\"Split\",[\"l2\",\"v5\",\"v6\",\"v7\",\"v8\"],[1"
    ",0],[\"l9\",\"l10\",\"l11\",\"l12\"]],[\"SamplePerfectTile\",[\"l3\"],"
    "[4,64],[\"v13\",\"v14\",\"v15\",\"v16\"]],[\"Split\",[\"l3\",\"v13\",\""
    "v14\",\"v15\",\"v16\"],[1,0],[\"l17\",\"l18\",\"l19\",\"l20\"]],[\"Sam"
    "plePerfectTile\",[\"l4\"],[2,64],[\"v21\",\"v22\"]],[\"Split\",[\"l4\""
    ",\"v21\",\"v22\"],[1,0],[\"l23\",\"l24\"]],[\"Reorder\",[\"l9\",\"l17\""
    ",\"l10\",\"l18\",\"l23\",\"l11\",\"l19\",\"l24\",\"l12\",\"l20\"],[],["
    "]],[\"CacheWrite\",[\"b0\",[]],[0,\"global\"],[\"b25\"]],[\"ReverseCom"
    "puteAt\",[\"b25\",\"l18\"],[1,-1],[]],[\"Annotate\",[\"b1\",64],[\"met"
    "a_schedule.parallel\"],[]],[\"Annotate\",[\"b1\",64],[\"meta_schedule."
    "vectorize\"],[]],[\"SampleCategorical\",[],[[0,16,64,512],[0.25,0.25,0"
    ".25,0.25]],[\"v26\"]],[\"Annotate\",[\"b1\",\"v26\"],[\"meta_schedule."
    "unroll_explicit\"],[]],[\"EnterPostproc\",[],[],[]],[\"GetBlock\",[],["
    "\"root\",\"main\"],[\"b27\"]],[\"Unannotate\",[\"b27\"],[\"meta_schedu"
    "le.parallel\"],[]],[\"Unannotate\",[\"b27\"],[\"meta_schedule.vectoriz"
    "e\"],[]],[\"Unannotate\",[\"b27\"],[\"meta_schedule.unroll_explicit\"]"
    ",[]],[\"GetChildBlocks\",[\"b27\"],[],[\"b28\",\"b29\"]],[\"GetLoops\""
    ",[\"b28\"],[],[\"l30\",\"l31\",\"l32\",\"l33\",\"l34\",\"l35\",\"l36\""
    ",\"l37\",\"l38\",\"l39\"]],[\"Fuse\",[\"l30\",\"l31\",\"l32\",\"l33\"]"
    ",[1],[\"l40\"]],[\"Parallel\",[\"l40\"],[],[]],[\"Fuse\",[\"l39\"],[1]"
    ",[\"l41\"]],[\"Vectorize\",[\"l41\"],[],[]],[\"Annotate\",[\"l40\",64]"
    ",[\"pragma_auto_unroll_max_step\"],[]],[\"Annotate\",[\"l40\",1],[\"pr"
    "agma_unroll_explicit\"],[]],[\"GetLoops\",[\"b29\"],[],[\"l42\",\"l43\""
    ",\"l44\"]],[\"Fuse\",[\"l44\"],[1],[\"l45\"]],[\"Vectorize\",[\"l45\"]"
    ",[],[]],[\"GetBlock\",[],[\"update\",\"main\"],[\"b46\"]],[\"GetLoops\""
    ",[\"b46\"],[],[\"l47\",\"l48\",\"l49\",\"l50\",\"l51\",\"l52\",\"l53\""
    "]],[\"DecomposeReduction\",[\"b46\",\"l48\"],[],[\"b54\"]]],[[4,[2,4,8"
    ",2]],[6,[2,2,8,4]],[8,[32,4]],[15,2]]]";

static const char *matmul =
    "@T.prim_func\n"
    "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), "
    "\"float32\"), C: T.Buffer((128, 128), \"float32\")):\n"
    "    for i, j, k in T.grid(128, 128, 128):\n"
    "        with T.block(\"update\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0.0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

#define TILING                                                                 \
  "b0 = sch.get_block(name=\"update\", func_name=\"main\")\n"                  \
  "b1 = sch.get_block(name=\"root\", func_name=\"main\")\n"                    \
  "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.tiling_structure\", " \
  "ann_val=\"SSRSRS\")\n"                                                      \
  "l2, l3, l4 = sch.get_loops(block=b0)\n"                                     \
  "v5, v6, v7, v8 = sch.sample_perfect_tile(loop=l2, n=4, "                    \
  "max_innermost_factor=64)\n"                                                 \
  "l9, l10, l11, l12 = sch.split(loop=l2, factors=[v5, v6, v7, v8], "          \
  "preserve_unit_iters=True, disable_predication=False)\n"                     \
  "v13, v14, v15, v16 = sch.sample_perfect_tile(loop=l3, n=4, "                \
  "max_innermost_factor=64)\n"                                                 \
  "l17, l18, l19, l20 = sch.split(loop=l3, factors=[v13, v14, v15, v16], "     \
  "preserve_unit_iters=True, disable_predication=False)\n"                     \
  "v21, v22 = sch.sample_perfect_tile(loop=l4, n=2, "                          \
  "max_innermost_factor=64)\n"                                                 \
  "l23, l24 = sch.split(loop=l4, factors=[v21, v22], "                         \
  "preserve_unit_iters=True, disable_predication=False)\n"                     \
  "sch.reorder(l9, l17, l10, l18, l23, l11, l19, l24, l12, l20)\n"

#define ROOT(b, v)                                                             \
  "sch.annotate(block_or_loop=" b ", ann_key=\"meta_schedule.parallel\", "     \
  "ann_val=64)\n"                                                              \
  "sch.annotate(block_or_loop=" b ", ann_key=\"meta_schedule.vectorize\", "    \
  "ann_val=64)\n" v " = sch.sample_categorical(candidates=[0, 16, 64, 512], "  \
  "probs=[0.25, 0.25, 0.25, 0.25])\n"                                          \
  "sch.annotate(block_or_loop=" b ", ann_key=\"meta_schedule.unroll_explicit\", " \
  "ann_val=" v ")\n"

static const char *expected[3] = {
    TILING ROOT("b1", "v25"),
    TILING "b25 = sch.cache_write(block=b0, write_buffer_index=0, "
           "storage_scope=\"global\")\n"
           "sch.reverse_compute_at(block=b25, loop=l17, "
           "preserve_unit_loops=True, index=-1)\n" ROOT("b1", "v26"),
    TILING "b25 = sch.cache_write(block=b0, write_buffer_index=0, "
           "storage_scope=\"global\")\n"
           "sch.reverse_compute_at(block=b25, loop=l18, "
           "preserve_unit_loops=True, index=-1)\n" ROOT("b1", "v26"),
};


static loom_module *read_module(loom_arena *a, const char *text) {
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_script_read(text, strlen(text), "t.py", a, &m, &d) != LOOM_OK)
    fprintf(stderr, "read: %s\n", d.msg);
  loom_diag_free(&d);
  return m;
}

static void check_matmul(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = read_module(a, matmul);
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu -cores=4 -vector-bytes=64", &t, &d) == LOOM_OK);
  loom_trace *spaces;
  int n = 0;
  CHECK(m && loom_space_generate(m, &t, a, &spaces, &n, &d) == LOOM_OK);
  CHECK(n == 6);
  for (int i = 0; i < n && i < 3; i++) {
    char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIR);
    CHECK_STREQ(got, expected[i]);
    free(got);
  }
  /* The third space sampled and postprocessed ends as TVM's record does:
   * the outer spatial tiles fused and parallel, the innermost spatial
   * loops vectorized where contiguous, the reduction decomposed. */
  if (n == 6) {
    loom_sched *s = loom_sched_new(m, 7);
    CHECK(loom_trace_apply(&spaces[2], s, LOOM_REPLAY_RESAMPLE, &d) == LOOM_OK);
    CHECK(loom_space_postprocess(s, &t, &d) == LOOM_OK);
    loom_trace ct = loom_sched_trace(s);
    char *got = program_trace_plain(&ct, LOOM_DIALECT_TIR);
    CHECK_CONTAINS(got, "sch.enter_postproc()\n"
                        "b27 = sch.get_block(name=\"root\", func_name=\"main\")\n"
                        "sch.unannotate(block_or_loop=b27, ann_key=\"meta_schedule.parallel\")\n"
                        "sch.unannotate(block_or_loop=b27, ann_key=\"meta_schedule.vectorize\")\n"
                        "sch.unannotate(block_or_loop=b27, ann_key=\"meta_schedule.unroll_explicit\")\n"
                        "b28, b29 = sch.get_child_blocks(block_or_loop=b27)\n"
                        "l30, l31, l32, l33, l34, l35, l36, l37, l38, l39 = sch.get_loops(block=b28)\n");
    loom_trace stripped = loom_space_strip_postproc(&ct);
    CHECK(stripped.n_insts == spaces[2].n_insts);
    CHECK(stripped.insts[stripped.n_insts - 1]->kind == LOOM_INST_ANNOTATE);
    free(got);
    loom_sched_free(s);
  }
  /* Then the same three reading B through a copy packed by the 16 lanes of
   * a 64-byte vector, j's innermost tile fixed to them. */
  for (int i = 3; i < n; i++) {
    char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIR);
    CHECK_CONTAINS(got, "b0 = sch.get_block(name=\"update\", func_name=\"main\")\n"
                        "b1 = sch.get_block(name=\"root\", func_name=\"main\")\n"
                        "b2 = sch.reindex_cache_read(block=b0, read_buffer_index=1, "
                        "storage_scope=\"global\", index_map=lambda v0, v1, v2: "
                        "(v1 // 16, v2, v1 % 16))\n"
                        "l3, l4 = sch.get_loops(block=b2)\n"
                        "l5, l6 = sch.split(loop=l3, factors=[8, 16], preserve_unit_iters=True, "
                        "disable_predication=False)\n"
                        "l7, l8 = sch.split(loop=l4, factors=[8, 16], preserve_unit_iters=True, "
                        "disable_predication=False)\n"
                        "sch.reorder(l7, l5, l8, l6)\n");
    CHECK_CONTAINS(got, "l20, l21 = sch.split(loop=l10, factors=[8, 16], preserve_unit_iters=True, "
                        "disable_predication=False)\n"
                        "v22, v23, v24 = sch.sample_perfect_tile(loop=l20, n=3, "
                        "max_innermost_factor=64)\n");
    CHECK_CONTAINS(got, "sch.reorder(l16, l25, l17, l26, l30, l18, l27, l31, l19, l21)\n");
    free(got);
  }
  /* Postprocessed, the copy is parallel over blocks of 16 x 16 (k_0, j_0)
   * and their rows (k_1), and vectorized over its 16 lanes, and so is the
   * block's innermost loop, which reads the packed copy contiguously. */
  if (n == 6) {
    loom_sched *s = loom_sched_new(m, 7);
    CHECK(loom_trace_apply(&spaces[3], s, LOOM_REPLAY_RESAMPLE, &d) == LOOM_OK);
    CHECK(loom_space_postprocess(s, &t, &d) == LOOM_OK);
    loom_buf b;
    loom_buf_init(&b);
    loom_script_print_module(loom_sched_module(s), &(loom_print_opts){LOOM_DIALECT_TIR}, &b);
    CHECK_CONTAINS(b.data, "B_global = T.alloc_buffer((8, 128, 16))\n"
                           "    for k_0_j_0_k_1_fused in T.parallel(1024):\n"
                           "        for j_1_fused in T.vectorized(16):\n");
    CHECK_CONTAINS(b.data, "for j_1_fused in T.vectorized(16):\n"
                           "                with T.block(\"update_update\"):\n");
    loom_buf_free(&b);
    loom_sched_free(s);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
}

static char *print_json(const loom_trace *t) {
  loom_buf b;
  loom_buf_init(&b);
  loom_trace_print_json(t, LOOM_DIALECT_TIR, &b);
  return loom_buf_take(&b);
}

/* TVM's record, replayed up to its enter_postproc and postprocessed here,
 * gives TVM's record again, instruction for instruction. */
static void check_tvm_record(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = read_module(a, matmul);
  loom_diag d;
  loom_diag_init(&d);
  loom_trace ref;
  CHECK(loom_trace_read_json(tvm_record, strlen(tvm_record), "record.json", a,
                             &ref, &d) == LOOM_OK);
  loom_target t;
  CHECK(loom_target_parse("cpu -cores=4 -vector-bytes=64", &t, &d) == LOOM_OK);
  loom_trace head = loom_space_strip_postproc(&ref);
  CHECK(head.n_insts == 17);
  loom_sched *s = m ? loom_sched_new(m, 1) : NULL;
  CHECK(s && loom_trace_apply(&head, s, LOOM_REPLAY_CHECK, &d) == LOOM_OK);
  CHECK(s && loom_space_postprocess(s, &t, &d) == LOOM_OK);
  if (d.msg)
    fprintf(stderr, "%s\n", d.msg);
  if (s) {
    loom_trace got = loom_sched_trace(s);
    char *x = print_json(&got), *y = print_json(&ref);
    CHECK_STREQ(x, y);
    free(x);
    free(y);
  }
  loom_sched_free(s);
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* A block annotated schedule_rule is the user's: no rule touches it. */
static void check_user_block(void) {
  loom_arena *a = loom_arena_new();
  loom_buf b;
  loom_buf_init(&b);
  const char *at = strstr(matmul, "            with T.init");
  loom_buf_putn(&b, matmul, (size_t)(at - matmul));
  loom_buf_puts(&b, "            T.block_attr({\"schedule_rule\": \"mine\"})\n");
  loom_buf_puts(&b, at);
  loom_module *m = read_module(a, b.data);
  loom_buf_free(&b);
  loom_target t;
  loom_target_detect(&t);
  loom_trace *spaces;
  int n = 0;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(m && loom_space_generate(m, &t, a, &spaces, &n, &d) == LOOM_OK);
  CHECK(n == 1);
  if (n == 1) {
    char *got = program_trace_plain(&spaces[0], LOOM_DIALECT_TIR);
    CHECK(!strstr(got, "tiling_structure"));
    CHECK_CONTAINS(got, "meta_schedule.parallel");
    free(got);
  }
  /* The user's script for "mine" schedules the block; the rules add the
   * root's annotations. A script that refuses fails the generation at
   * its line; so does a rule for a block that is not there. */
  static const char script[] =
      "b0 = sch.get_block(name=\"update\", func_name=\"main\")\n"
      "l1, l2, l3 = sch.get_loops(block=b0)\n"
      "v4, v5 = sch.sample_perfect_tile(loop=l3, n=2, max_innermost_factor=16)\n"
      "l6, l7 = sch.split(loop=l3, factors=[v4, v5])\n";
  loom_space_script sc = {script, sizeof script - 1, "mine.py"};
  loom_space_rule mine = {"mine", loom_space_apply_script, &sc};
  CHECK(loom_space_generate_with(m, &t, &mine, 1, a, &spaces, &n, &d) == LOOM_OK);
  CHECK(n == 1);
  if (n == 1) {
    char *got = program_trace_plain(&spaces[0], LOOM_DIALECT_TIR);
    CHECK_CONTAINS(got, "v5, v6 = sch.sample_perfect_tile(loop=l4, n=2, "
                        "max_innermost_factor=16)\n");
    CHECK(!strstr(got, "tiling_structure"));
    CHECK_CONTAINS(got, "meta_schedule.parallel");
    free(got);
  }
  static const char bad[] = "b0 = sch.get_block(name=\"update\", func_name=\"main\")\n"
                            "sch.compute_inline(block=b0)\n";
  loom_space_script sb = {bad, sizeof bad - 1, "bad.py"};
  loom_space_rule refused = {"update", loom_space_apply_script, &sb};
  CHECK(loom_space_generate_with(m, &t, &refused, 1, a, &spaces, &n, &d) == LOOM_ERROR);
  CHECK(d.loc.file && !strcmp(d.loc.file, "bad.py") && d.loc.line == 2);
  loom_diag_free(&d);
  loom_diag_init(&d);
  loom_space_rule absent = {"nosuch", loom_space_apply_script, &sc};
  CHECK(loom_space_generate_with(m, &t, &absent, 1, a, &spaces, &n, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "no block is named 'nosuch'");
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* A rule of the caller's offered every block: it marks the matmul's
 * block, refuses the others, and the built-in rules go on as before. */
static int n_offered;
static loom_status mark(void *ctx, loom_sched *s, const char *block,
                        loom_sched_rv rv, loom_diag *d) {
  (void)ctx;
  n_offered++;
  if (strcmp(block, "update"))
    return loom_diag_error(d, (loom_loc){0}, "not a block of mine");
  loom_tval in[2] = {loom_tval_rv(rv), loom_tval_str("seen")};
  loom_tval key = loom_tval_str("note");
  return loom_sched_apply(s, LOOM_INST_ANNOTATE, in, 2, &key, 1,
                          loom_tval_none(), (loom_loc){0},
                          NULL, NULL, d);
}

static void check_custom_rule(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = read_module(a, matmul);
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu -vector-bytes=64", &t, &d) == LOOM_OK);
  loom_space_rule r = {NULL, mark, NULL};
  loom_trace *spaces;
  int n = 0;
  CHECK(m && loom_space_generate_with(m, &t, &r, 1, a, &spaces, &n, &d) == LOOM_OK);
  CHECK(n == 6);
  CHECK(n_offered >= 1);
  for (int i = 0; i < n; i++) {
    char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIR);
    CHECK_CONTAINS(got, "sch.annotate(block_or_loop=b0, ann_key=\"note\", "
                        "ann_val=\"seen\")\n");
    CHECK_CONTAINS(got, "tiling_structure");
    free(got);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* FILE has n_want spaces; every one holds `want` and none holds
 * `unwanted`; space k (0-based; -1 for none) holds `only_k` too, and no
 * other space does. */
static void check_spaces(const char *root, const char *file, int n_want,
                         const char *want, const char *unwanted, int k,
                         const char *only_k);

/* The files of check_each_space tile a 16 x 16 matmul whose W the 16
 * lanes pack: three spaces, and three more reading the packed copy. */
static void check_each_space(const char *root, const char *file,
                             const char *want, const char *unwanted) {
  check_spaces(root, file, 6, want, unwanted, -1, NULL);
}

/* The spaces of tests/space/cases/<file> for this machine with 64-byte
 * vectors (packing depends on the lanes), in a, and the module into *mp
 * when mp is not NULL; -1 when the file does not read. */
static int case_spaces(const char *root, const char *file, loom_arena *a,
                       loom_trace **spaces, loom_module **mp) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/space/cases/%s", root, file);
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  loom_module *m = NULL;
  int n = -1;
  CHECK(loom_read_file(path, &text, &len, &d) == LOOM_OK);
  if (!d.has_error) {
    CHECK(loom_script_read(text, len, path, a, &m, &d) == LOOM_OK);
    free(text);
    loom_target t;
    n = 0;
    CHECK(loom_target_parse("cpu -vector-bytes=64", &t, &d) == LOOM_OK);
    CHECK(m && loom_space_generate(m, &t, a, spaces, &n, &d) == LOOM_OK);
  }
  loom_diag_free(&d);
  if (mp)
    *mp = m;
  return n;
}

static void check_spaces(const char *root, const char *file, int n_want,
                         const char *want, const char *unwanted, int k,
                         const char *only_k) {
  loom_arena *a = loom_arena_new();
  loom_trace *spaces;
  int n = case_spaces(root, file, a, &spaces, NULL);
  if (n < 0) {
    loom_arena_free(a);
    return;
  }
  CHECK(n == n_want);
  for (int i = 0; i < n; i++) {
    char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIR);
    CHECK_CONTAINS(got, want);
    CHECK(!strstr(got, unwanted));
    if (only_k && i == k)
      CHECK_CONTAINS(got, only_k);
    else if (only_k)
      CHECK(!strstr(got, only_k));
    free(got);
  }
  loom_arena_free(a);
}

/* RewriteParallelVectorizeUnroll on spatial blocks: the outer loops fused
 * and parallel, the innermost loop vectorized only where every access is
 * contiguous along it (not in a transpose), no unroll for a purely spatial
 * function. */
static const char *copy_and_transpose =
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 32), \"float32\"), B: T.Buffer((64, 32), "
    "\"float32\"), C: T.Buffer((32, 64), \"float32\")):\n"
    "    for i, j in T.grid(64, 32):\n"
    "        with T.block(\"copy\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            B[vi, vj] = A[vi, vj]\n"
    "    for i, j in T.grid(64, 32):\n"
    "        with T.block(\"transpose\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            C[vj, vi] = A[vi, vj]\n";

static void check_spatial_postproc(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = read_module(a, copy_and_transpose);
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  /* No work limit: the program is small. */
  CHECK(loom_target_parse("cpu -cores=1 -min-parallel-work=0", &t, &d) == LOOM_OK);
  loom_trace *spaces;
  int n = 0;
  CHECK(m && loom_space_generate(m, &t, a, &spaces, &n, &d) == LOOM_OK);
  CHECK(n == 1);
  if (n == 1) {
    loom_sched *s = loom_sched_new(m, 3);
    CHECK(loom_trace_apply(&spaces[0], s, LOOM_REPLAY_RESAMPLE, &d) == LOOM_OK);
    CHECK(loom_space_postprocess(s, &t, &d) == LOOM_OK);
    loom_trace ct = loom_sched_trace(s);
    loom_trace head = loom_space_strip_postproc(&ct);
    char *got = program_trace_plain(&ct, LOOM_DIALECT_TIR), *space = program_trace_plain(&head, LOOM_DIALECT_TIR);
    CHECK(!strstr(space, "unroll"));
    /* 16 jobs: i (64) passes the limit and is the one loop taken. */
    CHECK_CONTAINS(got, "b2, b3 = sch.get_child_blocks(block_or_loop=b1)\n"
                        "l4, l5 = sch.get_loops(block=b2)\n"
                        "l6 = sch.fuse(l4, preserve_unit_iters=True)\n"
                        "sch.parallel(loop=l6)\n"
                        "l7 = sch.fuse(l5, preserve_unit_iters=True)\n"
                        "sch.vectorize(loop=l7)\n"
                        "l8, l9 = sch.get_loops(block=b3)\n"
                        "l10 = sch.fuse(l8, preserve_unit_iters=True)\n"
                        "sch.parallel(loop=l10)\n");
    CHECK(!strstr(got, "l11"));
    CHECK(!strstr(got, "pragma_auto_unroll_max_step"));
    free(got);
    free(space);
    loom_sched_free(s);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* Long innermost loops are split for vectorization, by a sampled factor,
 * in functions with the work for a parallel loop; below the work limit
 * nothing changes (the C compiler vectorizes such loops itself). An update
 * in place, loops under an if/else (100 x 100, as the long-tail seeds),
 * the same with the limit off, and a large elementwise add. */
static const char *in_place =
    "@T.prim_func\n"
    "def main(A: T.Buffer((100,), \"float16\"), B: T.Buffer((100,), \"float16\")):\n"
    "    for i_ in range(100):\n"
    "        with T.block(\"block\"):\n"
    "            i = T.axis.remap(\"S\", [i_])\n"
    "            B[i] = B[i] + A[i]\n";
static const char *branches =
    "@T.prim_func\n"
    "def main(A: T.Buffer((100, 100), \"float16\")):\n"
    "    for i in range(100):\n"
    "        if i % 2 == 0:\n"
    "            for j in range(100):\n"
    "                with T.block(\"block1\"):\n"
    "                    v_i, v_j = T.axis.remap(\"SS\", [i, j])\n"
    "                    A[v_i, v_j] = T.float16(1.0)\n"
    "        else:\n"
    "            for j in range(100):\n"
    "                with T.block(\"block2\"):\n"
    "                    v_i, v_j = T.axis.remap(\"SS\", [i, j])\n"
    "                    A[v_i, v_j] = T.float16(2.0)\n";
static const char *big_add =
    "@T.prim_func\n"
    "def main(A: T.Buffer((256, 1024), \"float32\"), B: T.Buffer((256, 1024), \"float32\")):\n"
    "    for i, j in T.grid(256, 1024):\n"
    "        with T.block(\"add\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            B[vi, vj] = A[vi, vj] + T.float32(1.0)\n";

/* Generates the one space of text for 2 cores, checks it splits n_splits
 * loops and marks parallel or not, and that postprocessed samples
 * vectorize (and parallelize when marked). */
static void check_long_loops_of(const char *text, const char *target, int n_splits,
                                bool is_parallel) {
  loom_arena *a = loom_arena_new();
  loom_module *m = read_module(a, text);
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse(target, &t, &d) == LOOM_OK);
  loom_trace *spaces;
  int n = 0;
  CHECK(m && loom_space_generate(m, &t, a, &spaces, &n, &d) == LOOM_OK);
  CHECK(n == 1);
  if (n != 1) {
    loom_diag_free(&d);
    loom_arena_free(a);
    return;
  }
  char *space = program_trace_plain(&spaces[0], LOOM_DIALECT_TIR);
  int splits = 0;
  for (const char *p = space; (p = strstr(p, "n=2, max_innermost_factor=64")); p++)
    splits++;
  CHECK(splits == n_splits);
  CHECK(!!strstr(space, "meta_schedule.parallel") == is_parallel);
  int n_vectorized = 0, n_parallel = 0;
  for (uint64_t seed = 1; seed <= 12; seed++) {
    loom_sched *s = loom_sched_new(m, seed);
    CHECK(loom_trace_apply(&spaces[0], s, LOOM_REPLAY_RESAMPLE, &d) == LOOM_OK);
    CHECK(loom_space_postprocess(s, &t, &d) == LOOM_OK);
    loom_trace ct = loom_sched_trace(s);
    char *got = program_trace_plain(&ct, LOOM_DIALECT_TIR);
    n_vectorized += strstr(got, "sch.vectorize(") != NULL;
    n_parallel += strstr(got, "sch.parallel(") != NULL;
    free(got);
    loom_sched_free(s);
  }
  CHECK(n_splits == 0 || n_vectorized > 0);
  CHECK(is_parallel ? n_parallel == 12 : n_parallel == 0);
  free(space);
  loom_diag_free(&d);
  loom_arena_free(a);
}

static void check_long_loops(void) {
  check_long_loops_of(in_place, "cpu -cores=2", 0, false);
  check_long_loops_of(branches, "cpu -cores=2", 0, false);
  check_long_loops_of(in_place, "cpu -cores=2 -min-parallel-work=0", 1, true);
  check_long_loops_of(branches, "cpu -cores=2 -min-parallel-work=0", 2, true);
  check_long_loops_of(big_add, "cpu -cores=2", 1, true);
}

/* Six chained matmuls would make 3^6 = 729 spaces; 243 are kept. */
static void check_many_tiled_blocks(void) {
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_puts(&b, "@T.prim_func\n"
                    "def main(A: T.Buffer((8, 8), \"float32\"), W: T.Buffer((8, 8), "
                    "\"float32\"), Z: T.Buffer((8, 8), \"float32\")):\n");
  for (int i = 0; i < 5; i++)
    loom_buf_printf(&b, "    T%d = T.alloc_buffer((8, 8))\n", i);
  for (int s = 0; s < 6; s++) {
    char src[8], dst[8];
    snprintf(src, sizeof src, s ? "T%d" : "A", s - 1);
    snprintf(dst, sizeof dst, s < 5 ? "T%d" : "Z", s);
    loom_buf_printf(&b,
                    "    for i, j, k in T.grid(8, 8, 8):\n"
                    "        with T.block(\"mm%d\"):\n"
                    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
                    "            with T.init():\n"
                    "                %s[vi, vj] = T.float32(0.0)\n"
                    "            %s[vi, vj] = %s[vi, vj] + %s[vi, vk] * W[vk, vj]\n",
                    s, dst, dst, dst, src);
  }
  loom_arena *a = loom_arena_new();
  loom_module *m = read_module(a, b.data);
  loom_buf_free(&b);
  loom_target t;
  loom_target_detect(&t);
  loom_trace *spaces;
  int n = 0;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(m && loom_space_generate(m, &t, a, &spaces, &n, &d) == LOOM_OK);
  CHECK(n == 243);
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* A dense layer reads B[vj, vk]: vectors over vj would gather, so half the
 * spaces read B through a copy transposed to [vk, vj]. (A matmul's B[vk, vj]
 * gets no copy: check_spaces finds its 3 spaces alone.) */
static void check_gathered_read(const char *root) {
  loom_arena *a = loom_arena_new();
  loom_trace *spaces;
  int n = case_spaces(root, "dense_relu.py", a, &spaces, NULL), n_copied = 0;
  for (int i = 0; i < n; i++) {
    char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIR);
    n_copied += got && strstr(got, "sch.reindex_cache_read(block=b0, read_buffer_index=1, "
                                   "storage_scope=\"global\", "
                                   "index_map=lambda v0, v1, v2: (v2, v1))") != NULL;
    free(got);
  }
  CHECK(n == 6);
  CHECK(n_copied == 3);
  loom_arena_free(a);
}

/* A dense layer whose columns the 16 lanes divide reads B[vj, vk] three
 * ways: as it is, through a transposed copy, and through a copy packed by
 * the lanes, B_global[vj // 16, vk, vj % 16], with vj's innermost tile
 * fixed to them. The packed copy fills 16 rows of B at a time (j_0
 * outermost), which it reads a line each while they are in cache. */
static void check_packed_transposed(const char *root) {
  loom_arena *a = loom_arena_new();
  loom_trace *spaces;
  loom_module *m = NULL;
  int n = case_spaces(root, "dense_packed.py", a, &spaces, &m);
  CHECK(n == 9);
  for (int i = 6; i < n; i++) {
    char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIR);
    CHECK_CONTAINS(got, "b2 = sch.reindex_cache_read(block=b0, read_buffer_index=1, "
                        "storage_scope=\"global\", index_map=lambda v0, v1, v2: "
                        "(v1 // 16, v2, v1 % 16))\n"
                        "l3, l4 = sch.get_loops(block=b2)\n"
                        "l5, l6 = sch.split(loop=l3, factors=[2, 16], preserve_unit_iters=True, "
                        "disable_predication=False)\n"
                        "sch.reorder(l5, l4, l6)\n");
    CHECK_CONTAINS(got, "l18, l19 = sch.split(loop=l8, factors=[2, 16], "
                        "preserve_unit_iters=True, disable_predication=False)\n");
    free(got);
  }
  if (n == 9 && m) {
    loom_target t;
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_target_parse("cpu -vector-bytes=64", &t, &d) == LOOM_OK);
    loom_sched *s = loom_sched_new(m, 7);
    CHECK(loom_trace_apply(&spaces[6], s, LOOM_REPLAY_RESAMPLE, &d) == LOOM_OK);
    CHECK(loom_space_postprocess(s, &t, &d) == LOOM_OK);
    loom_buf b;
    loom_buf_init(&b);
    loom_script_print_module(loom_sched_module(s), &(loom_print_opts){LOOM_DIALECT_TIR}, &b);
    CHECK_CONTAINS(b.data, "B_global = T.alloc_buffer((2, 24, 16))\n");
    CHECK_CONTAINS(b.data, "for j_0, k, j_1 in T.grid(2, 24, 16):\n");
    CHECK_CONTAINS(b.data, "B_global[vj // 16, vk, vj % 16] = B[vj, vk]\n");
    loom_buf_free(&b);
    loom_sched_free(s);
    loom_diag_free(&d);
  }
  loom_arena_free(a);
}

/* AddRFactor: the 8 row sums of row_norm.py leave cores idle. The
 * reduction loop is split by a sampled tile and rfactored at either part,
 * and RandomComputeLocation places the block adding up the partial sums,
 * then its producer; the unchanged schedule comes last. */
#define RFACTOR_HEAD                                                           \
  "b0 = sch.get_block(name=\"sum\", func_name=\"main\")\n"                     \
  "b1 = sch.get_block(name=\"root\", func_name=\"main\")\n"                    \
  "l2, l3 = sch.get_loops(block=b0)\n"                                         \
  "v4, v5 = sch.sample_perfect_tile(loop=l3, n=2, max_innermost_factor=64)\n"  \
  "l6, l7 = sch.split(loop=l3, factors=[v4, v5], preserve_unit_iters=True, "   \
  "disable_predication=False)\n"
#define RFACTOR_MARK                                                           \
  "sch.annotate(block_or_loop=b0, "                                            \
  "ann_key=\"meta_schedule.random_compute_producer\", ann_val=1)\n"
#define RFACTOR_PLACE                                                          \
  "b17, = sch.get_producers(block=b0)\n"                                       \
  "sch.unannotate(block_or_loop=b0, "                                          \
  "ann_key=\"meta_schedule.random_compute_producer\")\n"                       \
  "l18 = sch.sample_compute_location(block=b0)\n"                              \
  "sch.compute_at(block=b0, loop=l18, preserve_unit_loops=True, index=-1)\n"   \
  "l19 = sch.sample_compute_location(block=b17)\n"                             \
  "sch.compute_at(block=b17, loop=l19, preserve_unit_loops=True, index=-1)\n"

static void check_rfactor(const char *root) {
  loom_arena *a = loom_arena_new();
  loom_trace *spaces;
  int n = case_spaces(root, "row_norm.py", a, &spaces, NULL);
  if (n >= 0)
    CHECK(n == 3);
  for (int i = 0; i < n; i++) {
    char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIR);
    if (i < 2) {
      CHECK_CONTAINS(got, RFACTOR_HEAD);
      CHECK_CONTAINS(got, i == 0 ? "b8 = sch.rfactor(loop=l6, factor_axis=1)\n" RFACTOR_MARK
                                 : "b8 = sch.rfactor(loop=l7, factor_axis=1)\n" RFACTOR_MARK);
      CHECK_CONTAINS(got, RFACTOR_PLACE);
    } else {
      CHECK(got && !strstr(got, "rfactor") && !strstr(got, "get_producers"));
    }
    free(got);
  }
  loom_arena_free(a);
}

/* A matmul of 4 x 4 outputs over 4096 is rfactored as well as tiled (the
 * rfactor block is not visited by the rules: only the block they were
 * given); at 64 x 64 the outputs keep the cores busy. */
static void check_rfactor_tiled(void) {
  static const int sizes[2] = {4, 64};
  for (int c = 0; c < 2; c++) {
    loom_buf b;
    loom_buf_init(&b);
    loom_buf_printf(&b,
                    "@T.prim_func\n"
                    "def main(A: T.Buffer((%d, 4096), \"float32\"), B: T.Buffer((4096, %d), "
                    "\"float32\"), C: T.Buffer((%d, %d), \"float32\")):\n"
                    "    for i, j, k in T.grid(%d, %d, 4096):\n"
                    "        with T.block(\"update\"):\n"
                    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
                    "            with T.init():\n"
                    "                C[vi, vj] = T.float32(0.0)\n"
                    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
                    sizes[c], sizes[c], sizes[c], sizes[c], sizes[c], sizes[c]);
    loom_arena *a = loom_arena_new();
    loom_module *m = read_module(a, b.data);
    loom_buf_free(&b);
    loom_target t;
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_target_parse("cpu -cores=2 -vector-bytes=32", &t, &d) == LOOM_OK);
    loom_trace *spaces;
    int n = 0, n_rf = 0, n_tiled = 0;
    CHECK(m && loom_space_generate(m, &t, a, &spaces, &n, &d) == LOOM_OK);
    for (int i = 0; i < n; i++) {
      char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIR);
      n_rf += got && strstr(got, "sch.rfactor(") != NULL;
      n_tiled += got && strstr(got, "tiling_structure") != NULL;
      CHECK(got && !(strstr(got, "sch.rfactor(") && strstr(got, "tiling_structure")));
      free(got);
    }
    /* 64 x 64 packs B by the 8 lanes: 6 tiled spaces. */
    CHECK(n_rf == (c == 0 ? 2 : 0));
    CHECK(n_tiled == (c == 0 ? 3 : 6));
    CHECK(n == n_rf + n_tiled);
    loom_diag_free(&d);
    loom_arena_free(a);
  }
}

/* The rules' defaults come from the target: its max_innermost_factor bounds
 * every tile they sample, its max_jobs_per_core sizes the parallel loop, its
 * max_vectorize_extent the vectors. */
static void check_rule_defaults(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = read_module(a, matmul);
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu -cores=4 -vector-bytes=64 -max-innermost-factor=4 "
                          "-max-jobs-per-core=2 -max-vectorize-extent=4",
                          &t, &d) == LOOM_OK);
  loom_trace *spaces;
  int n = 0;
  CHECK(m && loom_space_generate(m, &t, a, &spaces, &n, &d) == LOOM_OK);
  CHECK(n > 0);
  for (int i = 0; i < n; i++) {
    char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIR);
    int n_tiles = 0;
    for (const char *p = got; p && (p = strstr(p, "max_innermost_factor=")); p++) {
      CHECK(!strncmp(p, "max_innermost_factor=4)", 23));
      n_tiles++;
    }
    CHECK(n_tiles > 0);
    CHECK_CONTAINS(got, "ann_key=\"meta_schedule.parallel\", ann_val=8)");
    CHECK_CONTAINS(got, "ann_key=\"meta_schedule.vectorize\", ann_val=4)");
    free(got);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  check_matmul();
  check_rule_defaults();
  /* AutoInline: a spatial producer goes into its consumer; one calling
   * T.exp stays and RandomComputeLocation samples where it goes. */
  check_each_space(root, "scale_matmul.py",
                   "b0 = sch.get_block(name=\"scale\", func_name=\"main\")\n"
                   "b1 = sch.get_block(name=\"matmul\", func_name=\"main\")\n"
                   "b2 = sch.get_block(name=\"root\", func_name=\"main\")\n"
                   "sch.compute_inline(block=b0)\n",
                   "sample_compute_location");
  /* An elementwise consumer is moved under tile level 1 or 2 in place of
   * a cache, the unmoved schedule last. (B's 24 columns are not a
   * multiple of 16 lanes: no packed spaces.) */
  check_spaces(root, "matmul_relu.py", 3, "tiling_structure", "cache_write", 0,
               "b25, = sch.get_consumers(block=b0)\n"
               "sch.reverse_compute_at(block=b25, loop=l17, "
               "preserve_unit_loops=True, index=-1)\n");
  check_spaces(root, "matmul_relu.py", 3, "tiling_structure", "cache_write", 1,
               "b25, = sch.get_consumers(block=b0)\n"
               "sch.reverse_compute_at(block=b25, loop=l18, "
               "preserve_unit_loops=True, index=-1)\n");
  check_each_space(root, "exp_matmul.py",
                   " = sch.sample_compute_location(block=b0)\n",
                   "compute_inline");
  check_tvm_record();
  check_spatial_postproc();
  check_long_loops();
  check_many_tiled_blocks();
  check_user_block();
  check_custom_rule();
  check_gathered_read(root);
  check_packed_transposed(root);
  check_rfactor(root);
  check_rfactor_tiled();
  return test_summary("generate");
}
