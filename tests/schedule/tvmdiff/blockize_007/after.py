# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "element_wise_split_predicate"})
        # with T.sblock("root"):
        for i in range(128):
            with T.sblock("B_o"):
                vi_o = T.axis.spatial(128, i)
                vj_o = T.axis.spatial(1, 0)
                T.reads(A[vi_o, 0:128])
                T.writes(B[vi_o, 0:128])
                for j_0, j_1 in T.grid(13, 10):
                    with T.sblock("B"):
                        vj_i = T.axis.spatial(128, j_0 * 10 + j_1)
                        T.where(j_0 * 10 + j_1 < 128)
                        T.reads(A[vi_o, vj_i])
                        T.writes(B[vi_o, vj_i])
                        B[vi_o, vj_i] = A[vi_o, vj_i] * T.float32(2.0)