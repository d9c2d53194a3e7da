/* The cuda rules and postprocessor that bind loops to GPU threads
 * (CrossThreadReduction, AutoBind, RewriteUnboundBlock) and the mutator
 * that redraws their thread counts (MutateThreadBinding). The design
 * spaces print as TVM 0.27's do once simplified, as its tuner keeps them
 * (dead reads such as an unused get_loops dropped; decisions left out of
 * the comparison: they are random draws); the rules' own instructions, not
 * simplified, are TVM's too. Every candidate sampled from the spaces and
 * postprocessed lowers for the GPU and computes, in the interpreter, what
 * the unscheduled function does. */
#include "interp_compare.h"
#include "loom/script.h"
#include "loom/space.h"
#include "program.h"
#include "test.h"
#include "tune/mutators/mutators.h"
#include "tune/space_impl.h"

#include <stdlib.h>
#include <unistd.h>

/* ---- programs ------------------------------------------------------------------ */

static const char *rowsum =
    "@T.prim_func\n"
    "def main(A: T.Buffer((256, 512), \"float32\"), B: T.Buffer((256,), \"float32\")):\n"
    "    for i, k in T.grid(256, 512):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            with T.init():\n"
    "                B[vi] = T.float32(0)\n"
    "            B[vi] = B[vi] + A[vi, vk]\n";

static const char *add =
    "@T.prim_func\n"
    "def main(A: T.Buffer((1024, 1024), \"float32\"), B: T.Buffer((1024, 1024), \"float32\")):\n"
    "    for i, j in T.grid(1024, 1024):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            B[vi, vj] = A[vi, vj] + T.float32(1)\n";

/* A 1-D reduction to a scalar: no spatial loop to bind to blocks. */
static const char *total =
    "@T.prim_func\n"
    "def main(A: T.Buffer((4096,), \"float32\"), B: T.Buffer((1,), \"float32\")):\n"
    "    for k in range(4096):\n"
    "        with T.block(\"S\"):\n"
    "            vk = T.axis.remap(\"R\", [k])\n"
    "            with T.init():\n"
    "                B[0] = T.float32(0)\n"
    "            B[0] = B[0] + A[vk]\n";

/* A block with no loop at all, under the root. */
static const char *no_loop =
    "@T.prim_func\n"
    "def main(A: T.Buffer((1,), \"float32\"), B: T.Buffer((1,), \"float32\")):\n"
    "    with T.block(\"root\"):\n"
    "        with T.block(\"C\"):\n"
    "            B[0] = A[0] + T.float32(1)\n";

/* A row sum whose one consumer takes it: the reduction moves into the
 * consumer's loop, split for the threads. */
static const char *row_scale =
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 256), \"float32\"), C: T.Buffer((64,), \"float32\")):\n"
    "    Bb = T.alloc_buffer((64,))\n"
    "    for i, k in T.grid(64, 256):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            with T.init():\n"
    "                Bb[vi] = T.float32(0)\n"
    "            Bb[vi] = Bb[vi] + A[vi, vk]\n"
    "    for i in range(64):\n"
    "        with T.block(\"C\"):\n"
    "            vi = T.axis.remap(\"S\", [i])\n"
    "            C[vi] = Bb[vi] * T.float32(2)\n";

/* Reduction loops on both sides of the spatial one. */
static const char *reduce3 =
    "@T.prim_func\n"
    "def main(A: T.Buffer((16, 32, 64), \"float32\"), B: T.Buffer((32,), \"float32\")):\n"
    "    for k, i, r in T.grid(16, 32, 64):\n"
    "        with T.block(\"R\"):\n"
    "            vk, vi, vr = T.axis.remap(\"RSR\", [k, i, r])\n"
    "            with T.init():\n"
    "                B[vi] = T.float32(0)\n"
    "            B[vi] = B[vi] + A[vk, vi, vr]\n";

static const char *row_max =
    "@T.prim_func\n"
    "def main(A: T.Buffer((64, 300), \"float32\"), B: T.Buffer((64,), \"float32\")):\n"
    "    for i, k in T.grid(64, 300):\n"
    "        with T.block(\"M\"):\n"
    "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
    "            with T.init():\n"
    "                B[vi] = T.min_value(\"float32\")\n"
    "            B[vi] = T.max(B[vi], A[vi, vk])\n";

