/* cache_index: the index expressions a block repeats at least cse_thresh
 * times are computed once into index_var_<k> buffers by index_<k> blocks
 * before the block's nest; the program computes what it computed (the
 * interpreter is the oracle), and each refusal names the block and the
 * reason. */
#include "prim_case.h"

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"
#define GATHER(extra)                                                          \
  HEAD "def main(A: T.Buffer((8, 8), \"int32\"), B: T.Buffer((8, 8), "        \
       "\"int32\")):\n"                                                        \
       "    for i, j in T.grid(8, 8):\n"                                       \
       "        with T.block(\"C\"):\n"                                        \
       "            vi, vj = T.axis.remap(\"SS\", [i, j])\n" extra             \
       "            B[vi, vj] = A[(vi * 3 + 1) % 8, vj] + A[(vi * 3 + 1) % 8, " \
       "(vj + 1) % 8]\n"
#define CACHE(thresh)                                                          \
  "b0 = sch.get_block(name=\"C\")\nb1 = sch.cache_index(block=b0, "            \
  "storage_scope=\"global\", cse_thresh=" thresh ")\n"

static const prim_case cases[] = {
    {"twice", GATHER(""), CACHE("2"), NULL,
     {"            B[vi, vj] = A[index_var_0[vi], vj] + A[index_var_0[vi], "
      "(vj + 1) % 8]\n"},
     true},
    {"twice-stage", GATHER(""), CACHE("2"), NULL,
     {"            index_var_0[v0] = (v0 * 3 + 1) % 8\n"}, true},
    {"twice-buffer", GATHER(""), CACHE("2"), NULL,
     {"    index_var_0 = T.alloc_buffer((8,), \"int32\", strides=(1,))\n"}, true},
    /* Seen once is enough: the larger expressions come first. */
    {"once", GATHER(""),
     "b0 = sch.get_block(name=\"C\")\nb1, b2 = sch.cache_index(block=b0, "
     "storage_scope=\"global\", cse_thresh=1)\n",
     NULL,
     {"            B[vi, vj] = A[index_var_0[vi], vj] + A[index_var_0[vi], "
      "index_var_1[vj]]\n"},
     true},
    /* Nothing repeats often enough: the program stays as it is. */
    {"none", GATHER(""), CACHE("3"), NULL,
     {"            B[vi, vj] = A[(vi * 3 + 1) % 8, vj] + A[(vi * 3 + 1) % 8, "
      "(vj + 1) % 8]\n"},
     true},

    {"negative", GATHER(""), CACHE("-1"),
     "cache_index: cse_thresh must not be negative", {NULL}, false},
    {"bad-scope", GATHER(""),
     "b0 = sch.get_block(name=\"C\")\nb1 = sch.cache_index(block=b0, "
     "storage_scope=\"nowhere\", cse_thresh=2)\n",
     "cache_index: \"nowhere\" is not a storage scope", {NULL}, false},
    {"split", GATHER(""),
     "b0 = sch.get_block(name=\"C\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "l3, l4 = sch.split(loop=l1, factors=[2, 4])\n"
     "b1 = sch.cache_index(block=b0, storage_scope=\"global\", cse_thresh=2)\n",
     "cache_index: cannot cache an index of block 'C': an iter it uses is not "
     "bound to a loop of its own from 0",
     {NULL}, false},
    {"reduction",
     HEAD "def main(A: T.Buffer((8, 8), \"int32\"), B: T.Buffer((8,), "
          "\"int32\")):\n"
          "    for i, j in T.grid(8, 8):\n"
          "        with T.block(\"C\"):\n"
          "            vi, vj = T.axis.remap(\"SR\", [i, j])\n"
          "            with T.init():\n"
          "                B[vi] = 0\n"
          "            B[vi] = B[vi] + A[(vi * 3 + 1) % 8, vj]\n",
     /* The init stays; the body's indices are cached, as TVM does. */
     CACHE("1"), NULL,
     {"                B[vi] = 0\n",
      "            B[vi] = B[vi] + A[index_var_0[vi], vj]\n"},
     true},
};

#define N_CASES (int)(sizeof cases / sizeof *cases)

int main(void) {
  for (int i = 0; i < N_CASES; i++)
    run_case(&cases[i]);
  return test_summary("schedule/cache_index");
}
