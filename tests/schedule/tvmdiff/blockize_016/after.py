# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
        T.func_attr({"global_symbol": "rowsum"})
        # with T.sblock("root"):
        for ax0 in range(128):
            with T.sblock("B_o"):
                v0_o = T.axis.reduce(128, ax0)
                v1_o = T.axis.spatial(1, 0)
                T.reads(A[0:128, v0_o])
                T.writes(B[0:128])
                with T.init():
                    for ax1_1, ax1_2 in T.grid(32, 9):
                        with T.sblock("B_init"):
                            v1_i_init = T.axis.spatial(128, ax1_1 * 9 + ax1_2)
                            T.where(ax1_1 * 9 + ax1_2 < 128)
                            T.reads()
                            T.writes(B[v1_i_init])
                            B[v1_i_init] = T.float32(0.0)
                for ax1_0, ax1_1, ax1_2 in T.grid(1, 32, 9):
                    with T.sblock("B"):
                        v1_i = T.axis.spatial(128, ax1_1 * 9 + ax1_2)
                        T.where(ax1_1 * 9 + ax1_2 < 128)
                        T.reads(B[v1_i], A[v1_i, v0_o])
                        T.writes(B[v1_i])
                        B[v1_i] = B[v1_i] + A[v1_i, v0_o]