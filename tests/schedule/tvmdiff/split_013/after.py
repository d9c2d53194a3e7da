# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((14, 4), "float32"), B: T.Buffer((14, 4), "float32")):
        T.func_attr({"global_symbol": "non_affine_func"})
        # with T.sblock("root"):
        for v0, v1_0, v1_1, v1_2, v2 in T.grid(6, 1, 6, 4, 4):
            with T.sblock("block"):
                i = T.axis.spatial(14, v0 * v0 + ((v1_0 * 6 + v1_1) * 4 + v1_2))
                j = T.axis.spatial(4, v2)
                T.where((v1_0 * 6 + v1_1) * 4 + v1_2 < 4)
                T.reads(A[i, j])
                T.writes(B[i, j])
                B[i, j] = A[i, j] + T.float32(1.0)