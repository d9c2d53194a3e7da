# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((4, 1, 16), "float32"), B: T.Buffer((8, 16), "float32"), T_minimum: T.Buffer((4, 8, 16), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1, ax2 in T.grid(4, 8, 16):
            with T.sblock("T_minimum"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(A[v_ax0, 0, v_ax2], B[v_ax1, v_ax2])
                T.writes(T_minimum[v_ax0, v_ax1, v_ax2])
                T_minimum[v_ax0, v_ax1, v_ax2] = T.min(A[v_ax0, 0, v_ax2], B[v_ax1, v_ax2])