# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "elementwise"})
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        with T.sblock("C_o"):
            vi_o = T.axis.spatial(1, 0)
            vj_o = T.axis.spatial(1, 0)
            T.reads(B[0:128, 0:128])
            T.writes(C[0:128, 0:128])
            with T.sblock("C_i_j_fused_common"):
                T.reads()
                T.writes()
                with T.sblock("C_i_j_fused0_partition"):
                    T.reads()
                    T.writes()
                    for i_j_fused0 in range(9):
                        with T.sblock("C_i_j_fused0"):
                            vi_i = T.axis.spatial(128, i_j_fused0 // 128)
                            vj_i = T.axis.spatial(128, i_j_fused0 % 128)
                            T.reads(B[vi_i, vj_i])
                            T.writes(C[vi_i, vj_i])
                            C[vi_i, vj_i] = B[vi_i, vj_i] + T.float32(1.0)
                with T.sblock("C_i_j_fused1_partition"):
                    T.reads()
                    T.writes()
                    C_shared = T.sblock_alloc_buffer((128, 128), scope="shared")
                    for i_j_fused1 in range(9, 16384):
                        with T.sblock("C_i_j_fused1"):
                            vi_i = T.axis.spatial(128, i_j_fused1 // 128)
                            vj_i = T.axis.spatial(128, i_j_fused1 % 128)
                            T.reads(B[vi_i, vj_i])
                            T.writes(C_shared[vi_i, vj_i])
                            C_shared[vi_i, vj_i] = B[vi_i, vj_i] + T.float32(1.0)
                        with T.sblock("C_shared"):
                            v0 = T.axis.spatial((9, 16384), i_j_fused1)
                            T.reads(C_shared[v0 // 128, v0 % 128])
                            T.writes(C[v0 // 128, v0 % 128])
                            T.sblock_attr({"auto_copy": True})
                            for ax0, ax1 in T.grid(1, 1):
                                C[v0 // 128 + ax0, v0 % 128 + ax1] = C_shared[v0 // 128 + ax0, v0 % 128 + ax1]