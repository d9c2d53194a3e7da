/* The built-in tensor-core intrinsics: CUDA's warp matrix operations (wmma)
 * on 16 x 16 x 16 tiles, under the names TVM gives them, so that schedules
 * written for TVM tensorize with them unchanged.
 *
 * A fragment is a warp's tile in registers. Its buffer (scope
 * wmma.matrix_a, wmma.matrix_b or wmma.accumulator) is only ever touched
 * through these calls, which name a fragment by the buffer's data and an
 * index: the tile's position among the buffer's 16 x 16 tiles, row by row.
 * The CUDA backend declares such a buffer as an array of fragments and the
 * interpreter keeps each tile at index * 256, so neither needs the buffer's
 * element layout. Every call is made by the whole warp: the lowering runs
 * it in all 32 lanes of threadIdx.x. */
#include "schedule/sched_impl.h"

/* The index of the fragment a 16 x 16 view F (strides F_s0, F_s1) starts. */
#define FRAG(F)                                                              \
  F ".elem_offset // " F "_s0 // 16 * (" F "_s0 // 16) + " F                 \
  ".elem_offset % " F "_s0 // 16"

/* A pointer to the corner of view X, as TVM's access_ptr writes it. */
#define PTR(X, DT, RW)                                                       \
  "T.tvm_access_ptr(T.type_annotation(\"" DT "\"), " X ".data, " X           \
  ".elem_offset, " X "_s0 * 16, " RW ")"

#define VIEW(X, V, DT, SCOPE)                                                \
  "    " X " = T.match_buffer(" V ", (16, 16), \"" DT "\", strides=(" X      \
  "_s0, " X "_s1), offset_factor=16, scope=\"" SCOPE "\")\n"

#define ROOT(READS, WRITES)                                                  \
  "    with T.block(\"root\"):\n"                                            \
  "        T.reads(" READS ")\n"                                             \
  "        T.writes(" WRITES ")\n"

/* C = A, element by element: a load into a fragment or a store out of one. */
#define COPY_DESC(NAME, DT, FROM, TO)                                        \
  "@T.prim_func\n"                                                           \
  "def " NAME "_desc(a: T.handle, c: T.handle):\n"                           \
  VIEW("A", "a", DT, FROM) VIEW("C", "c", DT, TO)                            \
  ROOT("A[0:16, 0:16]", "C[0:16, 0:16]")                                     \
  "        for i, j in T.grid(16, 16):\n"                                    \
  "            with T.block(\"copy\"):\n"                                    \
  "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"                  \
  "                T.reads(A[vi, vj])\n"                                     \
  "                T.writes(C[vi, vj])\n"                                    \
  "                C[vi, vj] = A[vi, vj]\n"

#define LOAD_IMPL(NAME, DT, FROM, TO, LAYOUT)                                \
  "@T.prim_func\n"                                                           \
  "def " NAME "_impl(a: T.handle, c: T.handle):\n"                           \
  VIEW("A", "a", DT, FROM) VIEW("C", "c", DT, TO)                            \
  ROOT("A[0:16, 0:16]", "C[0:16, 0:16]")                                     \
  "        T.evaluate(T.tvm_load_matrix_sync(C.data, 16, 16, 16, " FRAG("C")  \
  ", " PTR("A", DT, "1") ", A_s0, \"" LAYOUT "\"))\n"

#define STORE_IMPL(NAME, DT, FROM, TO)                                       \
  "@T.prim_func\n"                                                           \
  "def " NAME "_impl(a: T.handle, c: T.handle):\n"                           \
  VIEW("A", "a", DT, FROM) VIEW("C", "c", DT, TO)                            \
  ROOT("A[0:16, 0:16]", "C[0:16, 0:16]")                                     \
  "        T.evaluate(T.tvm_store_matrix_sync(A.data, 16, 16, 16, " FRAG("A") \
  ", " PTR("C", DT, "2") ", C_s0, \"row_major\"))\n"

static const char fill_desc[] =
    "@T.prim_func\n"
    "def wmma_fill_16x16x16_f32_desc(c: T.handle):\n"
    VIEW("C", "c", "float32", "wmma.accumulator")
    ROOT("", "C[0:16, 0:16]")
    "        for i, j in T.grid(16, 16):\n"
    "            with T.block(\"init\"):\n"
    "                vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "                T.reads()\n"
    "                T.writes(C[vi, vj])\n"
    "                C[vi, vj] = T.float32(0)\n";