static const char *chain =
    "@T.prim_func\n"
    "def main(A: T.Buffer((100, 30), \"float32\"), C: T.Buffer((100, 30), \"float32\")):\n"
    "    Bb = T.alloc_buffer((100, 30))\n"
    "    for i, j in T.grid(100, 30):\n"
    "        with T.block(\"B\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            Bb[vi, vj] = A[vi, vj] * T.float32(2)\n"
    "    for i, j in T.grid(100, 30):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            C[vi, vj] = Bb[vi, vj] + T.float32(1)\n";

/* Loops under an if: TVM's fuse of i and j fails there (AutoBind throws);
 * here the band stops at i, whose body is not a loop, and i is bound
 * (block2, visited first, takes it for both). */
static const char *branches =
    "@T.prim_func\n"
    "def main(A: T.Buffer((100, 100), \"float16\")):\n"
    "    for i in range(100):\n"
    "        if i % 2 == 0:\n"
    "            for j in range(100):\n"
    "                with T.block(\"block1\"):\n"
    "                    A[i, j] = T.float16(1)\n"
    "        else:\n"
    "            for j in range(100):\n"
    "                with T.block(\"block2\"):\n"
    "                    A[i, j] = T.float16(2)\n";

/* ---- TVM's traces (tvm.s_tir.meta_schedule 0.27, cuda sm_80) -------------------- */

#define P8 "probs=[0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125]"
#define UNROLL(v)                                                              \
  v " = sch.sample_categorical(candidates=[0, 16, 32, 64, 128, 256, 512, "     \
    "1024], " P8 ")\n"
#define THREADS(v)                                                             \
  v " = sch.sample_categorical(candidates=[4, 8, 16, 32, 64, 128, 256, 512], " \
    P8 ")\n"
#define ANN_UNROLL(b, v)                                                       \
  "sch.annotate(block_or_loop=" b ", ann_key=\"meta_schedule.unroll_explicit\", " \
  "ann_val=" v ")\n"
#define SPLIT(outs, loop, factors)                                             \
  outs " = sch.split(loop=" loop ", factors=[" factors "], "                   \
       "preserve_unit_iters=True, disable_predication=False)\n"
#define BIND(loop, axis) "sch.bind(loop=" loop ", thread_axis=\"" axis "\")\n"
#define FUSE(out, loops) out " = sch.fuse(" loops ", preserve_unit_iters=True)\n"
#define BLOCK(b, name) b " = sch.get_sblock(name=\"" name "\", func_name=\"main\")\n"

static const char *rowsum_spaces[2] = {
    BLOCK("b0", "B") BLOCK("b1", "root") UNROLL("v2") ANN_UNROLL("b1", "v2")
    "l3, l4 = sch.get_loops(block=b0)\n"
    FUSE("l5", "l3")
    "v6 = sch.sample_categorical(candidates=[32, 64, 128, 256], "
    "probs=[0.25, 0.25, 0.25, 0.25])\n"
    SPLIT("l7, l8", "l5", "None, v6") BIND("l7", "blockIdx.x")
    BIND("l8", "threadIdx.x"),

    BLOCK("b0", "B") BLOCK("b1", "root") THREADS("v2")
    "l3, l4 = sch.get_loops(block=b0)\n"
    SPLIT("l5, l6", "l4", "None, v2") BIND("l6", "threadIdx.x")
    UNROLL("v7") ANN_UNROLL("b1", "v7")
    "l8, l9, l10 = sch.get_loops(block=b0)\n"
    FUSE("l11", "l8") BIND("l11", "blockIdx.x"),
};

/* Past 256 blocks of 1024 threads: split in three, the rest serial. */
static const char *add_space =
    BLOCK("b0", "B")
    "l1, l2 = sch.get_loops(block=b0)\n"
    FUSE("l3", "l1, l2")
    SPLIT("l4, l5, l6", "l3", "None, 256, 1024")
    "sch.reorder(l5, l6, l4)\n"
    BIND("l5", "blockIdx.x") BIND("l6", "threadIdx.x");

