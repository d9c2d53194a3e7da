# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "nested_block_bind_after_cache_read"})
        # with T.sblock("root"):
        for i in range(16):
            with T.sblock("outer"):
                vi = T.axis.spatial(16, i)
                T.reads(A[vi, 0:16])
                T.writes(B[vi])
                A_shared = T.sblock_alloc_buffer((1, 16), scope="shared")
                A_global = T.sblock_alloc_buffer((1, 16))
                for ax0, ax1 in T.grid(1, 16):
                    with T.sblock("A_global"):
                        v0, v1 = T.axis.remap("SS", [ax0, ax1])
                        T.reads(A[vi + v0, v1])
                        T.writes(A_global[v0, v1])
                        A_global[v0, v1] = A[vi + v0, v1]
                for ax0, ax1 in T.grid(1, 16):
                    with T.sblock("A_shared"):
                        v0 = T.axis.spatial(16, vi + ax0)
                        v1 = T.axis.spatial(16, ax1)
                        T.reads(A_global[v0 - vi, v1])
                        T.writes(A_shared[v0, v1])
                        A_shared[v0, v1] = A_global[v0 - vi, v1]
                for j in T.thread_binding(16, thread="threadIdx.x"):
                    with T.sblock("inner"):
                        vj = T.axis.reduce(16, j)
                        T.reads(A_shared[vi, vj])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0.0)
                        B[vi] = B[vi] + A_shared[vi, vj]