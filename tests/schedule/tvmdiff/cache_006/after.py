# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((32, 4, 128), "float32"), B: T.Buffer((32, 4), "float32")):
        T.func_attr({"global_symbol": "rowsum_blockized"})
        # with T.sblock("root"):
        with T.sblock("blockized_B_o"):
            io_o = T.axis.spatial(1, 0)
            ko_o = T.axis.reduce(1, 0)
            T.reads(A[0:32, 0:4, 0:128])
            T.writes(B[0:32, 0:4])
            with T.init():
                for i0 in range(32):
                    with T.sblock("blockized_B_init"):
                        io_i_init = T.axis.spatial(32, i0)
                        T.reads()
                        T.writes(B[io_i_init, 0:4])
                        for i1 in range(4):
                            with T.sblock("B_init"):
                                ii_init = T.axis.spatial(4, i1)
                                T.reads()
                                T.writes(B[io_i_init, ii_init])
                                B[io_i_init, ii_init] = T.float32(0.0)
            for i0, i2_0 in T.grid(32, 16):
                with T.sblock("blockized_B"):
                    io_i, ko_i = T.axis.remap("SR", [i0, i2_0])
                    T.reads(B[io_i, 0:4], A[io_i, 0:4, ko_i * 8:ko_i * 8 + 8])
                    T.writes(B[io_i, 0:4])
                    A_global = T.sblock_alloc_buffer((1, 4, 8))
                    for ax0, ax1, ax2 in T.grid(1, 4, 8):
                        with T.sblock("A_global"):
                            v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                            T.reads(A[io_i + v0, v1, ko_i * 8 + v2])
                            T.writes(A_global[v0, v1, v2])
                            A_global[v0, v1, v2] = A[io_i + v0, v1, ko_i * 8 + v2]
                    for i1_1, i2_1 in T.grid(4, 8):
                        with T.sblock("B"):
                            ii = T.axis.spatial(4, i1_1)
                            k = T.axis.reduce(128, ko_i * 8 + i2_1)
                            T.reads(B[io_i, ii], A_global[0, ii, k - ko_i * 8])
                            T.writes(B[io_i, ii])
                            B[io_i, ii] = B[io_i, ii] + A_global[0, ii, k - ko_i * 8]