/* Schedule costs a search pays thousands of times: forking a schedule,
 * applying a tiling script to a program, printing its trace and replaying
 * it with fresh decisions; reported as primitives applied per second and
 * trace replays per second, for a matmul, a conv2d (NHWC, the corpus
 * shapes: sample, split, reorder, fuse, parallel, vectorize, compute_at)
 * and a matmul tiled for the 4x16x4 tensor intrinsic. Run with
 * `make bench`. */
#include "loom/schedule.h"
#include "loom/script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char matmul[] =
    "# from tvm.script import tir as T\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((1024, 1024), \"float32\"), B: T.Buffer((1024, 1024), \"float32\"), C: T.Buffer((1024, 1024), \"float32\")):\n"
    "    for i, j, k in T.grid(1024, 1024, 1024):\n"
    "        with T.block(\"matmul\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0.0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char matmul_script[] =
    "b0 = sch.get_block(name=\"matmul\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "v4, v5, v6, v7 = sch.sample_perfect_tile(loop=l1, n=4, max_innermost_factor=16)\n"
    "v8, v9, v10, v11 = sch.sample_perfect_tile(loop=l2, n=4, max_innermost_factor=16)\n"
    "v12, v13 = sch.sample_perfect_tile(loop=l3, n=2, max_innermost_factor=16)\n"
    "l14, l15, l16, l17 = sch.split(loop=l1, factors=[v4, v5, v6, v7])\n"
    "l18, l19, l20, l21 = sch.split(loop=l2, factors=[v8, v9, v10, v11])\n"
    "l22, l23 = sch.split(loop=l3, factors=[v12, v13])\n"
    "sch.reorder(l14, l18, l15, l19, l22, l16, l20, l23, l17, l21)\n"
    "sch.parallel(loop=l14)\n"
    "sch.vectorize(loop=l21)\n";

static const char conv2d[] =
    "# from tvm.script import tir as T\n"
    "@T.prim_func\n"
    "def main(X: T.Buffer((1, 56, 56, 64), \"float32\"), W: T.Buffer((3, 3, 64, 64), \"float32\"), Y: T.Buffer((1, 56, 56, 64), \"float32\")):\n"
    "    T.func_attr({\"tir.noalias\": True})\n"
    "    pad = T.alloc_buffer((1, 58, 58, 64))\n"
    "    for n, h, w, c in T.grid(1, 58, 58, 64):\n"
    "        with T.block(\"pad\"):\n"
    "            vn, vh, vw, vc = T.axis.remap(\"SSSS\", [n, h, w, c])\n"
    "            pad[vn, vh, vw, vc] = T.if_then_else(1 <= vh and vh < 57 and 1 <= vw and vw < 57, X[vn, vh - 1, vw - 1, vc], T.float32(0.0))\n"
    "    for n, h, w, co, rh, rw, ci in T.grid(1, 56, 56, 64, 3, 3, 64):\n"
    "        with T.block(\"conv\"):\n"
    "            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap(\"SSSSRRR\", [n, h, w, co, rh, rw, ci])\n"
    "            with T.init():\n"
    "                Y[vn, vh, vw, vco] = T.float32(0.0)\n"
    "            Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + pad[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]\n";

static const char conv2d_script[] =
    "b0 = sch.get_block(name=\"conv\", func_name=\"main\")\n"
    "l1, l2, l3, l4, l5, l6, l7 = sch.get_loops(block=b0)\n"
    "v8, v9, v10, v11 = sch.sample_perfect_tile(loop=l2, n=4, max_innermost_factor=16)\n"
    "v12, v13, v14, v15 = sch.sample_perfect_tile(loop=l3, n=4, max_innermost_factor=16)\n"
    "v16, v17, v18, v19 = sch.sample_perfect_tile(loop=l4, n=4, max_innermost_factor=16)\n"
    "v20, v21 = sch.sample_perfect_tile(loop=l5, n=2, max_innermost_factor=16)\n"
    "v22, v23 = sch.sample_perfect_tile(loop=l6, n=2, max_innermost_factor=16)\n"
    "v24, v25 = sch.sample_perfect_tile(loop=l7, n=2, max_innermost_factor=16)\n"
    "l26, l27, l28, l29 = sch.split(loop=l2, factors=[v8, v9, v10, v11])\n"
    "l30, l31, l32, l33 = sch.split(loop=l3, factors=[v12, v13, v14, v15])\n"
    "l34, l35, l36, l37 = sch.split(loop=l4, factors=[v16, v17, v18, v19])\n"
    "l38, l39 = sch.split(loop=l5, factors=[v20, v21])\n"
    "l40, l41 = sch.split(loop=l6, factors=[v22, v23])\n"
    "l42, l43 = sch.split(loop=l7, factors=[v24, v25])\n"
    "sch.reorder(l26, l30, l34, l27, l31, l35, l38, l40, l42, l28, l32, l36, l39, l41, l43, l29, l33, l37)\n"
    "l44 = sch.fuse(l1, l26, l30, l34)\n"
    "sch.parallel(loop=l44)\n"
    "sch.vectorize(loop=l37)\n"
    "b45 = sch.get_block(name=\"pad\", func_name=\"main\")\n"
    "sch.compute_at(block=b45, loop=l35, preserve_unit_loops=True)\n";

