# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
        T.func_attr({"global_symbol": "rowsum_transformed"})
        # with T.sblock("root"):
        with T.sblock("B_o"):
            vi_o = T.axis.spatial(1, 0)
            vk_o = T.axis.reduce(1, 0)
            T.reads(A[0:128, 0:128])
            T.writes(B[0:128])
            with T.init():
                for io, ii_ko_fused in T.grid(32, 128):
                    with T.sblock("B_init"):
                        vi_i_init = T.axis.spatial(128, io * 4 + ii_ko_fused // 32)
                        T.reads()
                        T.writes(B[vi_i_init])
                        B[vi_i_init] = T.float32(0.0)
            for io, ii_ko_fused, ki in T.grid(32, 128, 4):
                with T.sblock("B"):
                    vi_i = T.axis.spatial(128, io * 4 + ii_ko_fused // 32)
                    vk_i = T.axis.reduce(128, ii_ko_fused % 32 * 4 + ki)
                    T.reads(B[vi_i], A[vi_i, vk_i])
                    T.writes(B[vi_i])
                    B[vi_i] = B[vi_i] + A[vi_i, vk_i]