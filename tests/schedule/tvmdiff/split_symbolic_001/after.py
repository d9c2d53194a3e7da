# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

m = TypeVar("m")
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32"), D: T.Buffer((n, m), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        C = T.sblock_alloc_buffer((n, m))
        for i, j in T.grid(n, m):
            with T.sblock("C"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads(A[v_i, v_j], B[v_i, v_j])
                T.writes(C[v_i, v_j])
                C[v_i, v_j] = A[v_i, v_j] + B[v_i, v_j]
        for i_0, i_1, i_2, j in T.grid(T.int64(5), (n + T.int64(9)) // T.int64(10), T.int64(2), m):
            with T.sblock("D"):
                v_i = T.axis.spatial(n, i_0 * ((n + T.int64(9)) // T.int64(10) * T.int64(2)) + i_1 * T.int64(2) + i_2)
                v_j = T.axis.spatial(m, j)
                T.where((i_0 * ((n + T.int64(9)) // T.int64(10)) + i_1) * T.int64(2) + i_2 < n)
                T.reads(C[v_i, v_j])
                T.writes(D[v_i, v_j])
                D[v_i, v_j] = C[v_i, v_j] + T.float32(1.0)