/* A unit loop to bind when no spatial loop leads. */
static const char *total_spaces[2] = {
    BLOCK("b0", "S") BLOCK("b1", "root") UNROLL("v2") ANN_UNROLL("b1", "v2")
    "l3, = sch.get_loops(block=b0)\n"
    "l4 = sch.add_unit_loop(block_or_loop=l3)\n"
    FUSE("l5", "l4") SPLIT("l6, l7", "l5", "None, 1")
    BIND("l6", "blockIdx.x") BIND("l7", "threadIdx.x"),

    BLOCK("b0", "S") BLOCK("b1", "root") THREADS("v2")
    "l3, = sch.get_loops(block=b0)\n"
    SPLIT("l4, l5", "l3", "None, v2") BIND("l5", "threadIdx.x")
    UNROLL("v6") ANN_UNROLL("b1", "v6")
    "l7, l8 = sch.get_loops(block=b0)\n"
    "l9 = sch.add_unit_loop(block_or_loop=l7)\n"
    "l10, l11, l12 = sch.get_loops(block=b0)\n"
    FUSE("l13", "l10") BIND("l13", "blockIdx.x"),
};

static const char *no_loop_space =
    BLOCK("b0", "C")
    "l1 = sch.add_unit_loop(block_or_loop=b0)\n"
    FUSE("l2", "l1") SPLIT("l3, l4", "l2", "None, 1")
    BIND("l3", "blockIdx.x") BIND("l4", "threadIdx.x");

static const char *row_scale_fused =
    BLOCK("b0", "B") BLOCK("b1", "C") BLOCK("b2", "root")
    "b3, = sch.get_consumers(block=b0)\n"
    "l4, = sch.get_loops(block=b3)\n"
    THREADS("v5")
    SPLIT("l6, l7", "l4", "None, v5") BIND("l7", "threadIdx.x")
    "sch.compute_at(block=b0, loop=l6, preserve_unit_loops=True, index=-1)\n"
    "sch.set_scope(block=b0, buffer_index=0, storage_scope=\"shared\")\n"
    "l8, l9, l10 = sch.get_loops(block=b0)\n"
    SPLIT("l11, l12", "l10", "None, v5") BIND("l12", "threadIdx.x")
    UNROLL("v13") ANN_UNROLL("b2", "v13")
    "l14, l15 = sch.get_loops(block=b1)\n"
    FUSE("l16", "l14") BIND("l16", "blockIdx.x");

static const char *reduce3_across =
    BLOCK("b0", "R") BLOCK("b1", "root") THREADS("v2")
    "l3, l4, l5 = sch.get_loops(block=b0)\n"
    "sch.reorder(l4, l3, l5)\n"
    FUSE("l6", "l3, l5") SPLIT("l7, l8", "l6", "None, v2")
    BIND("l8", "threadIdx.x") UNROLL("v9") ANN_UNROLL("b1", "v9")
    "l10, l11, l12 = sch.get_loops(block=b0)\n"
    FUSE("l13", "l10") BIND("l13", "blockIdx.x");

/* Both reductions across threads: the sum into norm's loop, then the max
 * into the loop its two consumers (sum, now there, and norm) share, with
 * the thread count already drawn. */
static const char *softmax_both =
    BLOCK("b0", "max") BLOCK("b1", "exp") BLOCK("b2", "sum") BLOCK("b3", "norm")
    BLOCK("b4", "root")
    "sch.compute_inline(block=b1)\n"
    "b5, = sch.get_consumers(block=b2)\n"
    "l6, l7 = sch.get_loops(block=b5)\n"
    THREADS("v8")
    SPLIT("l9, l10", "l7", "None, v8") BIND("l10", "threadIdx.x")
    "sch.compute_at(block=b2, loop=l6, preserve_unit_loops=True, index=-1)\n"
    "sch.set_scope(block=b2, buffer_index=0, storage_scope=\"shared\")\n"
    "l11, l12, l13 = sch.get_loops(block=b2)\n"
    SPLIT("l14, l15", "l13", "None, v8") BIND("l15", "threadIdx.x")
    "b16, b17 = sch.get_consumers(block=b0)\n"
    "l18, l19, l20, l21 = sch.get_loops(block=b16)\n"
    "sch.compute_at(block=b0, loop=l18, preserve_unit_loops=True, index=-1)\n"
    "sch.set_scope(block=b0, buffer_index=0, storage_scope=\"shared\")\n"
    "l22, l23, l24 = sch.get_loops(block=b0)\n"
    SPLIT("l25, l26", "l24", "None, v8") BIND("l26", "threadIdx.x")
    UNROLL("v27") ANN_UNROLL("b4", "v27")
    "l28, l29, l30 = sch.get_loops(block=b3)\n"
    FUSE("l31", "l28") BIND("l31", "blockIdx.x");

