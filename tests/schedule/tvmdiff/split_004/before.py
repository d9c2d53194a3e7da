# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((1, 10, 10, 8), "float32"), W: T.Buffer((3, 3, 8, 1), "float32"), DepthwiseConv2d: T.Buffer((1, 10, 10, 8), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        PaddedInput = T.sblock_alloc_buffer((1, 12, 12, 8))
        for i0, i1, i2, i3 in T.grid(1, 12, 12, 8):
            with T.sblock("PaddedInput"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(A[v_i0, v_i1 - 1, v_i2 - 1, v_i3])
                T.writes(PaddedInput[v_i0, v_i1, v_i2, v_i3])
                PaddedInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 11 and 1 <= v_i2 and v_i2 < 11, A[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float32(0.0))
        for b, i, j, c, di, dj in T.grid(1, 10, 10, 8, 3, 3):
            with T.sblock("DepthwiseConv2d"):
                v_b, v_i, v_j, v_c, v_di, v_dj = T.axis.remap("SSSSRR", [b, i, j, c, di, dj])
                T.reads(PaddedInput[v_b, v_i + v_di, v_j + v_dj, v_c], W[v_di, v_dj, v_c, 0])
                T.writes(DepthwiseConv2d[v_b, v_i, v_j, v_c])
                with T.init():
                    DepthwiseConv2d[v_b, v_i, v_j, v_c] = T.float32(0.0)
                DepthwiseConv2d[v_b, v_i, v_j, v_c] = DepthwiseConv2d[v_b, v_i, v_j, v_c] + PaddedInput[v_b, v_i + v_di, v_j + v_dj, v_c] * W[v_di, v_dj, v_c, 0]