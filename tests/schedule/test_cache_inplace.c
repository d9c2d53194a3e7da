/* cache_inplace: a block that updates a buffer in place works on a copy in
 * another scope, filled right before it and copied back right after it;
 * the program computes what it computed (the interpreter is the oracle),
 * the two stages share the copy's name yet each output names its own, and
 * each refusal names the block and what stops it. */
#include "prim_case.h"

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"
#define INPLACE                                                                \
  HEAD "def main(A: T.Buffer((16,), \"int32\"), B: T.Buffer((16,), "          \
       "\"int32\")):\n"                                                        \
       "    for i in range(16):\n"                                             \
       "        with T.block(\"update\"):\n"                                   \
       "            vi = T.axis.remap(\"S\", [i])\n"                           \
       "            B[vi] = B[vi] + A[vi]\n"
#define SCAN                                                                   \
  HEAD "def main(A: T.Buffer((16,), \"int32\"), B: T.Buffer((16,), "          \
       "\"int32\")):\n"                                                        \
       "    for i in range(15):\n"                                             \
       "        with T.block(\"scan\"):\n"                                     \
       "            vi = T.axis.remap(\"R\", [i])\n"                           \
       "            B[vi + 1] = B[vi] + A[vi + 1]\n"
#define GET "b0 = sch.get_block(name=\"update\")\n"

static const prim_case cases[] = {
    {"inplace", INPLACE,
     GET "b1, b2 = sch.cache_inplace(block=b0, read_buffer_index=0, "
         "storage_scope=\"local\")\n",
     NULL, {"            B_local[vi] = B_local[vi] + A[vi]\n"}, true},
    {"inplace-fill", INPLACE,
     GET "b1, b2 = sch.cache_inplace(block=b0, read_buffer_index=0, "
         "storage_scope=\"local\")\n",
     NULL, {"        for ax0 in range(1):\n"}, true},
    /* The copy's region follows the block's loop. */
    {"inplace-region", INPLACE,
     GET "b1, b2 = sch.cache_inplace(block=b0, read_buffer_index=0, "
         "storage_scope=\"shared\")\n",
     NULL, {"                v0 = T.axis.spatial(16, i + ax0)\n"}, true},
    /* A scan reads and writes different points of the buffer. */
    {"scan", SCAN,
     "b0 = sch.get_block(name=\"scan\")\nb1, b2 = sch.cache_inplace(block=b0, "
     "read_buffer_index=0, storage_scope=\"local\")\n",
     NULL, {"            B_local[vi + 1] = B_local[vi] + A[vi + 1]\n"}, true},
    /* The second output is the write-back stage, not the fill. */
    {"second-output", INPLACE,
     GET "b1, b2 = sch.cache_inplace(block=b0, read_buffer_index=0, "
         "storage_scope=\"local\")\nsch.annotate(block_or_loop=b2, "
         "ann_key=\"stage\", ann_val=\"back\")\n",
     NULL,
     {"                T.block_attr({\"stage\": \"back\"})\n"
      "                B[v0] = B_local[v0]\n"},
     true},

    {"read-only", INPLACE,
     GET "b1, b2 = sch.cache_inplace(block=b0, read_buffer_index=1, "
         "storage_scope=\"local\")\n",
     "cache_inplace: block 'update' reads buffer 'A' but does not write it; "
     "cache_inplace needs a block that updates it in place",
     {NULL}, false},
    {"bad-index", INPLACE,
     GET "b1, b2 = sch.cache_inplace(block=b0, read_buffer_index=2, "
         "storage_scope=\"local\")\n",
     "cache_inplace: block 'update' has 2 read regions; read_buffer_index 2 "
     "is not in [0, 2)",
     {NULL}, false},
    {"bad-scope", INPLACE,
     GET "b1, b2 = sch.cache_inplace(block=b0, read_buffer_index=0, "
         "storage_scope=\"nowhere\")\n",
     "cache_inplace: \"nowhere\" is not a storage scope", {NULL}, false},
};

#define N_CASES (int)(sizeof cases / sizeof *cases)

int main(void) {
  for (int i = 0; i < N_CASES; i++)
    run_case(&cases[i]);
  return test_summary("schedule/cache_inplace");
}
