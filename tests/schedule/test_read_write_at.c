/* read_at and write_at: each allowed script must verify, print the copy
 * block TVM prints (checked as fragments of the printed module) and compute
 * what the unscheduled program computes on random inputs (the interpreter
 * is the oracle); each refused one must give exactly the message recorded
 * here. */
#include "prim_case.h"

#define HEAD "# from tvm.script import tir as T\n@T.prim_func\n"

static const char matmul[] =
    HEAD "def main(A: T.Buffer((16, 16), \"int32\"), B: T.Buffer((16, 16), \"int32\"), "
         "C: T.Buffer((16, 16), \"int32\")):\n"
         "    for i, j, k in T.grid(16, 16, 16):\n"
         "        with T.block(\"C\"):\n"
         "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
         "            with T.init():\n"
         "                C[vi, vj] = 0\n"
         "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

/* Under one loop: a block reads X, the next writes it. */
static const char read_then_write[] =
    HEAD "def main(X: T.Buffer((8,), \"int32\"), Y: T.Buffer((8,), \"int32\")):\n"
         "    for i in range(8):\n"
         "        with T.block(\"r\"):\n"
         "            vi = T.axis.spatial(8, i)\n"
         "            Y[vi] = X[vi] + 1\n"
         "        with T.block(\"w\"):\n"
         "            vi = T.axis.spatial(8, i)\n"
         "            X[vi] = Y[vi] * 2\n";

static const char inplace[] =
    HEAD "def main(A: T.Buffer((10,), \"int32\"), B: T.Buffer((10,), \"int32\")):\n"
         "    for i in range(10):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial(10, i)\n"
         "            B[vi] = B[vi] + A[vi]\n";

static const char elementwise[] =
    HEAD "def main(A: T.Buffer((8, 8), \"int32\"), C: T.Buffer((8, 8), \"int32\")):\n"
         "    for i, j in T.grid(8, 8):\n"
         "        with T.block(\"C\"):\n"
         "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
         "            C[vi, vj] = A[vi, vj] + 1\n";

/* The guard leaves B[8] and B[9] unwritten. */
static const char guarded[] =
    HEAD "def main(A: T.Buffer((10,), \"int32\"), B: T.Buffer((10,), \"int32\")):\n"
         "    for i in range(10):\n"
         "        with T.block(\"B\"):\n"
         "            vi = T.axis.spatial(10, i)\n"
         "            T.where(i < 8)\n"
         "            B[vi] = A[vi]\n";

#define MM "b0 = sch.get_block(name=\"C\")\nl1, l2, l3 = sch.get_loops(block=b0)\n"
#define MM_SPLIT MM "l4, l5 = sch.split(loop=l3, factors=[None, 4])\n"

