/* loop_partition: each allowed script must verify, print what TVM prints
 * for the pieces (names, ranges, narrowed domains and regions, checked as
 * fragments of the printed module) and compute what the unscheduled program
 * computes on random inputs (the interpreter is the oracle); each refused
 * one must give exactly the message recorded here. */
#include "prim_case.h"

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"

static const char elementwise[] =
    HEAD "def main(A: T.Buffer((16, 10), \"int32\"), B: T.Buffer((16, 10), \"int32\")):\n"
         "    for i, j in T.grid(16, 10):\n"
         "        with T.block(\"B\"):\n"
         "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
         "            B[vi, vj] = A[vi, vj] * 2\n";

static const char row_sum[] =
    HEAD "def main(A: T.Buffer((8, 12), \"int32\"), S: T.Buffer((8,), \"int32\")):\n"
         "    for i, k in T.grid(8, 12):\n"
         "        with T.block(\"S\"):\n"
         "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
         "            with T.init():\n"
         "                S[vi] = 0\n"
         "            S[vi] = S[vi] + A[vi, vk] * (vk + 1)\n";

/* Two blocks under one loop, and a loop that starts at 2. */
static const char two_blocks[] =
    HEAD "def main(A: T.Buffer((20,), \"int32\"), C: T.Buffer((20,), \"int32\")):\n"
         "    B = T.alloc_buffer((20,), \"int32\")\n"
         "    for i in range(2, 20):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial(20, i)\n"
         "            B[vi] = A[vi] + 1\n"
         "        with T.block(\"C\"):\n"
         "            vi = T.axis.spatial(20, i)\n"
         "            C[vi] = B[vi] * 3\n";

static const char symbolic[] =
    HEAD "def main(a: T.handle, n: T.int32):\n"
         "    A = T.match_buffer(a, (n,), \"int32\")\n"
         "    for i in range(n):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.remap(\"S\", [i])\n"
         "            A[vi] = A[vi] + 1\n";

static const char scratch[] =
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

#define LOOPS(b) "b0 = sch.get_block(name=\"" b "\")\nl1, l2 = sch.get_loops(block=b0)\n"

static const prim_case cases[] = {
    {"inferred-piece", elementwise,
     LOOPS("B") "l3, l4 = sch.loop_partition(loop=l1, factors=[None, 4])\n",
     NULL,
     {"with T.block(\"B_i_common\"):", "with T.block(\"B_i1_partition\"):",
      "for i0, j in T.grid(12, 10):", "for i1 in range(12, 16):",
      "T.reads(A[12:16, 0:10])", "T.writes(B[0:12, 0:10])"}, true},
    {"rest-piece-nested", elementwise,
     LOOPS("B") "l3, l4, l5 = sch.loop_partition(loop=l1, factors=[5, 1])\n"
     "b6 = sch.get_block(name=\"B_i2\")\nl7, l8 = sch.get_loops(block=b6)\n"
     "l9, l10 = sch.loop_partition(loop=l8, factors=[3])\n",
     NULL,
     {"for i1 in range(5, 6):", "with T.block(\"B_i2_j_common\"):",
      "for j1 in range(3, 10):", "with T.block(\"B_i2_j1\"):",
      "T.reads(A[6:16, 3:10])", "vi, vj = T.axis.remap(\"SS\", [i2, j1])"}, true},
    {"reduction-keeps-init-domain", row_sum,
     LOOPS("S") "l3, l4 = sch.loop_partition(loop=l2, factors=[5])\n",
     NULL,
     {"vk = T.axis.reduce(12, k1)", "for k1 in range(5, 12):",
      "T.reads(A[0:8, 5:12])", NULL}, true},
    {"two-blocks-offset", two_blocks,
     "b0 = sch.get_block(name=\"C\")\nl1, = sch.get_loops(block=b0)\n"
     "l2, l3, l4 = sch.loop_partition(loop=l1, factors=[3, None, 5])\n",
     NULL,
     {"with T.block(\"B_i_common\"):", "for i0 in range(2, 5):",
      "for i1 in range(5, 15):", "with T.block(\"C_i2\"):",
      "vi = T.axis.spatial((15, 20), i2)", "T.writes(B[15:20])"}, true},
    {"sum-too-large", elementwise,
     LOOPS("B") "l3, l4 = sch.loop_partition(loop=l2, factors=[6, 4])\n",
     "loop_partition: the constant factors sum to at least the extent 10 of "
     "loop 'j'; they must leave a last piece (the None factor, or the rest "
     "after the factors)", {NULL}, false},
    {"zero-factor", elementwise,
     LOOPS("B") "l3, l4 = sch.loop_partition(loop=l2, factors=[0, None])\n",
     "loop_partition: every constant factor for loop 'j' must be positive, "
     "but the factor at position 0 is 0", {NULL}, false},
    {"two-none", elementwise,
     LOOPS("B") "l3, l4 = sch.loop_partition(loop=l2, factors=[None, None])\n",
     "loop_partition: at most one factor for loop 'j' may be None (factors 0 "
     "and 1 are)",
     {NULL}, false},
    {"annotated", elementwise,
     LOOPS("B") "sch.annotate(block_or_loop=l2, ann_key=\"k\", ann_val=1)\n"
     "l3, l4 = sch.loop_partition(loop=l2, factors=[None, 4])\n",
     "loop_partition: loop 'j' has an annotation or a thread binding", {NULL}, false},
    {"thread-bound", elementwise,
     LOOPS("B") "sch.bind(loop=l1, thread_axis=\"threadIdx.x\")\n"
     "l3, l4 = sch.loop_partition(loop=l1, factors=[None, 4])\n",
     "loop_partition: loop 'i' has an annotation or a thread binding", {NULL}, false},
    {"symbolic-extent", symbolic,
     "b0 = sch.get_block(name=\"B\")\nl1, = sch.get_loops(block=b0)\n"
     "l2, l3 = sch.loop_partition(loop=l1, factors=[None, 4])\n",
     "loop_partition: loop 'i' has a range that is not constant; only a "
     "constant range can be partitioned", {NULL}, false},
    {"allocating-block", scratch,
     "b0 = sch.get_block(name=\"outer\")\nl1, = sch.get_loops(block=b0)\n"
     "l2, l3 = sch.loop_partition(loop=l1, factors=[None, 4])\n",
     "loop_partition: block 'outer' under loop 'i' allocates a buffer, which "
     "the copies of the loop body would define more than once", {NULL}, false},
};
#define N_CASES ((int)(sizeof cases / sizeof *cases))


int main(void) {
  for (int i = 0; i < N_CASES; i++)
    run_case(&cases[i]);
  return test_summary("schedule/partition");
}
