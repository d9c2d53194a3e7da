# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((129,), "float32"), C: T.Buffer((128,), "float32")):
        # with T.sblock("root"):
        for i in range(128):
            with T.sblock("C"):
                vi = T.axis.spatial(128, i)
                T.reads(A[vi:vi + 2])
                T.writes(C[vi])
                C[vi] = A[vi] + T.float32(1.0)