# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "access_under_scope"})
        # with T.sblock("root"):
        A = T.sblock_alloc_buffer((128, 128))
        for i0, j0 in T.grid(8, 8):
            with T.sblock("scope"):
                i, j = T.axis.remap("SS", [i0, j0])
                T.reads(A[i * 16:i * 16 + 16, j * 16:j * 16 + 16])
                T.writes(A[i * 16:i * 16 + 16, j * 16:j * 16 + 16], B[i * 16:i * 16 + 16, j * 16:j * 16 + 16])
                for x, y_0, y_1 in T.grid(16, 16, 1):
                    with T.sblock("A"):
                        vi = T.axis.spatial(128, x + i * 16)
                        vj = T.axis.spatial(128, y_0 + y_1 + j * 16)
                        T.reads()
                        T.writes(A[vi, vj])
                        A[vi, vj] = T.float32(1.0)
                for x, y in T.grid(16, 16):
                    with T.sblock("B"):
                        vi = T.axis.spatial(128, i * 16 + x)
                        vj = T.axis.spatial(128, j * 16 + y)
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] + T.float32(1.0)
        for i, j in T.grid(128, 128):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] * T.float32(2.0)