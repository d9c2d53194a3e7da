/* loop_partition: each allowed script must verify, print what TVM prints
 * for the pieces (names, ranges, narrowed domains and regions, checked as
 * fragments of the printed module) and compute what the unscheduled program
 * computes on random inputs (the interpreter is the oracle); each refused
 * one must give exactly the message recorded here. */
#include "schedule/sched_impl.h"
#include "loom/interp.h"
#include "loom/schedule.h"
#include "loom/script.h"
#include "test.h"

#include <stdlib.h>

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"

static const char *const elementwise =
    HEAD "def main(A: T.Buffer((16, 10), \"int32\"), B: T.Buffer((16, 10), \"int32\")):\n"
         "    for i, j in T.grid(16, 10):\n"
         "        with T.block(\"B\"):\n"
         "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
         "            B[vi, vj] = A[vi, vj] * 2\n";

static const char *const row_sum =
    HEAD "def main(A: T.Buffer((8, 12), \"int32\"), S: T.Buffer((8,), \"int32\")):\n"
         "    for i, k in T.grid(8, 12):\n"
         "        with T.block(\"S\"):\n"
         "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
         "            with T.init():\n"
         "                S[vi] = 0\n"
         "            S[vi] = S[vi] + A[vi, vk] * (vk + 1)\n";

/* Two blocks under one loop, and a loop that starts at 2. */
static const char *const two_blocks =
    HEAD "def main(A: T.Buffer((20,), \"int32\"), C: T.Buffer((20,), \"int32\")):\n"
         "    B = T.alloc_buffer((20,), \"int32\")\n"
         "    for i in range(2, 20):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial(20, i)\n"
         "            B[vi] = A[vi] + 1\n"
         "        with T.block(\"C\"):\n"
         "            vi = T.axis.spatial(20, i)\n"
         "            C[vi] = B[vi] * 3\n";

static const char *const symbolic =
    HEAD "def main(a: T.handle, n: T.int32):\n"
         "    A = T.match_buffer(a, (n,), \"int32\")\n"
         "    for i in range(n):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.remap(\"S\", [i])\n"
         "            A[vi] = A[vi] + 1\n";

static const char *const scratch =
    HEAD "def main(A: T.Buffer((8, 4), \"int32\")):\n"
         "    for i in range(8):\n"
         "        with T.block(\"outer\"):\n"
         "            vi = T.axis.spatial(8, i)\n"
         "            tmp = T.alloc_buffer((4,), \"int32\")\n"
         "            for j in range(4):\n"
         "                with T.block(\"inner\"):\n"
         "                    vj = T.axis.spatial(4, j)\n"
         "                    tmp[vj] = vj\n"
         "            for j in range(4):\n"
         "                with T.block(\"out\"):\n"
         "                    vj = T.axis.spatial(4, j)\n"
         "                    A[vi, vj] = tmp[vj]\n";

typedef struct part_case {
  const char *name;
  const char *const *program;
  const char *script;
  const char *error;       /* NULL: allowed; else the exact message */
  const char *expect[6];   /* fragments of the printed result */
} part_case;

#define LOOPS(b) "b0 = sch.get_block(name=\"" b "\")\nl1, l2 = sch.get_loops(block=b0)\n"

