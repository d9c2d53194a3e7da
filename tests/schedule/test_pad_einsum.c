/* pad_einsum: a matmul padded to multiples computes what it computed (the
 * interpreter is the oracle), with zero-filled copies of the inputs and a
 * copy back of the output as TVM makes them; every refusal names the block
 * and what stops the padding. */
#include "prim_case.h"

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"
#define MM_PARAMS                                                              \
  "def main(A: T.Buffer((6, 5), \"int32\"), B: T.Buffer((5, 4), \"int32\"), "  \
  "C: T.Buffer((6, 4), \"int32\")):\n"
#define MM_BODY(update)                                                        \
  "    for i, j, k in T.grid(6, 4, 5):\n"                                      \
  "        with T.block(\"C\"):\n"                                             \
  "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"                \
  "            with T.init():\n"                                               \
  "                C[vi, vj] = 0\n"                                            \
  "            C[vi, vj] = " update "\n"
#define MATMUL HEAD MM_PARAMS MM_BODY("C[vi, vj] + A[vi, vk] * B[vk, vj]")
#define PAD(list)                                                              \
  "b0 = sch.get_block(name=\"C\")\nsch.pad_einsum(block=b0, padding=" list ")\n"
#define ELEMWISE(extent, index)                                                \
  HEAD "def main(A: T.Buffer((10,), \"int32\"), B: T.Buffer((10,), "           \
       "\"int32\")):\n"                                                        \
       "    for i in range(" extent "):\n"                                     \
       "        with T.block(\"C\"):\n"                                        \
       "            vi = T.axis.remap(\"S\", [i])\n"                           \
       "            B[" index "] = A[vi] + 1\n"

static const prim_case cases[] = {
    {"matmul", MATMUL, PAD("[4, 4, 4]"), NULL,
     {"            A_pad[v0, v1] = T.if_then_else(v0 < 6 and v1 < 5, A[v0, v1], "
      "0)\n"},
     true},
    {"matmul-loops", MATMUL, PAD("[4, 4, 4]"), NULL,
     {"    for i, j, k in T.grid(8, 4, 8):\n"}, true},
    {"matmul-copy-back", MATMUL, PAD("[4, 4, 4]"), NULL,
     {"            C[v0, v1] = C_pad[v0, v1]\n"}, true},
    /* Only the reduction padded: no copy of C. */
    {"matmul-k", MATMUL, PAD("[1, 1, 8]"), NULL,
     {"            C[vi, vj] = C[vi, vj] + A_pad[vi, vk] * B_pad[vk, vj]\n"},
     true},
    /* Split first: the iter grows, the loops bound by a sum do not. */
    {"matmul-split", MATMUL,
     "b0 = sch.get_block(name=\"C\")\nl1, l2, l3 = sch.get_loops(block=b0)\n"
     "l4, l5 = sch.split(loop=l1, factors=[2, 3])\n"
     "sch.pad_einsum(block=b0, padding=[4, 1, 1])\n",
     NULL, {"            vi = T.axis.spatial(8, i_0 * 3 + i_1)\n"}, true},
    /* Nothing to pad: the program is unchanged. */
    {"matmul-no-op", MATMUL, PAD("[2, 2, 5]"), NULL,
     {"    for i, j, k in T.grid(6, 4, 5):\n"}, true},

    {"short", MATMUL, PAD("[4, 4]"),
     "pad_einsum: the padding of block 'C' must be a list of 3 positive "
     "integers, one per iter",
     {NULL}, false},
    {"zero", MATMUL, PAD("[4, 0, 4]"),
     "pad_einsum: the padding of block 'C' must be a list of 3 positive "
     "integers, one per iter",
     {NULL}, false},
    {"not-a-point", ELEMWISE("9", "vi + 1"), PAD("[4]"),
     "pad_einsum: block 'C' is not an einsum: its access to 'B' has an index "
     "that is not a variable or a constant",
     {NULL}, false},
    {"max-reduction",
     HEAD MM_PARAMS MM_BODY("T.max(C[vi, vj], A[vi, vk] + B[vk, vj])"),
     PAD("[1, 1, 4]"),
     "pad_einsum: block 'C' is not a sum of products over iter 'vk', so its "
     "padded points would change the result",
     {NULL}, false},
    {"partial-write", ELEMWISE("6", "vi"), PAD("[4]"),
     "pad_einsum: cannot pad buffer 'B' of block 'C': the block does not write "
     "all of it",
     {NULL}, false},
    {"shared-loop",
     HEAD "def main(A: T.Buffer((6,), \"int32\"), B: T.Buffer((6,), \"int32\"), "
          "D: T.Buffer((6,), \"int32\")):\n"
          "    for i in range(6):\n"
          "        with T.block(\"C\"):\n"
          "            vi = T.axis.remap(\"S\", [i])\n"
          "            B[vi] = A[vi] + 1\n"
          "        with T.block(\"D\"):\n"
          "            vi = T.axis.remap(\"S\", [i])\n"
          "            D[vi] = A[vi] * 2\n",
     PAD("[4]"),
     "pad_einsum: block 'C' shares its loops with other blocks; padding them "
     "would run those on padded points too",
     {NULL}, false},
    {"from-one",
     HEAD "def main(A: T.Buffer((10,), \"int32\"), B: T.Buffer((10,), "
          "\"int32\")):\n"
          "    for i in range(9):\n"
          "        with T.block(\"C\"):\n"
          "            vi = T.axis.spatial((1, 10), i + 1)\n"
          "            B[vi] = A[vi] + 1\n",
     PAD("[4]"),
     "pad_einsum: iter 'vi' of block 'C' does not start at 0; only iters from "
     "0 can be padded",
     {NULL}, false},
    {"in-place",
     HEAD "def main(A: T.Buffer((6,), \"int32\")):\n"
          "    for i in range(6):\n"
          "        with T.block(\"C\"):\n"
          "            vi = T.axis.remap(\"S\", [i])\n"
          "            A[vi] = A[vi] + 1\n",
     PAD("[4]"),
     "pad_einsum: block 'C' is not an einsum: it accesses buffer 'A' in two "
     "regions",
     {NULL}, false},
};

#define N_CASES (int)(sizeof cases / sizeof *cases)

int main(void) {
  for (int i = 0; i < N_CASES; i++)
    run_case(&cases[i]);
  return test_summary("schedule/pad_einsum");
}
