# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "transformed_matmul"})
        # with T.sblock("root"):
        for i0, i1, i2_outer_0, i2_outer_1, i2_outer_2, i2_inner_outer_0, i2_inner_outer_1, i2_inner_outer_2, i2_inner_outer_3, i2_inner_inner in T.grid(128, 128, 1, 4, 2, 2, 4, 1, 1, 4):
            with T.sblock("update"):
                vi, vj = T.axis.remap("SS", [i0, i1])
                vk = T.axis.reduce(128, (i2_outer_0 * 8 + i2_outer_1 * 2 + i2_outer_2) * 32 + i2_inner_outer_0 * 16 + i2_inner_outer_1 * 4 + i2_inner_outer_2 * 4 + i2_inner_outer_3 * 4 + i2_inner_inner)
                T.where((i2_outer_0 * 4 + i2_outer_1) * 2 + i2_outer_2 < 4)
                T.reads(A[vi, vk], B[vj, vk])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]