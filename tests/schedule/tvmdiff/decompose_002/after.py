# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
        T.func_attr({"global_symbol": "rowsum_transformed"})
        # with T.sblock("root"):
        for io_init, ii_ko_fused_init in T.grid(32, 128):
            with T.sblock("B_init"):
                vi = T.axis.spatial(128, io_init * 4 + ii_ko_fused_init // 32)
                T.reads()
                T.writes(B[vi])
                B[vi] = T.float32(0.0)
        for io, ii_ko_fused, ki in T.grid(32, 128, 4):
            with T.sblock("B_update"):
                vi = T.axis.spatial(128, io * 4 + ii_ko_fused // 32)
                vk = T.axis.reduce(128, ii_ko_fused % 32 * 4 + ki)
                T.reads(B[vi], A[vi, vk])
                T.writes(B[vi])
                B[vi] = B[vi] + A[vi, vk]