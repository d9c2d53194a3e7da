# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((127, 128), "float32"), B: T.Buffer((127, 128), "float32")):
        T.func_attr({"global_symbol": "elementwise_not_affine"})
        # with T.sblock("root"):
        for i_0, i_1, i_2 in T.grid(1, 2, 2):
            for j, k in T.grid(T.min(31, 126 - ((i_0 * 2 + i_1) * 2 + i_2) * 32) + 1, 128):
                with T.sblock("B"):
                    vi = T.axis.spatial(127, ((i_0 * 2 + i_1) * 2 + i_2) * 32 + j)
                    vj = T.axis.spatial(128, k)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj]