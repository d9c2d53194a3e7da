# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(p0: T.Buffer((T.int64(2), 1280), "float16"), p1: T.Buffer((1280, 1280), "float16"), T_matmul_NT: T.Buffer((T.int64(2), 1280), "float16")):
        T.func_attr({"global_symbol": "mixed_dtype"})
        # with T.sblock("root"):
        for ax0, ax1, ax2 in T.grid(1280, 1280, T.int64(2)):
            with T.sblock("T_matmul_NT"):
                v0, v1, v2 = T.axis.remap("RSS", [ax0, ax1, ax2])
                T.reads(p0[v2, v0], p1[v1, v0])
                T.writes(T_matmul_NT[v2, v1])
                with T.init():
                    T_matmul_NT[v2, v1] = T.float16(0.0)
                T_matmul_NT[v2, v1] = T_matmul_NT[v2, v1] + p0[v2, v0] * p1[v1, v0]