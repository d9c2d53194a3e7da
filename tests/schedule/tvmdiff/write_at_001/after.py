# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), D: T.Buffer((1, 2, 1), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        B_shared = T.sblock_alloc_buffer((128, 128), scope="shared")
        for i_0 in range(T.int64(8)):
            for j_0, i_1, j_1 in T.grid(T.int64(8), T.int64(16), T.int64(16)):
                with T.sblock("B"):
                    vi = T.axis.spatial(T.int64(128), i_0 * T.int64(16) + i_1)
                    vj = T.axis.spatial(T.int64(128), j_0 * T.int64(16) + j_1)
                    T.reads(A[vi, vj])
                    T.writes(B_shared[vi, vj])
                    B_shared[vi, vj] = A[vi, vj] * T.float32(2.0)
            with T.sblock("B_shared"):
                v0 = T.axis.spatial(T.int64(8), i_0)
                T.reads(B_shared[v0 * T.int64(16):v0 * T.int64(16) + T.int64(16), T.int64(0):T.int64(128)])
                T.writes(B[v0 * T.int64(16):v0 * T.int64(16) + T.int64(16), T.int64(0):T.int64(128)])
                T.sblock_attr({"auto_copy": True})
                for ax0, ax1 in T.grid(16, 128):
                    B[v0 * T.int64(16) + T.Cast("int64", ax0), T.Cast("int64", ax1)] = B_shared[v0 * T.int64(16) + T.Cast("int64", ax0), T.Cast("int64", ax1)]
        for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(2), T.int64(1)):
            with T.sblock("D"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(B[v0, v1])
                T.writes(D[v0, v1, v2])
                D[v0, v1, v2] = B[v0, v1] + T.float32(1.0)