static const char fill_impl[] =
    "@T.prim_func\n"
    "def wmma_fill_16x16x16_f32_impl(c: T.handle):\n"
    VIEW("C", "c", "float32", "wmma.accumulator")
    ROOT("", "C[0:16, 0:16]")
    "        T.evaluate(T.tvm_fill_fragment(C.data, 16, 16, 16, " FRAG("C")
    ", T.float32(0)))\n";

/* C[i, j] += A[i, k] * B[k, j], or B[j, k] where B is transposed: a B
 * tile stored n by k, loaded column-major, is the k by n fragment. */
#define SYNC_DESC(NAME, B_AT)                                                \
  "@T.prim_func\n"                                                           \
  "def " NAME "_desc(a: T.handle, b: T.handle, c: T.handle):\n"              \
  VIEW("A", "a", "float16", "wmma.matrix_a")                                 \
  VIEW("B", "b", "float16", "wmma.matrix_b")                                 \
  VIEW("C", "c", "float32", "wmma.accumulator")                              \
  ROOT("C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16]", "C[0:16, 0:16]")       \
  "        for i, j, k in T.grid(16, 16, 16):\n"                             \
  "            with T.block(\"update\"):\n"                                  \
  "                vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"          \
  "                T.reads(C[vi, vj], A[vi, vk], B[" B_AT "])\n"             \
  "                T.writes(C[vi, vj])\n"                                    \
  "                C[vi, vj] = C[vi, vj] + T.Cast(\"float32\", A[vi, vk]) * " \
  "T.Cast(\"float32\", B[" B_AT "])\n"

#define SYNC_IMPL(NAME)                                                      \
  "@T.prim_func\n"                                                           \
  "def " NAME "_impl(a: T.handle, b: T.handle, c: T.handle):\n"              \
  VIEW("A", "a", "float16", "wmma.matrix_a")                                 \
  VIEW("B", "b", "float16", "wmma.matrix_b")                                 \
  VIEW("C", "c", "float32", "wmma.accumulator")                              \
  ROOT("C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16]", "C[0:16, 0:16]")       \
  "        T.evaluate(T.tvm_mma_sync(C.data, " FRAG("C") ", A.data, "         \
  FRAG("A") ", B.data, " FRAG("B") ", C.data, " FRAG("C") "))\n"

#define LOAD_A "wmma_load_16x16x16_f16_a_shared"
#define LOAD_B "wmma_load_16x16x16_f16_b_shared"
#define LOAD_BT "wmma_load_16x16x16_f16_b_trans_shared"
#define SYNC "wmma_sync_16x16x16_f16f16f32"
#define SYNC_T "wmma_sync_16x16x16_f16f16f32_trans"
#define STORE_G "wmma_store_16x16x16_f32_global"
#define STORE_S "wmma_store_16x16x16_f32_shared"

const loom_sched_intrin sched_intrins_wmma[] = {
    {LOAD_A, COPY_DESC(LOAD_A, "float16", "shared", "wmma.matrix_a"),
     LOAD_IMPL(LOAD_A, "float16", "shared", "wmma.matrix_a", "row_major")},
    {LOAD_B, COPY_DESC(LOAD_B, "float16", "shared", "wmma.matrix_b"),
     LOAD_IMPL(LOAD_B, "float16", "shared", "wmma.matrix_b", "row_major")},
    {LOAD_BT, COPY_DESC(LOAD_BT, "float16", "shared", "wmma.matrix_b"),
     LOAD_IMPL(LOAD_BT, "float16", "shared", "wmma.matrix_b", "col_major")},
    {"wmma_fill_16x16x16_f32", fill_desc, fill_impl},
    {SYNC, SYNC_DESC(SYNC, "vk, vj"), SYNC_IMPL(SYNC)},
    {SYNC_T, SYNC_DESC(SYNC_T, "vj, vk"), SYNC_IMPL(SYNC_T)},
    {STORE_G, COPY_DESC(STORE_G, "float32", "wmma.accumulator", "global"),
     STORE_IMPL(STORE_G, "float32", "wmma.accumulator", "global")},
    {STORE_S, COPY_DESC(STORE_S, "float32", "wmma.accumulator", "shared"),
     STORE_IMPL(STORE_S, "float32", "wmma.accumulator", "shared")},
};
const int sched_n_intrins_wmma =
    (int)(sizeof sched_intrins_wmma / sizeof *sched_intrins_wmma);
