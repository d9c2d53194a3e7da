# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "transformed_matmul"})
        # with T.sblock("root"):
        for i0, i1, i2_outer in T.grid(128, 128, 4):
            with T.sblock("update_i2_inner_outer_common"):
                T.reads()
                T.writes()
                with T.sblock("update_i2_inner_outer0_partition"):
                    T.reads()
                    T.writes()
                    for i2_inner_outer0, i2_inner_inner in T.grid(7, 4):
                        with T.sblock("update_i2_inner_outer0"):
                            vi, vj = T.axis.remap("SS", [i0, i1])
                            vk = T.axis.reduce(128, i2_outer * 32 + i2_inner_outer0 * 4 + i2_inner_inner)
                            T.reads(A[vi, vk], B[vj, vk])
                            T.writes(C[vi, vj])
                            with T.init():
                                C[vi, vj] = T.float32(0.0)
                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
                with T.sblock("update_i2_inner_outer1_partition"):
                    T.reads()
                    T.writes()
                    for i2_inner_outer1 in range(7, 8):
                        for i2_inner_inner in range(4):
                            with T.sblock("update_i2_inner_outer1"):
                                vi, vj = T.axis.remap("SS", [i0, i1])
                                vk = T.axis.reduce(128, i2_outer * 32 + i2_inner_outer1 * 4 + i2_inner_inner)
                                T.reads(A[vi, vk], B[vj, vk])
                                T.writes(C[vi, vj])
                                with T.init():
                                    C[vi, vj] = T.float32(0.0)
                                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]