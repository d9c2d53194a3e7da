# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((4, 6, 8), "float32"), T_reshape: T.Buffer((24, 8), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(24, 8):
            with T.sblock("T_reshape"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[(v_ax0 * 8 + v_ax1) // 48, (v_ax0 * 8 + v_ax1) // 8 % 6, (v_ax0 * 8 + v_ax1) % 8])
                T.writes(T_reshape[v_ax0, v_ax1])
                T_reshape[v_ax0, v_ax1] = A[(v_ax0 * 8 + v_ax1) // 48, (v_ax0 * 8 + v_ax1) // 8 % 6, (v_ax0 * 8 + v_ax1) % 8]