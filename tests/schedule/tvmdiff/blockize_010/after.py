# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "elementwise_predicate"})
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        for i, j_0, j_1, j_2 in T.grid(128, 4, 1, 16):
            with T.sblock("B_o"):
                vi_o = T.axis.spatial(128, i)
                vj_o = T.axis.spatial(64, j_0 * 16 + j_2)
                T.reads(A[vi_o, vj_o * 2:vj_o * 2 + 2])
                T.writes(B[vi_o, vj_o * 2:vj_o * 2 + 2])
                for j_3 in range(2):
                    with T.sblock("B"):
                        vj_i = T.axis.spatial(2, j_3)
                        T.reads(A[vi_o, vj_o * 2 + vj_i])
                        T.writes(B[vi_o, vj_o * 2 + vj_i])
                        B[vi_o, vj_o * 2 + vj_i] = A[vi_o, vj_o * 2 + vj_i] * T.float32(2.0)
        for i, j in T.grid(128, 128):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.where(B[i, j] < T.float32(10.0))
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1.0)