/* The cuda design space of a matmul: MetaSchedule's one (tiling
 * "SSSRRSRS", three levels bound to blockIdx.x, vthread.x and threadIdx.x,
 * a local write cache, shared copies of A and B with cooperative fetch,
 * an unroll depth), instruction for instruction as TVM 0.27 prints it;
 * with an elementwise epilogue, which keeps to its own kernel; and a
 * candidate postprocessed with the copies split among the threads,
 * lowered for the GPU. Decisions are left out of the comparison. */
#include "loom/lower.h"
#include "loom/model.h"
#include "loom/script.h"
#include "loom/space.h"
#include "interp_compare.h"
#include "program.h"
#include "test.h"

#include <stdlib.h>

static const char *matmul =
    "@T.prim_func\n"
    "def main(A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), "
    "\"float32\"), C: T.Buffer((128, 128), \"float32\")):\n"
    "    for i, j, k in T.grid(128, 128, 128):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0.0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

/* TVM 0.27's space for a cuda target (sm_70, the "cuda" rule kind),
 * decisions removed. */
static const char *tvm_space =
    "b0 = sch.get_block(name=\"C\", func_name=\"main\")\n"
    "b1 = sch.get_block(name=\"root\", func_name=\"main\")\n"
    "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.tiling_structure\", ann_val=\"SSSRRSRS\")\n"
    "l2, l3, l4 = sch.get_loops(block=b0)\n"
    "v5, v6, v7, v8, v9 = sch.sample_perfect_tile(loop=l2, n=5, max_innermost_factor=64)\n"
    "l10, l11, l12, l13, l14 = sch.split(loop=l2, factors=[v5, v6, v7, v8, v9], preserve_unit_iters=True, disable_predication=False)\n"
    "v15, v16, v17, v18, v19 = sch.sample_perfect_tile(loop=l3, n=5, max_innermost_factor=64)\n"
    "l20, l21, l22, l23, l24 = sch.split(loop=l3, factors=[v15, v16, v17, v18, v19], preserve_unit_iters=True, disable_predication=False)\n"
    "v25, v26, v27 = sch.sample_perfect_tile(loop=l4, n=3, max_innermost_factor=64)\n"
    "l28, l29, l30 = sch.split(loop=l4, factors=[v25, v26, v27], preserve_unit_iters=True, disable_predication=False)\n"
    "sch.reorder(l10, l20, l11, l21, l12, l22, l28, l29, l13, l23, l30, l14, l24)\n"
    "l31 = sch.fuse(l10, l20, preserve_unit_iters=True)\n"
    "sch.bind(loop=l31, thread_axis=\"blockIdx.x\")\n"
    "l32 = sch.fuse(l11, l21, preserve_unit_iters=True)\n"
    "sch.bind(loop=l32, thread_axis=\"vthread.x\")\n"
    "l33 = sch.fuse(l12, l22, preserve_unit_iters=True)\n"
    "sch.bind(loop=l33, thread_axis=\"threadIdx.x\")\n"
    "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.thread_extent_low_inclusive\", ann_val=32)\n"
    "sch.annotate(block_or_loop=b0, ann_key=\"meta_schedule.thread_extent_high_inclusive\", ann_val=1024)\n"
    "b34 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"local\")\n"
    "sch.reverse_compute_at(block=b34, loop=l33, preserve_unit_loops=True, index=-1)\n"
    "b35 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"shared\", consumer_blocks=[b0])\n"
    "sch.compute_at(block=b35, loop=l28, preserve_unit_loops=True, index=-1)\n"
    "l36, l37, l38, l39, l40, l41 = sch.get_loops(block=b35)\n"
    "l42 = sch.fuse(l40, l41, preserve_unit_iters=True)\n"
    "v43 = sch.sample_categorical(candidates=[1, 2, 3, 4], probs=[0.25, 0.25, 0.25, 0.25])\n"
    "sch.annotate(block_or_loop=b35, ann_key=\"meta_schedule.cooperative_fetch\", ann_val=v43)\n"
    "b44 = sch.cache_read(block=b0, read_buffer_index=1, storage_scope=\"shared\", consumer_blocks=[b0])\n"
    "sch.compute_at(block=b44, loop=l28, preserve_unit_loops=True, index=-1)\n"
    "l45, l46, l47, l48, l49, l50 = sch.get_loops(block=b44)\n"
    "l51 = sch.fuse(l49, l50, preserve_unit_iters=True)\n"
    "v52 = sch.sample_categorical(candidates=[1, 2, 3, 4], probs=[0.25, 0.25, 0.25, 0.25])\n"
    "sch.annotate(block_or_loop=b44, ann_key=\"meta_schedule.cooperative_fetch\", ann_val=v52)\n"
    "v53 = sch.sample_categorical(candidates=[0, 16, 32, 64, 128, 256, 512, 1024], probs=[0.125, "
    "0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125])\n"
    "sch.annotate(block_or_loop=b1, ann_key=\"meta_schedule.unroll_explicit\", ann_val=v53)\n";


