/* fuse_reduction_epilogue: a bias epilogue folds into the sum and the
 * program computes what it computed before (the interpreter is the oracle,
 * int32 so results compare exactly); a clip or relu epilogue folds the way
 * TVM folds it (checked on the printed block); and every refusal names the
 * blocks and the property that forbids the fusion. */
#include "prim_case.h"

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"
#define PARAMS                                                                 \
  "def main(A: T.Buffer((6, 5), \"int32\"), B: T.Buffer((4, 5), \"int32\"), "  \
  "C: T.Buffer((6, 4), \"int32\"), D: T.Buffer((6, 4), \"int32\")):\n"
#define TEMP "    temp = T.alloc_buffer((6, 4), \"int32\")\n"
#define MATMUL(init, update)                                                   \
  "    for i, j, k in T.grid(6, 4, 5):\n"                                      \
  "        with T.block(\"matmul\"):\n"                                        \
  "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"                \
  "            with T.init():\n"                                               \
  "                temp[vi, vj] = " init "\n"                                  \
  "            temp[vi, vj] = " update "\n"
#define SUM MATMUL("0", "temp[vi, vj] + A[vi, vk] * B[vj, vk]")
#define EPILOGUE(value)                                                        \
  "    for i, j in T.grid(6, 4):\n"                                            \
  "        with T.block(\"epi\"):\n"                                           \
  "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"                        \
  "            D[vi, vj] = " value "\n"
#define FUSE                                                                   \
  "b0 = sch.get_block(name=\"matmul\")\nb1 = sch.get_block(name=\"epi\")\n"   \
  "sch.fuse_reduction_epilogue(reduction_block=b0, epilogue_block=b1)\n"

static const prim_case cases[] = {
    {"bias", HEAD PARAMS TEMP SUM EPILOGUE("temp[vi, vj] + C[vi, vj]"), FUSE,
     NULL, {"                D[vi, vj] = C[vi, vj]\n"}, true},
    {"bias-left", HEAD PARAMS TEMP SUM EPILOGUE("C[vi, vj] + temp[vi, vj]"),
     FUSE, NULL, {"            D[vi, vj] = D[vi, vj] + A[vi, vk] * B[vj, vk]\n"},
     true},
    /* With the loops split first: the fused block keeps the reduction's. */
    {"bias-split", HEAD PARAMS TEMP SUM EPILOGUE("temp[vi, vj] + C[vi, vj]"),
     "b0 = sch.get_block(name=\"matmul\")\nl1, l2, l3 = sch.get_loops(block=b0)\n"
     "l4, l5 = sch.split(loop=l3, factors=[None, 2])\n"
     "b1 = sch.get_block(name=\"epi\")\n"
     "sch.fuse_reduction_epilogue(reduction_block=b0, epilogue_block=b1)\n",
     NULL, {"            T.where(k_0 * 2 + k_1 < 5)\n"}, true},
    /* A relu or a clip is applied at every step, as TVM applies it. */
    {"relu", HEAD PARAMS TEMP SUM EPILOGUE("T.max(temp[vi, vj] + C[vi, vj], 0)"),
     FUSE, NULL,
     {"            D[vi, vj] = T.max(D[vi, vj] + A[vi, vk] * B[vj, vk], 0)\n"},
     false},
    {"clip", HEAD PARAMS TEMP SUM EPILOGUE("T.min(T.max(temp[vi, vj], -3), 3)"),
     FUSE, NULL, {"                D[vi, vj] = 0\n"}, false},

    {"used-twice",
     HEAD PARAMS TEMP SUM EPILOGUE("temp[vi, vj] + C[vi, vj] + temp[vi, vj]"),
     FUSE,
     "fuse_reduction_epilogue: block 'epi' cannot be fused into 'matmul': it "
     "must load 'temp' exactly once but loads it 2 times",
     {NULL}, false},
    {"scaled", HEAD PARAMS TEMP SUM EPILOGUE("temp[vi, vj] * 2 + C[vi, vj]"),
     FUSE,
     "fuse_reduction_epilogue: block 'epi' cannot be fused into 'matmul': it "
     "multiplies, divides or takes a remainder of 'temp'; only additions, min "
     "and max may combine the reduction's result",
     {NULL}, false},
    {"transposed", HEAD PARAMS TEMP SUM EPILOGUE("temp[vj % 4, vi % 4] + 1"),
     FUSE,
     "fuse_reduction_epilogue: block 'epi' cannot be fused into 'matmul': it "
     "loads 'temp' at another point than the reduction stores",
     {NULL}, false},
    {"max-reduction",
     HEAD PARAMS TEMP MATMUL("-100", "T.max(temp[vi, vj], A[vi, vk])")
         EPILOGUE("temp[vi, vj] + C[vi, vj]"),
     FUSE,
     "fuse_reduction_epilogue: block 'matmul' is not a sum from zero: its init "
     "is not a store of zero",
     {NULL}, false},
    {"not-a-reduction",
     HEAD PARAMS TEMP SUM EPILOGUE("temp[vi, vj] + C[vi, vj]"),
     "b0 = sch.get_block(name=\"epi\")\nb1 = sch.get_block(name=\"matmul\")\n"
     "sch.fuse_reduction_epilogue(reduction_block=b0, epilogue_block=b1)\n",
     "fuse_reduction_epilogue: block 'epi' is not a reduction block (an init, "
     "spatial and reduction iters with affine bindings)",
     {NULL}, false},
    {"output-block",
     HEAD "def main(A: T.Buffer((6, 5), \"int32\"), B: T.Buffer((4, 5), "
          "\"int32\"), C: T.Buffer((6, 4), \"int32\"), D: T.Buffer((6, 4), "
          "\"int32\"), temp: T.Buffer((6, 4), \"int32\")):\n" SUM
              EPILOGUE("temp[vi, vj] + C[vi, vj]"),
     FUSE,
     "fuse_reduction_epilogue: block 'matmul' is an output block: 'temp' is a "
     "parameter of the function",
     {NULL}, false},
    {"between",
     HEAD PARAMS TEMP SUM
     "    for i, j in T.grid(6, 4):\n"
     "        with T.block(\"bump\"):\n"
     "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
     "            C[vi, vj] = C[vi, vj] + 1\n" EPILOGUE("temp[vi, vj] + C[vi, vj]"),
     FUSE,
     "fuse_reduction_epilogue: block 'bump', between 'matmul' and 'epi', "
     "accesses what the fused block would read or write",
     {NULL}, false},
    {"predicate",
     HEAD PARAMS TEMP SUM
     "    for i, j in T.grid(6, 4):\n"
     "        with T.block(\"epi\"):\n"
     "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
     "            T.where(i < 3)\n"
     "            D[vi, vj] = temp[vi, vj] + C[vi, vj]\n",
     FUSE,
     "fuse_reduction_epilogue: block 'epi' cannot be fused into 'matmul': it "
     "has a predicate",
     {NULL}, false},
    {"bad-order", HEAD PARAMS TEMP SUM EPILOGUE("temp[vi, vj] + C[vi, vj]"),
     "b0 = sch.get_block(name=\"matmul\")\n"
     "sch.fuse_reduction_epilogue(reduction_block=b0, epilogue_block=b0)\n",
     "fuse_reduction_epilogue: blocks 'matmul' and 'matmul' are not two blocks "
     "of one scope",
     {NULL}, false},
};

#define N_CASES (int)(sizeof cases / sizeof *cases)

int main(void) {
  for (int i = 0; i < N_CASES; i++)
    run_case(&cases[i]);
  return test_summary("schedule/epilogue");
}
