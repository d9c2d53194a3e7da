# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128, 128), "float32"), B: T.Buffer((128, 128, 128), "float32")):
        T.func_attr({"global_symbol": "elementwise"})
        # with T.sblock("root"):
        for i in range(128):
            for j_0 in T.vectorized(32):
                for j_1, j_2 in T.grid(64, 1):
                    with T.sblock("B_o"):
                        vi_o = T.axis.spatial(128, i)
                        vj_o = T.axis.spatial(128, j_0 * 64 + j_1 + j_2)
                        vk_o = T.axis.spatial(1, 0)
                        T.where(j_0 * 64 + j_1 + j_2 < 128)
                        T.reads(A[vi_o, vj_o, 0:128])
                        T.writes(B[vi_o, vj_o, 0:128])
                        for k in range(128):
                            with T.sblock("B"):
                                vk_i = T.axis.spatial(128, k)
                                T.reads(A[vi_o, vj_o, vk_i])
                                T.writes(B[vi_o, vj_o, vk_i])
                                B[vi_o, vj_o, vk_i] = A[vi_o, vj_o, vk_i] * T.float32(2.0)