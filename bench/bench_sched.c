/* Schedule costs a search pays thousands of times: forking a schedule,
 * applying a tiling script (sample, split, reorder, parallel, vectorize) to a
 * matmul, printing its trace and replaying it with fresh decisions. Run with
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

static const char *program =
    "# from tvm.script import tir as T\n"
    "@T.prim_func\n"
    "def main(A: T.Buffer((1024, 1024), \"float32\"), B: T.Buffer((1024, 1024), \"float32\"), C: T.Buffer((1024, 1024), \"float32\")):\n"
    "    for i, j, k in T.grid(1024, 1024, 1024):\n"
    "        with T.block(\"matmul\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0.0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char *script =
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

int main(void) {
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_script_read(program, strlen(program), "mm.py", a, &m, &d) != LOOM_OK) {
    fprintf(stderr, "read: %s\n", d.msg);
    return 1;
  }
  loom_sched *s = loom_sched_new(m, 1);
  int runs = 2000;
  double t0 = now();
  for (int i = 0; i < runs; i++) {
    loom_sched *r = loom_sched_new(m, (uint64_t)i);
    if (loom_sched_run_script(r, script, strlen(script), "s.py", &d) != LOOM_OK) {
      fprintf(stderr, "script: %s\n", d.msg);
      return 1;
    }
    if (i == 0) {
      loom_sched_free(s);
      s = r;
    } else
      loom_sched_free(r);
  }
  double t_script = (now() - t0) / runs;

  loom_trace t = loom_sched_trace(s);
  t0 = now();
  for (int i = 0; i < runs; i++) {
    loom_sched *r = loom_sched_new(m, (uint64_t)i);
    if (loom_trace_apply(&t, r, false, &d) != LOOM_OK) {
      fprintf(stderr, "replay: %s\n", d.msg);
      return 1;
    }
    loom_sched_free(r);
  }
  double t_replay = (now() - t0) / runs;

  int forks = 200000;
  t0 = now();
  for (int i = 0; i < forks; i++)
    loom_sched_free(loom_sched_copy(s));
  double t_fork = (now() - t0) / forks;

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

  printf("matmul 1024, 11-step tiling trace (%d instructions):\n", t.n_insts);
  printf("  run script:            %8.1f us\n", t_script * 1e6);
  printf("  replay, new decisions: %8.1f us\n", t_replay * 1e6);
  printf("  fork (copy + free):    %8.3f us\n", t_fork * 1e6);
  printf("  print script + JSON:   %8.1f us (%zu bytes)\n", t_print * 1e6,
         bytes / (size_t)runs);
  loom_sched_free(s);
  loom_diag_free(&d);
  loom_arena_free(a);
  return 0;
}
