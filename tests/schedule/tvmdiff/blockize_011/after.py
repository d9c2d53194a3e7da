# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((4, 6, 8), "float32"), T_reshape: T.Buffer((24, 8), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0 in range(24):
            with T.sblock("T_reshape_o"):
                v_ax0_o = T.axis.spatial(24, ax0)
                v_ax1_o = T.axis.spatial(1, 0)
                T.reads(A[v_ax0_o // 6, v_ax0_o % 6, 0:8])
                T.writes(T_reshape[v_ax0_o, 0:8])
                for ax1 in range(8):
                    with T.sblock("T_reshape"):
                        v_ax1_i = T.axis.spatial(8, ax1)
                        T.reads(A[v_ax0_o // 6, v_ax0_o % 6, v_ax1_i])
                        T.writes(T_reshape[v_ax0_o, v_ax1_i])
                        T_reshape[v_ax0_o, v_ax1_i] = A[v_ax0_o // 6, v_ax0_o % 6, v_ax1_i]