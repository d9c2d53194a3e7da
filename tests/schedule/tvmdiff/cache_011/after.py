# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), D: T.Buffer((1, 2, 1), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        A_reindex = T.sblock_alloc_buffer((T.int64(128), T.int64(128)), elem_offset=0)
        D_shared = T.sblock_alloc_buffer((T.int64(1), T.int64(2), T.int64(1)), elem_offset=0, scope="shared")
        for ax0, ax1 in T.grid(T.int64(128), T.int64(128)):
            with T.sblock("A_reindex_reindex"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v0, v1])
                T.writes(A_reindex[v0, v1])
                A_reindex[v0, v1] = A[v0, v1]
        for i_0, j_0, i_1, j_1 in T.grid(T.int64(8), T.int64(8), T.int64(16), T.int64(16)):
            with T.sblock("B"):
                vi = T.axis.spatial(T.int64(128), i_0 * T.int64(16) + i_1)
                vj = T.axis.spatial(T.int64(128), j_0 * T.int64(16) + j_1)
                T.reads(A_reindex[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A_reindex[vi, vj] * T.float32(2.0)
        for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(2), T.int64(1)):
            with T.sblock("D"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(B[v0, v1])
                T.writes(D_shared[v0, v1, v2])
                D_shared[v0, v1, v2] = B[v0, v1] + T.float32(1.0)
        for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(2), T.int64(1)):
            with T.sblock("D_shared"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(D_shared[v0, v1, v2])
                T.writes(D[v0, v1, v2])
                D[v0, v1, v2] = D_shared[v0, v1, v2]