static const prim_case cases[] = {
    {"read-at-split", matmul,
     MM_SPLIT "b6 = sch.read_at(loop=l4, block=b0, read_buffer_index=0, "
     "storage_scope=\"shared\")\n",
     NULL,
     {"A_shared = T.alloc_buffer((16, 16), \"int32\", scope=\"shared\")",
      "with T.block(\"A_shared\"):", "v0, v1 = T.axis.remap(\"SS\", [i, k_0])",
      "T.reads(A[v0, v1 * 4:v1 * 4 + 4])", "T.block_attr({\"auto_copy\": True})",
      "A_shared[v0 + ax0, v1 * 4 + ax1] = A[v0 + ax0, v1 * 4 + ax1]"}, true},
    {"read-at-outer", matmul,
     MM "b4 = sch.read_at(loop=l1, block=b0, read_buffer_index=1, "
     "storage_scope=\"local\")\n",
     NULL,
     {"with T.block(\"B_local\"):", "for ax0, ax1 in T.grid(16, 16):",
      "T.reads(A[vi, vk], B_local[vk, vj])", NULL}, true},
    {"write-at-reduction", matmul,
     MM "b4 = sch.write_at(loop=l2, block=b0, write_buffer_index=0, "
     "storage_scope=\"local\")\n",
     NULL,
     {"with T.block(\"C_local\"):", "v0, v1 = T.axis.remap(\"SS\", [i, j])",
      "T.reads(C_local[v0, v1])", "C[v0 + ax0, v1 + ax1] = C_local[v0 + ax0, v1 + ax1]",
      "C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]", NULL}, true},
    {"not-under-loop", read_then_write,
     "b0 = sch.get_block(name=\"r\")\nl1, = sch.get_loops(block=b0)\n"
     "b2 = sch.get_block(name=\"w\")\n"
     "l3 = sch.fuse(l1)\n"
     "b4 = sch.add_unit_loop(block_or_loop=b2)\n"
     "b5 = sch.read_at(loop=b4, block=b0, read_buffer_index=0, "
     "storage_scope=\"local\")\n",
     "read_at: block 'r' is not under loop 'u'", {NULL}, false},
    {"index", matmul,
     MM "b4 = sch.read_at(loop=l1, block=b0, read_buffer_index=3, "
     "storage_scope=\"local\")\n",
     "read_at: block 'C' reads 2 buffers, so the index must be in [0, 2), not 3",
     {NULL}, false},
    {"scope", matmul,
     MM "b4 = sch.read_at(loop=l1, block=b0, read_buffer_index=0, "
     "storage_scope=\"nowhere\")\n",
     "read_at: 'nowhere' is not a storage scope", {NULL}, false},
    {"written-after-read", read_then_write,
     "b0 = sch.get_block(name=\"r\")\nl1, = sch.get_loops(block=b0)\n"
     "b2 = sch.read_at(loop=l1, block=b0, read_buffer_index=0, "
     "storage_scope=\"local\")\n",
     "read_at: buffer 'X' is written under loop 'i' after it is first read "
     "there; the copy would miss what is written", {NULL}, false},
    {"out-of-bounds", inplace,
     "b0 = sch.get_block(name=\"B\")\nl1, = sch.get_loops(block=b0)\n"
     "l2, l3 = sch.split(loop=l1, factors=[None, 4])\n"
     "b4 = sch.read_at(loop=l2, block=b0, read_buffer_index=1, "
     "storage_scope=\"local\")\n",
     "read_at: the part of buffer 'A' that loop 'i_0' touches may leave the "
     "buffer in dimension 0; the copy would access it out of bounds", {NULL}, false},
    {"write-at-update", inplace,
     "b0 = sch.get_block(name=\"B\")\nl1, = sch.get_loops(block=b0)\n"
     "b2 = sch.write_at(loop=l1, block=b0, write_buffer_index=0, "
     "storage_scope=\"local\")\n",
     "write_at: block 'B' under loop 'i' reads the buffer, and would read the "
     "copy before it holds the buffer's values", {NULL}, false},
    /* Each partition's loop covers part of the block's iters, but each
     * iteration writes the one point it copies back. */
    {"write-at-point", elementwise,
     "b0 = sch.get_block(name=\"C\")\nl1, l2 = sch.get_loops(block=b0)\n"
     "l3 = sch.fuse(l1, l2)\n"
     "b4 = sch.blockize(target=l3)\n"
     "l5, l6 = sch.loop_partition(loop=l3, factors=[9, None])\n"
     "b7 = sch.get_block(name=\"C_i_j_fused1\")\n"
     "b8 = sch.write_at(loop=l6, block=b7, write_buffer_index=0, "
     "storage_scope=\"shared\")\n",
     NULL,
     {"with T.block(\"C_shared\"):",
      "C[v0 // 8 + ax0, v0 % 8 + ax1] = C_shared[v0 // 8 + ax0, v0 % 8 + ax1]",
      NULL}, true},
    {"write-at-predicate", guarded,
     "b0 = sch.get_block(name=\"B\")\nl1, = sch.get_loops(block=b0)\n"
     "b2 = sch.write_at(loop=l1, block=b0, write_buffer_index=0, "
     "storage_scope=\"local\")\n",
     "write_at: block 'B' under loop 'i' does not write every point of the "
     "part the write-back copies (it has a predicate); the copy would write "
     "back elements nobody wrote", {NULL}, false},
};
#define N_CASES ((int)(sizeof cases / sizeof *cases))


int main(void) {
  for (int i = 0; i < N_CASES; i++)
    run_case(&cases[i]);
  return test_summary("schedule/read_write_at");
}
