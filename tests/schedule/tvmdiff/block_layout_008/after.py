# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer(("n", 1024), "float32")):
        n = T.int32()
        T.func_attr({"global_symbol": "workload"})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(1024, n):
            with T.sblock("B"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads()
                T.writes(A[v1, v0])
                A[v1, v0] = T.float32(1.0)