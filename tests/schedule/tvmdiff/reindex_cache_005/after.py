# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
        # with T.sblock("root"):
        A_shared = T.sblock_alloc_buffer((128,), scope="shared")
        for i in range(128):
            with T.sblock("A_shared"):
                vi = T.axis.spatial(128, i)
                T.reads(A[vi])
                T.writes(A_shared[vi])
                A_shared[vi] = A[vi]
        for i in range(128):
            with T.sblock("C"):
                vi = T.axis.spatial(128, i)
                T.where(i < 64)
                T.reads(A_shared[vi])
                T.writes(C[vi])
                C[vi] = A_shared[vi] + T.float32(1.0)