static const part_case cases[] = {
    {"inferred-piece", &elementwise,
     LOOPS("B") "l3, l4 = sch.loop_partition(loop=l1, factors=[None, 4])\n",
     NULL,
     {"with T.block(\"B_i_common\"):", "with T.block(\"B_i1_partition\"):",
      "for i0, j in T.grid(12, 10):", "for i1 in range(12, 16):",
      "T.reads(A[12:16, 0:10])", "T.writes(B[0:12, 0:10])"}},
    {"rest-piece-nested", &elementwise,
     LOOPS("B") "l3, l4, l5 = sch.loop_partition(loop=l1, factors=[5, 1])\n"
     "b6 = sch.get_block(name=\"B_i2\")\nl7, l8 = sch.get_loops(block=b6)\n"
     "l9, l10 = sch.loop_partition(loop=l8, factors=[3])\n",
     NULL,
     {"for i1 in range(5, 6):", "with T.block(\"B_i2_j_common\"):",
      "for j1 in range(3, 10):", "with T.block(\"B_i2_j1\"):",
      "T.reads(A[6:16, 3:10])", "vi, vj = T.axis.remap(\"SS\", [i2, j1])"}},
    {"reduction-keeps-init-domain", &row_sum,
     LOOPS("S") "l3, l4 = sch.loop_partition(loop=l2, factors=[5])\n",
     NULL,
     {"vk = T.axis.reduce(12, k1)", "for k1 in range(5, 12):",
      "T.reads(A[0:8, 5:12])", NULL}},
    {"two-blocks-offset", &two_blocks,
     "b0 = sch.get_block(name=\"C\")\nl1, = sch.get_loops(block=b0)\n"
     "l2, l3, l4 = sch.loop_partition(loop=l1, factors=[3, None, 5])\n",
     NULL,
     {"with T.block(\"B_i_common\"):", "for i0 in range(2, 5):",
      "for i1 in range(5, 15):", "with T.block(\"C_i2\"):",
      "vi = T.axis.spatial((15, 20), i2)", "T.writes(B[15:20])"}},
    {"sum-too-large", &elementwise,
     LOOPS("B") "l3, l4 = sch.loop_partition(loop=l2, factors=[6, 4])\n",
     "loop_partition: the constant factors sum to at least the extent 10 of "
     "loop 'j'; they must leave a last piece (the None factor, or the rest "
     "after the factors)", {NULL}},
    {"zero-factor", &elementwise,
     LOOPS("B") "l3, l4 = sch.loop_partition(loop=l2, factors=[0, None])\n",
     "loop_partition: every constant factor for loop 'j' must be positive, "
     "but the factor at position 0 is 0", {NULL}},
    {"two-none", &elementwise,
     LOOPS("B") "l3, l4 = sch.loop_partition(loop=l2, factors=[None, None])\n",
     "loop_partition: at most one factor for loop 'j' may be None (factors 0 "
     "and 1 are)",
     {NULL}},
    {"annotated", &elementwise,
     LOOPS("B") "sch.annotate(block_or_loop=l2, ann_key=\"k\", ann_val=1)\n"
     "l3, l4 = sch.loop_partition(loop=l2, factors=[None, 4])\n",
     "loop_partition: loop 'j' has an annotation or a thread binding", {NULL}},
    {"thread-bound", &elementwise,
     LOOPS("B") "sch.bind(loop=l1, thread_axis=\"threadIdx.x\")\n"
     "l3, l4 = sch.loop_partition(loop=l1, factors=[None, 4])\n",
     "loop_partition: loop 'i' has an annotation or a thread binding", {NULL}},
    {"symbolic-extent", &symbolic,
     "b0 = sch.get_block(name=\"B\")\nl1, = sch.get_loops(block=b0)\n"
     "l2, l3 = sch.loop_partition(loop=l1, factors=[None, 4])\n",
     "loop_partition: loop 'i' has a range that is not constant; only a "
     "constant range can be partitioned", {NULL}},
    {"allocating-block", &scratch,
     "b0 = sch.get_block(name=\"outer\")\nl1, = sch.get_loops(block=b0)\n"
     "l2, l3 = sch.loop_partition(loop=l1, factors=[None, 4])\n",
     "loop_partition: block 'outer' under loop 'i' allocates a buffer, which "
     "the copies of the loop body would define more than once", {NULL}},
};
#define N_CASES ((int)(sizeof cases / sizeof *cases))

