# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float16"), B: T.Buffer((128, 128), "float16"), C: T.Buffer((128, 128), "float16"), D: T.Buffer((128, 128), "float16")):
        T.func_attr({"global_symbol": "opaque_access"})
        # with T.sblock("root"):
        for i, j in T.grid(128, 128):
            with T.sblock("load_store"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = A[vi, vj]
        for i, j in T.grid(8, 8):
            with T.sblock("opaque"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                T.writes(B[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                T.tvm_load_matrix_sync(B.data, 16, 16, 16, vi * 8 + vj, T.tvm_access_ptr(T.type_annotation("float16"), A.data, vi * 2048 + vj * 16, 128, 1), 128, "row_major")
        for i, j in T.grid(8, 8):
            with T.sblock("match_buffer"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                T.writes(C[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                A0 = T.match_buffer(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16), "float16", strides=(128, 1), offset_factor=1)
                C0 = T.match_buffer(C[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16), "float16", strides=(128, 1), offset_factor=1)
                T.tvm_load_matrix_sync(C0.data, 16, 16, 16, vi * 8 + vj, T.tvm_access_ptr(T.type_annotation("float16"), A0.data, A0.elem_offset, 128, 1), 128, "row_major")
