# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "scatter_compute"})
        # with T.sblock("root"):
        for i in range(8):
            with T.sblock("first_half"):
                vi = T.axis.spatial(16, 8 + i)
                T.reads(A[vi - 8])
                T.writes(B[vi])
                B[vi] = A[vi - 8]
        with T.sblock("last_half_o"):
            vi_o = T.axis.spatial(1, 0)
            T.reads(A[8:16])
            T.writes(B[0:8])
            for i in range(8):
                with T.sblock("last_half"):
                    vi_i = T.axis.spatial(8, i)
                    T.reads(A[vi_i + 8])
                    T.writes(B[vi_i])
                    B[vi_i] = A[vi_i + 8]