# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
        T.func_attr({"global_symbol": "rowsum_not_quasi_affine"})
        # with T.sblock("root"):
        for i_k_fused_0, i_k_fused_1 in T.grid(128, 16):
            with T.sblock("B"):
                vi = T.axis.spatial(128, (i_k_fused_0 * 16 + i_k_fused_1) // 16)
                vk = T.axis.reduce(128, (i_k_fused_0 * 16 + i_k_fused_1) % 16 * ((i_k_fused_0 * 16 + i_k_fused_1) % 16) // 2)
                T.reads(A[vi, vk])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk]