# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "element_wise"})
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i in range(128):
            with T.sblock("C_o"):
                vi_o = T.axis.spatial(128, i)
                vj_o = T.axis.spatial(1, 0)
                T.reads(B[vi_o, 0:128])
                T.writes(C[vi_o, 0:128])
                for j in range(128):
                    with T.sblock("C"):
                        vj_i = T.axis.spatial(128, j)
                        T.reads(B[vi_o, vj_i])
                        T.writes(C[vi_o, vj_i])
                        C[vi_o, vj_i] = B[vi_o, vj_i] + T.float32(1.0)