# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((8, 16, 1), "float32"), D: T.Buffer((1, 8, 16, 128), "float32")):
        T.func_attr({"global_symbol": "elementwise_reverse_affine_load_unit_iter"})
        # with T.sblock("root"):
        for ax0, ax1, ax2, ax3 in T.grid(128, 16, 8, 1):
            with T.sblock("C"):
                v0, v1, v2, v3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(A[v2 * 16 + v1, v0], B[v2, v1, v3])
                T.writes(D[v3, v2, v1, v0])
                D[v3, v2, v1, v0] = A[v2 * 16 + v1, v0] * T.float32(2.0) + B[v2, v1, v3]