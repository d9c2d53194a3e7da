# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "buffer_matched"})
        # with T.sblock("root"):
        B_shared = T.sblock_alloc_buffer((128, 128), scope="shared")
        B_shared_local = T.sblock_alloc_buffer((128, 128), scope="local")
        B_shared_local_global = T.sblock_alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B_shared_local[vi, vj])
                B_shared_local[vi, vj] = A[vi, vj] * T.float32(2.0)
        for ax0, ax1 in T.grid(128, 128):
            with T.sblock("B_shared_local_global"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B_shared_local[v0, v1])
                T.writes(B_shared_local_global[v0, v1])
                B_shared_local_global[v0, v1] = B_shared_local[v0, v1]
        for ax0, ax1 in T.grid(128, 128):
            with T.sblock("B_shared_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B_shared_local_global[v0, v1])
                T.writes(B_shared[v0, v1])
                B_shared[v0, v1] = B_shared_local_global[v0, v1]
        for i, j in T.grid(128, 128):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B_shared[vi, vj])
                T.writes(C[vi, vj])
                Bb_shared = T.match_buffer(B_shared[vi, vj], (1, 1), scope="shared")
                C[vi, vj] = Bb_shared[0, 0] + T.float32(1.0)