static bool run(const loom_func *f, uint64_t seed, loom_interp_array **args) {
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_interp_alloc_args(f, NULL, args, &d) == LOOM_OK;
  loom_rng r;
  loom_rng_seed(&r, seed);
  for (int i = 0; ok && i < f->n_params; i++)
    if (args[i])
      loom_interp_fill_random(args[i], &r);
  ok = ok && loom_interp_run(f, args, NULL, &d) == LOOM_OK;
  if (!ok)
    fprintf(stderr, "interp: %s\n", d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return ok;
}

static bool same_results(const loom_func *f, const loom_func *g) {
  bool ok = true;
  for (uint64_t seed = 1; seed <= 3 && ok; seed++) {
    loom_interp_array *x[8] = {0}, *y[8] = {0};
    ok = f->n_params <= 8 && run(f, seed, x) && run(g, seed, y);
    for (int i = 0; ok && i < f->n_params; i++) {
      char *why = NULL;
      if (x[i] && !loom_interp_compare(y[i], x[i], 0, 0, &why)) {
        fprintf(stderr, "parameter %d differs %s\n", i, why ? why : "");
        ok = false;
      }
      free(why);
    }
    loom_interp_free_args(f, x);
    loom_interp_free_args(g, y);
  }
  return ok;
}

static void run_case(const part_case *c) {
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_script_read(*c->program, strlen(*c->program), "t.py", a, &m,
                         &d) == LOOM_OK);
  if (!m) {
    fprintf(stderr, "%s: %s\n", c->name, d.msg ? d.msg : "?");
    loom_diag_free(&d);
    loom_arena_free(a);
    return;
  }
  loom_sched *s = loom_sched_new(m, 7);
  loom_status st = loom_sched_run_script(s, c->script, strlen(c->script),
                                         "s.py", &d);
  if (c->error) {
    if (st == LOOM_OK)
      fprintf(stderr, "%s: allowed, but should be refused\n", c->name);
    CHECK(st == LOOM_ERROR);
    CHECK_STREQ(d.msg, c->error);
  } else {
    if (st != LOOM_OK)
      fprintf(stderr, "%s: refused: %s\n", c->name, d.msg ? d.msg : "?");
    CHECK(st == LOOM_OK);
    if (st == LOOM_OK) {
      loom_diag v;
      loom_diag_init(&v);
      CHECK(loom_ir_verify_module(loom_sched_module(s), &v) == LOOM_OK);
      loom_diag_free(&v);
      loom_buf out;
      loom_buf_init(&out);
      loom_script_print_module(loom_sched_module(s), NULL, &out);
      for (int i = 0; i < 6 && c->expect[i]; i++)
        CHECK_CONTAINS(out.data, c->expect[i]);
      loom_buf_free(&out);
      bool same = same_results(m->funcs[0], loom_sched_module(s)->funcs[0]);
      if (!same)
        fprintf(stderr, "%s: the scheduled program computes otherwise\n",
                c->name);
      CHECK(same);
    }
  }
  loom_diag_free(&d);
  loom_sched_free(s);
  loom_arena_free(a);
}

/* Every arena allocation of an allowed case may fail, the 1st, the 2nd,
 * ... until the case runs through: each failure must be a clean error,
 * never a crash or a leak (the sanitizers watch). */
static void run_faults(const part_case *c) {
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_script_read(*c->program, strlen(*c->program), "t.py", a, &m,
                             &d) == LOOM_OK;
  loom_diag_free(&d);
  bool done = false;
  for (long at = 1; ok && !done && at < 20000; at++) {
    loom_sched *s = loom_sched_new(m, 7);
    if (!s)
      break;
    loom_faultsim fs = {at, 0};
    loom_arena_set_faultsim(sched_arena(s), &fs);
    loom_diag_init(&d);
    loom_status st = loom_sched_run_script(s, c->script, strlen(c->script),
                                           "s.py", &d);
    done = st == LOOM_OK;
    CHECK(done || d.has_error);
    loom_diag_free(&d);
    loom_sched_free(s);
  }
  CHECK(done);
  loom_arena_free(a);
}

int main(void) {
  for (int i = 0; i < N_CASES; i++)
    run_case(&cases[i]);
  for (int i = 0; i < N_CASES; i++)
    if (!cases[i].error)
      run_faults(&cases[i]);
  return test_summary("schedule/partition");
}
