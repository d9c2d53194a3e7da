# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "element_wise_subregion_match"})
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B_subregion0 = T.match_buffer(B[vi, vj], (), offset_factor=1)
                B_subregion0[()] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(128, 128):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                B_subregion1 = T.match_buffer(B[vi, vj], (), offset_factor=1)
                C[vi, vj] = B_subregion1[()] + T.float32(1.0)
