# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main():
        T.func_attr({"global_symbol": "func_multi_consumer"})
        # with T.sblock("root"):
        A = T.sblock_alloc_buffer((128,))
        B = T.sblock_alloc_buffer((128,))
        C = T.sblock_alloc_buffer((128,))
        for i in range(8):
            for j in range(16):
                with T.sblock("A"):
                    vi = T.axis.spatial(128, i * 16 + j)
                    T.reads()
                    T.writes(A[vi])
                    A[vi] = T.float32(1.0)
            with T.sblock("B_j_common"):
                T.reads()
                T.writes()
                with T.sblock("B_j0_partition"):
                    T.reads()
                    T.writes()
                    for j0 in range(15):
                        with T.sblock("B_j0"):
                            vi = T.axis.spatial(128, i * 16 + j0)
                            T.reads(A[vi])
                            T.writes(B[vi])
                            B[vi] = A[vi] + T.float32(1.0)
                with T.sblock("B_j1_partition"):
                    T.reads()
                    T.writes()
                    for j1 in range(15, 16):
                        with T.sblock("B_j1"):
                            vi = T.axis.spatial(128, i * 16 + j1)
                            T.reads(A[vi])
                            T.writes(B[vi])
                            B[vi] = A[vi] + T.float32(1.0)
        for i in range(128):
            with T.sblock("C"):
                vi = T.axis.spatial(128, i)
                T.reads(A[vi])
                T.writes(C[vi])
                C[vi] = A[vi]