/* ---- helpers --------------------------------------------------------------------- */


static loom_module *read_module(loom_arena *a, const char *text,
                                const char *file) {
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_script_read(text, strlen(text), file, a, &m, &d) != LOOM_OK)
    fprintf(stderr, "%s: %s\n", file, d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return m;
}

/* The module of a file under the source root, NULL (and a note) when the
 * file is absent. */
static loom_module *read_file_module(loom_arena *a, const char *root,
                                     const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  if (access(path, R_OK) != 0) {
    printf("note: %s is absent; its checks are skipped\n", path);
    return NULL;
  }
  return program_read_file(a, path);
}

static loom_target cuda_target(void) {
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cuda -arch=sm_80", &t, &d) == LOOM_OK);
  loom_diag_free(&d);
  return t;
}

/* The spaces of m for t, in a; 0 when generation fails. */
static int spaces_of(const loom_module *m, const loom_target *t, loom_arena *a,
                     loom_trace **spaces) {
  int n = 0;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(m && loom_space_generate(m, t, a, spaces, &n, &d) == LOOM_OK);
  if (d.has_error)
    fprintf(stderr, "generate: %s\n", d.msg);
  loom_diag_free(&d);
  return n;
}

/* The spaces of text for cuda: n_want of them, space k printing as
 * want[k] (NULL: not compared). */
static void check_spaces(const char *text, int n_want, const char *const *want) {
  loom_arena *a = loom_arena_new();
  loom_target t = cuda_target();
  loom_trace *spaces = NULL;
  int n = spaces_of(read_module(a, text, "prog.py"), &t, a, &spaces);
  CHECK(n == n_want);
  for (int i = 0; i < n && i < n_want; i++) {
    if (!want[i])
      continue;
    char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIRX);
    CHECK_STREQ(got, want[i]);
    free(got);
  }
  loom_arena_free(a);
}

/* ---- design spaces ----------------------------------------------------------------- */

static const char *branches_space =
    BLOCK("b0", "block2")
    "l1, l2 = sch.get_loops(block=b0)\n"
    FUSE("l3", "l1")
    "v4 = sch.sample_categorical(candidates=[32, 64], probs=[0.5, 0.5])\n"
    SPLIT("l5, l6", "l3", "None, v4") BIND("l5", "blockIdx.x")
    BIND("l6", "threadIdx.x");

static void check_tvm_spaces(const char *root) {
  check_spaces(rowsum, 2, rowsum_spaces);
  check_spaces(add, 1, &add_space);
  check_spaces(total, 2, total_spaces);
  check_spaces(no_loop, 1, &no_loop_space);
  const char *row_scale_want[2] = {NULL, row_scale_fused};
  check_spaces(row_scale, 2, row_scale_want);
  const char *reduce3_want[2] = {NULL, reduce3_across};
  check_spaces(reduce3, 2, reduce3_want);
  check_spaces(branches, 1, &branches_space);
  /* Softmax: no reduction across threads, the max's, the sum's, both. */
  loom_arena *a = loom_arena_new();
  loom_module *m = read_file_module(a, root, "../shared/corpus/softmax.py");
  if (m) {
    loom_target t = cuda_target();
    loom_trace *spaces = NULL;
    int n = spaces_of(m, &t, a, &spaces);
    CHECK(n == 4);
    for (int i = 0; i < n; i++) {
      char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIRX);
      CHECK((strstr(got, "b16, b17 = sch.get_consumers(block=b0)") != NULL) ==
            (i == 3));
      CHECK((strstr(got, "sch.compute_at(block=b2") != NULL) == (i >= 2));
      if (i == 3)
        CHECK_STREQ(got, softmax_both);
      free(got);
    }
  }
  /* The layer norm's moments write two sums: TVM reduces them across
   * threads (a space its VerifyGPUCode then refuses); Loom's lowering has
   * no cross-thread reduction for such an update, so the rule leaves the
   * block alone and the 8 rows bind to 8 threads. */
  m = read_file_module(a, root, "tests/space/cases/layer_norm.py");
  if (m) {
    loom_target t = cuda_target();
    loom_trace *spaces = NULL;
    int n = spaces_of(m, &t, a, &spaces);
    CHECK(n == 1);
    if (n == 1) {
      char *first = program_trace_plain(&spaces[0], LOOM_DIALECT_TIRX);
      CHECK_CONTAINS(first, "l10, l11 = sch.get_loops(block=b0)\n"
                            FUSE("l12", "l10")
                            SPLIT("l13, l14", "l12", "None, 8"));
      CHECK(!strstr(first, "get_consumers"));
      free(first);
    }
  }
  loom_arena_free(a);
}

