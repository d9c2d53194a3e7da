# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((32, 4, 128), "float32"), B: T.Buffer((32, 4), "float32")):
        T.func_attr({"global_symbol": "rowsum_blockized"})
        # with T.sblock("root"):
        for i0, i2_0 in T.grid(32, 16):
            with T.sblock("blockized_B"):
                io, ko = T.axis.remap("SR", [i0, i2_0])
                T.reads(A[io, 0:4, ko * 8:ko * 8 + 8])
                T.writes(B[io, 0:4])
                with T.init():
                    for i1 in range(4):
                        with T.sblock("B_init"):
                            ii_init = T.axis.spatial(4, i1)
                            T.reads()
                            T.writes(B[io, ii_init])
                            B[io, ii_init] = T.float32(0.0)
                for i1_1, i2_1_0, i2_1_1 in T.grid(4, 2, 4):
                    with T.sblock("B"):
                        ii = T.axis.spatial(4, i1_1)
                        k = T.axis.reduce(128, i2_1_0 * 4 + i2_1_1 + ko * 8)
                        T.reads(B[io, ii], A[io, ii, k])
                        T.writes(B[io, ii])
                        B[io, ii] = B[io, ii] + A[io, ii, k]