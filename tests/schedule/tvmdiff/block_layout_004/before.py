# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((8, 32), "float32"), A_red: T.Buffer((8,), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, k1 in T.grid(8, 32):
            with T.sblock("A_red"):
                v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
                T.reads(A[v_ax0, v_k1])
                T.writes(A_red[v_ax0])
                with T.init():
                    A_red[v_ax0] = T.float32(-340282346638528859811704183484516925440.0)
                A_red[v_ax0] = T.max(A_red[v_ax0], A[v_ax0, v_k1])