static loom_target cuda(void) {
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_target_parse("cuda -arch=sm_80", &t, &d) == LOOM_OK);
  loom_diag_free(&d);
  return t;
}

/* The cost model sees the thread structure: every store runs under at
 * most 1024 threads, some under 32 or more, all along threadIdx.x. */
static void check_features(const loom_func *f) {
  float *rows = NULL;
  int n = 0;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_model_features(f, 1, &rows, &n, &d) == LOOM_OK);
  bool seen = false;
  for (int i = 0; i < n; i++) {
    const float *r = rows + (size_t)i * LOOM_MODEL_FEATURE_DIM;
    seen |= r[LOOM_FEAT_GPU_THREADS] >= 5.0f;
    /* The copies' thread loops sit inside the tiling's: one axis. */
    CHECK(r[LOOM_FEAT_GPU_THREADS] <= 10.01f);
    CHECK(r[LOOM_FEAT_GPU_THREAD_X] == r[LOOM_FEAT_GPU_THREADS]);
  }
  CHECK(seen);
  free(rows);
  loom_diag_free(&d);
}

static void check_matmul(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read(a, matmul);
  loom_target t = cuda();
  loom_diag d;
  loom_diag_init(&d);
  loom_trace *spaces;
  int n = 0;
  CHECK(m && loom_space_generate(m, &t, a, &spaces, &n, &d) == LOOM_OK);
  CHECK(n == 1);
  if (n >= 1) {
    char *got = program_trace_plain(&spaces[0], LOOM_DIALECT_TIR);
    CHECK_STREQ(got, tvm_space);
    free(got);
  }
  /* Draws until one launches: its copies are split among the 64 or more
   * threads and it computes the matmul. */
  int kept = 0;
  for (uint64_t seed = 1; n >= 1 && seed < 200 && kept < 3; seed++) {
    loom_sched *s = loom_sched_new(m, seed);
    loom_diag cd;
    loom_diag_init(&cd);
    CHECK(loom_trace_apply(&spaces[0], s, LOOM_REPLAY_RESAMPLE, &cd) == LOOM_OK);
    if (loom_space_postprocess(s, &t, &cd) == LOOM_OK) {
      kept++;
      loom_trace ct = loom_sched_trace(s);
      char *got = program_trace_plain(&ct, LOOM_DIALECT_TIR);
      CHECK_CONTAINS(got, "sch.enter_postproc()\n"
                          "b54 = sch.get_block(name=\"A_shared\", func_name=\"main\")\n"
                          "sch.unannotate(block_or_loop=b54, ann_key=\"meta_schedule.cooperative_fetch\")\n"
                          "l55, l56, l57, l58, l59 = sch.get_loops(block=b54)\n");
      CHECK_CONTAINS(got, "thread_axis=\"threadIdx.x\")\n");
      CHECK_CONTAINS(got, "= sch.decompose_reduction(block=");
      free(got);
      CHECK(interp_same_results(m->funcs[0], loom_sched_module(s)->funcs[0], 2, true));
      check_features(loom_sched_module(s)->funcs[0]);
    } else {
      CHECK_CONTAINS(cd.msg, "VerifyGPUCode");
    }
    loom_diag_free(&cd);
    loom_sched_free(s);
  }
  CHECK(kept == 3);
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* TVM's space for a matmul with a ReLU after it: the local cache is
 * written as always, and the ReLU is left to a kernel of its own. */
static void check_epilogue(void) {
  loom_arena *a = loom_arena_new();
  char *text = program_replace(matmul, "C: T.Buffer((128, 128), \"float32\")):\n",
                               "D: T.Buffer((128, 128), \"float32\")):\n"
                               "    C = T.alloc_buffer((128, 128))\n");
  size_t len = strlen(text);
  text = realloc(text, len + 400);
  strcat(text, "    for i, j in T.grid(128, 128):\n"
               "        with T.block(\"D\"):\n"
               "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
               "            D[vi, vj] = T.max(C[vi, vj], T.float32(0.0))\n");
  loom_module *m = program_read(a, text);
  loom_target t = cuda();
  loom_diag d;
  loom_diag_init(&d);
  loom_trace *spaces;
  int n = 0;
  CHECK(m && loom_space_generate(m, &t, a, &spaces, &n, &d) == LOOM_OK);
  CHECK(n == 1);
  if (n >= 1) {
    char *got = program_trace_plain(&spaces[0], LOOM_DIALECT_TIR);
    CHECK_CONTAINS(got, "= sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"local\")\n");
    CHECK(!strstr(got, "reverse_compute_at(block=b1"));
    free(got);
  }
  free(text);
  loom_diag_free(&d);
  loom_arena_free(a);
}

int main(void) {
  check_matmul();
  check_epilogue();
  return test_summary("cuda space");
}