static const char tensorize_script[] =
    "b0 = sch.get_block(name=\"matmul\", func_name=\"main\")\n"
    "l1, l2, l3 = sch.get_loops(block=b0)\n"
    "l4, l5 = sch.split(loop=l1, factors=[None, 4])\n"
    "v6, v7 = sch.sample_perfect_tile(loop=l4, n=2, max_innermost_factor=16)\n"
    "l8, l9 = sch.split(loop=l4, factors=[v6, v7])\n"
    "l10, l11 = sch.split(loop=l2, factors=[None, 16])\n"
    "v12, v13 = sch.sample_perfect_tile(loop=l10, n=2, max_innermost_factor=16)\n"
    "l14, l15 = sch.split(loop=l10, factors=[v12, v13])\n"
    "l16, l17 = sch.split(loop=l3, factors=[None, 4])\n"
    "sch.reorder(l8, l14, l9, l15, l16, l5, l11, l17)\n"
    "sch.parallel(loop=l8)\n"
    "sch.tensorize(block_or_loop=l5, tensor_intrin=\"loom_f32_gemm_4x16x4\")\n";

typedef struct workload {
  const char *name, *program, *script;
  int runs;
} workload;

static const workload workloads[] = {
    {"matmul 1024, tiling", matmul, matmul_script, 2000},
    {"conv2d NHWC 56x56x64, 3x3, tiling + compute_at", conv2d, conv2d_script,
     500},
    {"matmul 1024, tiling + tensorize 4x16x4", matmul, tensorize_script, 2000},
};

/* Applies w's script runs times (fresh schedules), then replays its trace
 * with new decisions runs times; prints the rates. */
static int measure(const workload *w, bool with_forks) {
  const char *program = w->program, *script = w->script;
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_script_read(program, strlen(program), "program.py", a, &m, &d) !=
      LOOM_OK) {
    fprintf(stderr, "%s: read: %s\n", w->name, d.msg);
    return 1;
  }
  loom_sched *s = NULL;
  int runs = w->runs;
  double t0 = now();
  for (int i = 0; i < runs; i++) {
    loom_sched *r = loom_sched_new(m, (uint64_t)i);
    if (loom_sched_run_script(r, script, strlen(script), "s.py", &d) != LOOM_OK) {
      fprintf(stderr, "%s: script: %s\n", w->name, d.msg);
      return 1;
    }
    if (i == 0)
      s = r;
    else
      loom_sched_free(r);
  }
  double t_script = (now() - t0) / runs;

  loom_trace t = loom_sched_trace(s);
  t0 = now();
  for (int i = 0; i < runs; i++) {
    loom_sched *r = loom_sched_new(m, (uint64_t)i);
    if (loom_trace_apply(&t, r, LOOM_REPLAY_RESAMPLE, &d) != LOOM_OK) {
      fprintf(stderr, "%s: replay: %s\n", w->name, d.msg);
      return 1;
    }
    loom_sched_free(r);
  }
  double t_replay = (now() - t0) / runs;

  t0 = now();
  size_t bytes = 0;
  for (int i = 0; i < runs; i++) {
    loom_buf b;
    loom_buf_init(&b);
    loom_trace_print_py(&t, LOOM_DIALECT_TIR, &b);
    loom_trace_print_json(&t, LOOM_DIALECT_TIR, &b);
    bytes += b.len;
    loom_buf_free(&b);
  }
  double t_print = (now() - t0) / runs;

  printf("%s (%d instructions):\n", w->name, t.n_insts);
  printf("  run script:            %8.1f us  %9.0f primitives/s\n",
         t_script * 1e6, t.n_insts / t_script);
  printf("  replay, new decisions: %8.1f us  %9.0f replays/s\n",
         t_replay * 1e6, 1 / t_replay);
  printf("  print script + JSON:   %8.1f us (%zu bytes)\n", t_print * 1e6,
         bytes / (size_t)runs);
  if (with_forks) {
    int forks = 200000;
    t0 = now();
    for (int i = 0; i < forks; i++)
      loom_sched_free(loom_sched_copy(s));
    printf("  fork (copy + free):    %8.3f us\n", (now() - t0) / forks * 1e6);
  }
  loom_sched_free(s);
  loom_diag_free(&d);
  loom_arena_free(a);
  return 0;
}

int main(void) {
  for (int i = 0; i < (int)(sizeof workloads / sizeof *workloads); i++)
    if (measure(&workloads[i], i == 0))
      return 1;
  return 0;
}
