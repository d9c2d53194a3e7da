# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), D: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "fail_all_producers_under_loop"})
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        C = T.sblock_alloc_buffer((128, 128))
        B_shared = T.sblock_alloc_buffer((128, 128), scope="shared")
        for i, j in T.grid(128, 128):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B_shared[vi, vj])
                B_shared[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(128, 128):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] + T.float32(1.0)
        for i, j in T.grid(128, 128):
            with T.sblock("B_shared"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B_shared[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = B_shared[vi, vj]
        for i, j in T.grid(128, 128):
            with T.sblock("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj], C[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = B[vi, vj] + C[vi, vj]