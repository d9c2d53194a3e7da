# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((1, 24, 24, 16), "int8"), C: T.Buffer((1, 8, 8, 16), "int8")):
        T.func_attr({"global_symbol": "cascade_3_max_pool2d_with_stride"})
        # with T.sblock("root"):
        B_0 = T.sblock_alloc_buffer((1, 22, 22, 16), "int8")
        B_1 = T.sblock_alloc_buffer((1, 10, 10, 16), "int8")
        for ax0, ax1, ax2, ax3, ax4 in T.grid(1, 22, 352, 3, 3):
            with T.sblock("B_0"):
                v0, v1, v2, v3, v4 = T.axis.remap("SSSRR", [ax0, ax1, ax2, ax3, ax4])
                T.reads(A[v0, v1 + v3, v2 // 16 + v4, v2 % 16])
                T.writes(B_0[v0, v1, v2 // 16, v2 % 16])
                with T.init():
                    B_0[v0, v1, v2 // 16, v2 % 16] = T.int8(-128)
                B_0[v0, v1, v2 // 16, v2 % 16] = T.max(B_0[v0, v1, v2 // 16, v2 % 16], A[v0, v1 + v3, v2 // 16 + v4, v2 % 16])
        for i0, i1, i2, i3, i4, i5 in T.grid(1, 10, 10, 16, 3, 3):
            with T.sblock("B_1"):
                ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
                T.reads(B_0[ax0, ax1 * 2 + rv0, ax2 * 2 + rv1, ax3])
                T.writes(B_1[ax0, ax1, ax2, ax3])
                with T.init():
                    B_1[ax0, ax1, ax2, ax3] = T.int8(-128)
                B_1[ax0, ax1, ax2, ax3] = T.max(B_1[ax0, ax1, ax2, ax3], B_0[ax0, ax1 * 2 + rv0, ax2 * 2 + rv1, ax3])
        for i0, i1, i2, i3, i4, i5 in T.grid(1, 8, 8, 16, 3, 3):
            with T.sblock("C"):
                ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
                T.reads(B_1[ax0, ax1 + rv0, ax2 + rv1, ax3])
                T.writes(C[ax0, ax1, ax2, ax3])
                with T.init():
                    C[ax0, ax1, ax2, ax3] = T.int8(-128)
                C[ax0, ax1, ax2, ax3] = T.max(C[ax0, ax1, ax2, ax3], B_1[ax0, ax1 + rv0, ax2 + rv1, ax3])