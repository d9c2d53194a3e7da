# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128,), scope="local")
        B_reindex = T.sblock_alloc_buffer((128,), scope="local")
        for i in range(128):
            with T.sblock("B"):
                vi = T.axis.spatial(128, i)
                T.reads(A[vi])
                T.writes(B_reindex[vi])
                B_reindex[vi] = A[vi] * T.float32(2.0)
        for ax0 in range(128):
            with T.sblock("B_reindex"):
                v0 = T.axis.spatial(128, ax0)
                T.reads(B_reindex[v0])
                T.writes(B[v0])
                B[v0] = B_reindex[v0]
        for i in range(128):
            with T.sblock("C"):
                vi = T.axis.spatial(128, i)
                T.reads(B[vi])
                T.writes(C[vi])
                C[vi] = B[vi] + T.float32(1.0)