# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "blocks_func"})
        # with T.sblock("root"):
        for m in range(6):
            for i, j in T.grid(3, 1):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            with T.sblock("C_i_common"):
                T.reads()
                T.writes()
                with T.sblock("C_i0_partition"):
                    T.reads()
                    T.writes()
                    for i0, j in T.grid(32, 64):
                        with T.sblock("C_i0"):
                            vi, vj = T.axis.remap("SS", [i0, j])
                            T.reads(A[vi, vj + 64])
                            T.writes(B[vi, vj + 64])
                            B[vi, vj + 64] = A[vi, vj + 64] * T.float32(3.0)
                with T.sblock("C_i1_partition"):
                    T.reads()
                    T.writes()
                    for i1 in range(32, 120):
                        for j in range(64):
                            with T.sblock("C_i1"):
                                vi, vj = T.axis.remap("SS", [i1, j])
                                T.reads(A[vi, vj + 64])
                                T.writes(B[vi, vj + 64])
                                B[vi, vj + 64] = A[vi, vj + 64] * T.float32(3.0)
                with T.sblock("C_i2_partition"):
                    T.reads()
                    T.writes()
                    for i2 in range(120, 128):
                        for j in range(64):
                            with T.sblock("C_i2"):
                                vi, vj = T.axis.remap("SS", [i2, j])
                                T.reads(A[vi, vj + 64])
                                T.writes(B[vi, vj + 64])
                                B[vi, vj + 64] = A[vi, vj + 64] * T.float32(3.0)