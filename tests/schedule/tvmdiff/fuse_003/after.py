# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), D: T.Buffer((8, 8), "float32")):
        T.func_attr({"global_symbol": "test_func"})
        # with T.sblock("root"):
        temp = T.sblock_alloc_buffer((8, 8))
        for i, j, k in T.grid(8, 8, 8):
            with T.sblock("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vj, vk])
                T.writes(temp[vi, vj])
                with T.init():
                    temp[vi, vj] = T.float32(0.0)
                temp[vi, vj] = temp[vi, vj] + A[vi, vk] * B[vj, vk]
        for i_j_fused_0, i_j_fused_1, i_j_fused_2, i_j_fused_3 in T.grid(2, 1, 8, 4):
            with T.sblock("clipping"):
                vi = T.axis.spatial(8, (i_j_fused_0 * 32 + i_j_fused_1 * 32 + i_j_fused_2 * 4 + i_j_fused_3) // 8)
                vj = T.axis.spatial(8, (i_j_fused_0 * 32 + i_j_fused_1 * 32 + i_j_fused_2 * 4 + i_j_fused_3) % 8)
                T.reads(temp[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = T.min(T.float32(5.0), T.max(temp[vi, vj], T.float32(-5.0)))