# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((8, 16, 128), "float32")):
        T.func_attr({"global_symbol": "elementwise_reverse_non_affine_load"})
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i in range(8):
            with T.sblock("C_j_common"):
                T.reads()
                T.writes()
                with T.sblock("C_j0_partition"):
                    T.reads()
                    T.writes()
                    for j0, k in T.grid(11, 128):
                        with T.sblock("C_j0"):
                            vi, vj, vk = T.axis.remap("SSS", [i, j0, k])
                            T.reads(B[vi * 16 + vj, vi * 16 + vj])
                            T.writes(C[0:8, 0:11, 0:128])
                            C[vi, vj, vk] = B[vi * 16 + vj, vi * 16 + vj]
                with T.sblock("C_j1_partition"):
                    T.reads()
                    T.writes()
                    for j1 in range(11, 16):
                        for k in range(128):
                            with T.sblock("C_j1"):
                                vi, vj, vk = T.axis.remap("SSS", [i, j1, k])
                                T.reads(B[vi * 16 + vj, vi * 16 + vj])
                                T.writes(C[0:8, 11:16, 0:128])
                                C[vi, vj, vk] = B[vi * 16 + vj, vi * 16 + vj]