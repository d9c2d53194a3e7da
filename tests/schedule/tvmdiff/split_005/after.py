# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128, 128), "float32"), B: T.Buffer((128, 128, 128), "float32")):
        T.func_attr({"global_symbol": "elementwise_with_opaque_block"})
        # with T.sblock("root"):
        for i, j_0, j_1, j_2, j_3, k in T.grid(128, 1, 16, 1, 8, 128):
            with T.sblock("opaque"):
                T.reads(A[i, (j_0 * 16 + j_1 + j_2) * 8 + j_3, k])
                T.writes(B[i, (j_0 * 16 + j_1 + j_2) * 8 + j_3, k])
                with T.sblock("B"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 128 + j_1 * 8 + j_2 * 8 + j_3)
                    vk = T.axis.spatial(128, k)
                    T.reads(A[vi, vj, vk])
                    T.writes(B[vi, vj, vk])
                    B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2.0)