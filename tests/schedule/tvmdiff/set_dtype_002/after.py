# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((48, 64), "float32"), x: T.Buffer((64,), "float32"), y: T.Buffer((48,), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i0, k in T.grid(48, 64):
            with T.sblock("y"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(A[v_i0, v_k], x[v_k])
                T.writes(y[v_i0])
                with T.init():
                    y[v_i0] = T.float32(0.0)
                y[v_i0] = y[v_i0] + A[v_i0, v_k] * x[v_k]