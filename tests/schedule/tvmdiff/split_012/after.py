# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((14, 4), "float32"), B: T.Buffer((14, 4), "float32")):
        T.func_attr({"global_symbol": "overlapped_access"})
        # with T.sblock("root"):
        for v0_0, v0_1, v0_2, v1, v2_0, v2_1, v2_2 in T.grid(3, 1, 3, 4, 8, 2, 1):
            with T.sblock("block"):
                i = T.axis.spatial(14, (v0_0 * 3 + v0_1 * 3 + v0_2) * 2 + v1)
                j = T.axis.spatial(4, v2_0 * 2 + v2_1 + v2_2)
                T.where((v0_0 + v0_1) * 3 + v0_2 < 6 and v2_0 * 2 + v2_1 + v2_2 < 4)
                T.reads(A[i, j])
                T.writes(B[i, j])
                B[i, j] = A[i, j] + T.float32(1.0)