# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((T.int64(128), T.int64(128)), "float32"), B: T.Buffer((T.int64(128), T.int64(128)), "float32")):
        T.func_attr({"global_symbol": "elementwise_int64_extent"})
        # with T.sblock("root"):
        A_local = T.sblock_alloc_buffer((T.int64(128), T.int64(128)), scope="local")
        for i, j in T.grid(T.int64(128), T.int64(128)):
            with T.sblock("A_local"):
                v0, v1 = T.axis.remap("SS", [i, j])
                T.reads(A[v0, v1])
                T.writes(A_local[v0, v1])
                T.sblock_attr({"auto_copy": True})
                for ax0, ax1 in T.grid(1, 1):
                    A_local[v0 + T.Cast("int64", ax0), v1 + T.Cast("int64", ax1)] = A[v0 + T.Cast("int64", ax0), v1 + T.Cast("int64", ax1)]
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A_local[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A_local[vi, vj] * T.float32(2.0)