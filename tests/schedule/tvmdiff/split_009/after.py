# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "element_wise_compute_at_split"})
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        for i in T.serial(128, annotations={"pragma_auto_unroll_max_step": 16}):
            for j1o_0, j1o_1, j1o_2, j1i in T.grid(32, 1, 8, 4):
                with T.sblock("B"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, (j1o_0 * 8 + j1o_2) * 4 + j1i)
                    T.where((j1o_0 + j1o_1) * 8 + j1o_2 < 32)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
                with T.sblock("C"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, (j1o_0 * 8 + j1o_2) * 4 + j1i)
                    T.where((j1o_0 + j1o_1) * 8 + j1o_2 < 32)
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)