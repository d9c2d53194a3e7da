# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "blockized_2"})
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        for i_o, j_o in T.grid(4, 4):
            for ax0, ax1 in T.grid(2, 2):
                with T.sblock("B_outer"):
                    vio = T.axis.spatial(8, i_o * 2 + ax0)
                    vjo = T.axis.spatial(8, j_o * 2 + ax1)
                    T.reads(A[vio * 16:vio * 16 + 16, vjo * 16:vjo * 16 + 16])
                    T.writes(B[vio * 16:vio * 16 + 16, vjo * 16:vjo * 16 + 16])
                    for i_i, j_i in T.grid(16, 16):
                        with T.sblock("B_inner"):
                            vi = T.axis.spatial(128, vio * 16 + i_i)
                            vj = T.axis.spatial(128, vjo * 16 + j_i)
                            T.reads(A[vi, vj])
                            T.writes(B[vi, vj])
                            B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for i_i, j_i in T.grid(32, 32):
                with T.sblock("C"):
                    vi = T.axis.spatial(128, i_o * 32 + i_i)
                    vj = T.axis.spatial(128, j_o * 32 + j_i)
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