/* The rules' own instructions, before simplification, on the row sum:
 * TVM's lines without ParallelizeVectorizeUnroll's (its get_consumers with
 * no consumer, AutoBind's loops read twice). */
static void check_raw_rules(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = read_module(a, rowsum, "rowsum.py");
  loom_target t = cuda_target();
  space_ctx x = {.target = &t, .func = "main"};
  loom_sched *s = m ? loom_sched_new(m, 1) : NULL;
  loom_sched_rv b, root;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(s && space_get_block(s, "main", "B", &b, &d) == LOOM_OK &&
        space_get_block(s, "main", "root", &root, &d) == LOOM_OK);
  space_list after_ctr = {0}, after_bind = {0};
  if (s)
    CHECK(space_rule_cross_thread_reduction.apply(&x, s, "B", b, &after_ctr) ==
          LOOM_OK);
  CHECK(after_ctr.n == 2);
  for (int i = 0; i < after_ctr.n; i++) {
    CHECK(space_rule_auto_bind.apply(&x, after_ctr.items[i], "B", b,
                                     &after_bind) == LOOM_OK);
    after_ctr.items[i] = NULL;
  }
  static const char *want[2] = {
      BLOCK("b0", "B") BLOCK("b1", "root")
      "l2, l3 = sch.get_loops(block=b0)\n"
      FUSE("l4", "l2")
      "v5 = sch.sample_categorical(candidates=[32, 64, 128, 256], "
      "probs=[0.25, 0.25, 0.25, 0.25])\n"
      SPLIT("l6, l7", "l4", "None, v5") BIND("l6", "blockIdx.x")
      BIND("l7", "threadIdx.x"),

      BLOCK("b0", "B") BLOCK("b1", "root")
      "sch.get_consumers(block=b0)\n"
      THREADS("v2")
      "l3, l4 = sch.get_loops(block=b0)\n"
      SPLIT("l5, l6", "l4", "None, v2") BIND("l6", "threadIdx.x")
      "l7, l8, l9 = sch.get_loops(block=b0)\n"
      "l10, l11, l12 = sch.get_loops(block=b0)\n"
      FUSE("l13", "l10") BIND("l13", "blockIdx.x"),
  };
  CHECK(after_bind.n == 2);
  for (int i = 0; i < after_bind.n && i < 2; i++) {
    loom_trace tr = loom_sched_trace(after_bind.items[i]);
    char *got = program_trace_plain(&tr, LOOM_DIALECT_TIRX);
    CHECK_STREQ(got, want[i]);
    free(got);
  }
  space_list_free(&after_ctr);
  space_list_free(&after_bind);
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* On a CPU neither rule binds a thread. */
static void check_cpu_untouched(void) {
  const char *progs[] = {rowsum, add, row_scale};
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu -cores=4 -vector-bytes=32", &t, &d) == LOOM_OK);
  for (int p = 0; p < 3; p++) {
    loom_arena *a = loom_arena_new();
    loom_trace *spaces = NULL;
    int n = spaces_of(read_module(a, progs[p], "cpu.py"), &t, a, &spaces);
    CHECK(n >= 1);
    for (int i = 0; i < n; i++) {
      char *got = program_trace_plain(&spaces[i], LOOM_DIALECT_TIRX);
      CHECK(got && !strstr(got, "Idx.x") && !strstr(got, "get_consumers"));
      free(got);
    }
    loom_arena_free(a);
  }
  loom_diag_free(&d);
}

/* ---- RewriteUnboundBlock ------------------------------------------------------------ */

/* The postprocessor alone on an unscheduled function, against TVM's trace
 * of RewriteUnboundBlock(max_threadblocks=256) there. */
static void check_unbound_one(const char *text, const char *want) {
  loom_arena *a = loom_arena_new();
  loom_module *m = read_module(a, text, "unbound.py");
  loom_target t = cuda_target();
  loom_sched *s = m ? loom_sched_new(m, 1) : NULL;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(s && space_rewrite_unbound_block(s, &t, &d) == LOOM_OK);
  if (s) {
    loom_trace tr = loom_sched_trace(s);
    char *got = program_trace_plain(&tr, LOOM_DIALECT_TIRX);
    CHECK_STREQ(got, want);
    free(got);
    /* Bound, it lowers for the GPU. */
    CHECK(loom_tune_check(&t, loom_sched_module(s), &d) == LOOM_OK);
  }
  if (d.has_error)
    fprintf(stderr, "%s\n", d.msg);
  loom_sched_free(s);
  loom_diag_free(&d);
  loom_arena_free(a);
}

static void check_unbound(void) {
  check_unbound_one(add, add_space);
  check_unbound_one(rowsum,
                    BLOCK("b0", "B")
                    "l1, l2 = sch.get_loops(block=b0)\n"
                    FUSE("l3", "l1") SPLIT("l4, l5", "l3", "None, 256")
                    BIND("l4", "blockIdx.x") BIND("l5", "threadIdx.x"));
  check_unbound_one(no_loop,
                    BLOCK("b0", "C")
                    "sch.get_loops(block=b0)\n"
                    "l1 = sch.add_unit_loop(block_or_loop=b0)\n"
                    FUSE("l2", "l1") SPLIT("l3, l4", "l2", "None, 1")
                    BIND("l3", "blockIdx.x") BIND("l4", "threadIdx.x"));
  check_unbound_one(total,
                    BLOCK("b0", "S")
                    "l1, = sch.get_loops(block=b0)\n"
                    "l2 = sch.add_unit_loop(block_or_loop=l1)\n"
                    FUSE("l3", "l2") SPLIT("l4, l5", "l3", "None, 1")
                    BIND("l4", "blockIdx.x") BIND("l5", "threadIdx.x"));
  /* Each block found up front is bound in turn, the thread count the
   * fused extent (3000) capped at 1024 threads. */
  check_unbound_one(chain,
                    BLOCK("b0", "B")
                    "l1, l2 = sch.get_loops(block=b0)\n"
                    FUSE("l3", "l1, l2") SPLIT("l4, l5", "l3", "None, 1024")
                    BIND("l4", "blockIdx.x") BIND("l5", "threadIdx.x")
                    BLOCK("b6", "C")
                    "l7, l8 = sch.get_loops(block=b6)\n"
                    FUSE("l9", "l7, l8") SPLIT("l10, l11", "l9", "None, 1024")
                    BIND("l10", "blockIdx.x") BIND("l11", "threadIdx.x"));
}

/* ---- candidates -------------------------------------------------------------------- */

/* Whether some block of m, under a threadIdx loop that a reduction iter's
 * binding uses, has lost its init: decompose_reduction split a reduction
 * across threads, which the GPU lowering turns into a racy update. */
static bool has_split_cross_thread(const loom_stmt *s, const loom_var **tx,
                                   int n_tx, int depth) {
  if (!s || depth > 400)
    return false;
  switch (s->kind) {
  case LOOM_STMT_FOR: {
    bool is_tx = s->u.loop.kind == LOOM_FOR_THREAD_BINDING && s->u.loop.thread &&
                 !strncmp(s->u.loop.thread, "threadIdx", 9) && n_tx < 16;
    if (is_tx)
      tx[n_tx] = s->u.loop.var;
    return has_split_cross_thread(s->u.loop.body, tx, n_tx + is_tx, depth + 1);
  }
  case LOOM_STMT_BLOCK_REALIZE: {
    const loom_block *b = s->u.realize.block;
    for (int i = 0; !b->init && i < b->n_iter_vars; i++)
      for (int k = 0; b->iter_vars[i].kind == LOOM_ITER_REDUCE && k < n_tx; k++)
        if (loom_ir_expr_uses(s->u.realize.iter_values[i], tx[k]))
          return true;
    return has_split_cross_thread(b->body, tx, n_tx, depth + 1);
  }
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      if (has_split_cross_thread(s->u.seq.stmts[i], tx, n_tx, depth + 1))
        return true;
    return false;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    return has_split_cross_thread(s->u.alloc.body, tx, n_tx, depth + 1);
  case LOOM_STMT_IF:
    return has_split_cross_thread(s->u.if_.then_case, tx, n_tx, depth + 1) ||
           has_split_cross_thread(s->u.if_.else_case, tx, n_tx, depth + 1);
  case LOOM_STMT_LET:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return false;
  }
  return false;
}

static int n_split_cross_thread;

/* Every space of m, sampled with seeds 1..n_seeds and postprocessed for
 * cuda, lowers for the GPU (the postprocessor's last check) and computes
 * what m does on random inputs (in another order of addition where a
 * reduction is spread over threads). */
static void check_candidates(const char *name, const loom_module *m,
                             int n_seeds) {
  if (!m) {
    CHECK(m != NULL);
    return;
  }
  loom_arena *a = loom_arena_new();
  loom_target t = cuda_target();
  loom_trace *spaces = NULL;
  int n = spaces_of(m, &t, a, &spaces);
  CHECK(n >= 1);
  for (int i = 0; i < n; i++)
    for (int seed = 1; seed <= n_seeds; seed++) {
      loom_sched *s = loom_sched_new(m, (uint64_t)(seed * 7919 + i));
      loom_diag d;
      loom_diag_init(&d);
      bool ok = s && loom_trace_apply(&spaces[i], s, LOOM_REPLAY_RESAMPLE, &d) ==
                         LOOM_OK;
      ok = ok && loom_space_postprocess(s, &t, &d) == LOOM_OK;
      if (!ok && s) {
        loom_trace tr = loom_sched_trace(s);
        char *got = program_trace_plain(&tr, LOOM_DIALECT_TIRX);
        fprintf(stderr, "%s, space %d, seed %d: %s\n%s", name, i + 1, seed,
                d.msg ? d.msg : "?", got ? got : "");
        free(got);
      }
      CHECK(ok);
      if (ok) {
        const loom_func *g = loom_sched_module(s)->funcs[0];
        bool same = interp_compare_results(m->funcs[0], g, 1, true, true);
        if (!same)
          fprintf(stderr, "%s, space %d, seed %d: results differ\n", name, i + 1,
                  seed);
        CHECK(same);
        const loom_var *tx[16];
        n_split_cross_thread += has_split_cross_thread(g->body, tx, 0, 0);
      }
      loom_diag_free(&d);
      loom_sched_free(s);
    }
  loom_arena_free(a);
}

static void check_all_candidates(const char *root) {
  loom_arena *a = loom_arena_new();
  check_candidates("rowsum", read_module(a, rowsum, "rowsum.py"), 5);
  check_candidates("add", read_module(a, add, "add.py"), 2);
  check_candidates("total", read_module(a, total, "total.py"), 4);
  check_candidates("no_loop", read_module(a, no_loop, "no_loop.py"), 1);
  check_candidates("row_scale", read_module(a, row_scale, "row_scale.py"), 5);
  check_candidates("reduce3", read_module(a, reduce3, "reduce3.py"), 4);
  check_candidates("row_max", read_module(a, row_max, "row_max.py"), 4);
  check_candidates("chain", read_module(a, chain, "chain.py"), 3);
  check_candidates("branches", read_module(a, branches, "branches.py"), 2);
  loom_module *m = read_file_module(a, root, "../shared/corpus/softmax.py");
  if (m)
    check_candidates("softmax", m, 4);
  m = read_file_module(a, root, "tests/space/cases/layer_norm.py");
  if (m)
    check_candidates("layer_norm", m, 4);
  /* RewriteReductionBlock leaves a reduction bound across threads whole,
   * as TVM's does: decomposed, each thread would add into one element. */
  CHECK(n_split_cross_thread == 0);
  loom_arena_free(a);
}

/* ---- MutateThreadBinding ------------------------------------------------------------ */

/* The index of the only instruction where a and b differ, -1 when none or
 * several do. */
static int only_change(const loom_trace *a, const loom_trace *b) {
  int at = -1;
  if (a->n_insts != b->n_insts)
    return -2;
  for (int i = 0; i < a->n_insts; i++)
    if (a->insts[i] != b->insts[i]) {
      if (at >= 0)
        return -2;
      at = i;
    }
  return at;
}

static void check_mutator(void) {
  loom_arena *a = loom_arena_new();
  loom_target t = cuda_target();
  loom_trace *spaces = NULL;
  int n = spaces_of(read_module(a, rowsum, "rowsum.py"), &t, a, &spaces);
  CHECK(n == 2);
  loom_rng rng;
  loom_rng_seed(&rng, 11);
  /* Space 1: AutoBind's count (instruction 6, 4 candidates); space 2:
   * CrossThreadReduction's (instruction 2, 8 candidates), whose split
   * part is bound to threadIdx.x the same way. The unroll depth, which
   * feeds an annotation, is never the one changed. */
  static const int at[2] = {6, 2}, n_cands[2] = {4, 8};
  for (int sp = 0; sp < n && sp < 2; sp++) {
    const loom_inst *orig = spaces[sp].insts[at[sp]];
    CHECK(orig->kind == LOOM_INST_SAMPLE_CATEGORICAL);
    bool seen[8] = {false};
    for (int k = 0; k < 40; k++) {
      loom_trace out;
      CHECK(mutate_thread_binding(&spaces[sp], &t, &rng, a, &out) == LOOM_OK);
      CHECK(only_change(&spaces[sp], &out) == at[sp]);
      const loom_tval *dec = &out.insts[at[sp]]->decision;
      CHECK(dec->kind == LOOM_TV_INT && dec->i >= 0 && dec->i < n_cands[sp] &&
            dec->i != orig->decision.i);
      if (dec->kind == LOOM_TV_INT && dec->i >= 0 && dec->i < 8)
        seen[dec->i] = true;
    }
    int n_seen = 0;
    for (int k = 0; k < 8; k++)
      n_seen += seen[k];
    CHECK(n_seen == n_cands[sp] - 1);
  }
  /* No such pattern: a fixed count (the elementwise add), a sampled split
   * bound to blocks only, a CPU matmul's unroll depth. */
  loom_trace *add_spaces = NULL;
  CHECK(spaces_of(read_module(a, add, "add.py"), &t, a, &add_spaces) == 1);
  loom_trace out;
  if (add_spaces)
    CHECK(mutate_thread_binding(&add_spaces[0], &t, &rng, a, &out) == LOOM_ERROR);
  if (n >= 1) {
    /* Space 1 with its threadIdx.x bind (the last instruction) gone. */
    loom_trace cut = spaces[0];
    cut.n_insts--;
    CHECK(mutate_thread_binding(&cut, &t, &rng, a, &out) == LOOM_ERROR);
  }
  static const char *matmul =
      "@T.prim_func\n"
      "def main(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), "
      "\"float32\"), C: T.Buffer((64, 64), \"float32\")):\n"
      "    for i, j, k in T.grid(64, 64, 64):\n"
      "        with T.block(\"update\"):\n"
      "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
      "            with T.init():\n"
      "                C[vi, vj] = T.float32(0.0)\n"
      "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";
  loom_target cpu;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cpu -cores=4 -vector-bytes=32", &cpu, &d) == LOOM_OK);
  loom_diag_free(&d);
  loom_trace *cpu_spaces = NULL;
  int n_cpu = spaces_of(read_module(a, matmul, "matmul.py"), &cpu, a, &cpu_spaces);
  CHECK(n_cpu >= 1);
  for (int i = 0; i < n_cpu; i++)
    CHECK(mutate_thread_binding(&cpu_spaces[i], &cpu, &rng, a, &out) == LOOM_ERROR);
  loom_arena_free(a);
}

/* ---- allocation failures ----------------------------------------------------------- */

/* Every allocation of the mutator may fail: the outcome is a trace or
 * LOOM_NOMEM, never a crash or a leak (under ASan). (The schedule's arena
 * fails only when it takes a new 64 KiB chunk, which the binding steps of
 * these small programs never need.) */
static void check_faults(void) {
  loom_arena *a = loom_arena_new();
  loom_target t = cuda_target();
  loom_trace *spaces = NULL;
  int n = spaces_of(read_module(a, rowsum, "rowsum.py"), &t, a, &spaces);
  int n_nomem = 0, n_ok = 0;
  for (long at = 1; n > 0 && at < 8; at++) {
    loom_arena *b = loom_arena_new();
    loom_faultsim fs = {at, 0};
    loom_arena_set_faultsim(b, &fs);
    loom_rng rng;
    loom_rng_seed(&rng, 5);
    loom_trace out;
    loom_status st = mutate_thread_binding(&spaces[0], &t, &rng, b, &out);
    CHECK(st == LOOM_OK || st == LOOM_NOMEM);
    n_nomem += st == LOOM_NOMEM;
    n_ok += st == LOOM_OK;
    loom_arena_free(b);
  }
  CHECK(n_nomem > 0 && n_ok > 0);
  loom_arena_free(a);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  check_tvm_spaces(root);
  check_raw_rules();
  check_cpu_untouched();
  check_unbound();
  check_all_candidates(root);
  check_mutator();
  check_faults();
  return test_summary("space/test_cuda_bind");
}
