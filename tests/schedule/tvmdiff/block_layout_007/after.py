# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(Input: T.Buffer((1, 224, 224, 3), "float32"), Weight: T.Buffer((7, 7, 3, 64), "float32"), Conv2d_nhwc: T.Buffer((1, 112, 112, 64), "float32")):
        T.func_attr({"global_symbol": "conv2d_nhwc"})
        # with T.sblock("root"):
        PadInput = T.sblock_alloc_buffer((1, 230, 230, 3))
        for ax0, ax1, ax2, ax3 in T.grid(3, 230, 1, 230):
            with T.sblock("PadInput"):
                v0, v1, v2, v3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(Input[v2, v3 + -3, v1 + -3, v0])
                T.writes(PadInput[v2, v3, v1, v0])
                PadInput[v2, v3, v1, v0] = T.if_then_else(v3 >= 3 and v3 < 227 and v1 >= 3 and v1 < 227, Input[v2, v3 - 3, v1 - 3, v0], T.float32(0.0))
        for i0, i1, i2, i3, i4, i5, i6 in T.grid(1, 112, 112, 64, 7, 7, 3):
            with T.sblock("conv2d_nhwc"):
                n, h, w, co, rh, rw, rc = T.axis.remap("SSSSRRR", [i0, i1, i2, i3, i4, i5, i6])
                T.reads(PadInput[n, h * 2 + rh, w * 2 + rw, co // 64 * 3 + rc], Weight[rh, rw, rc, co])
                T.writes(Conv2d_nhwc[n, h, w, co])
                with T.init():
                    Conv2d_nhwc[n, h, w, co] = T.float32(0.0)
                Conv2d_nhwc[n, h, w, co] = Conv2d_nhwc[n, h, w, co] + PadInput[n, h * 2 + rh, w * 2 + rw, co // 64 * 3 + rc] * Weight[rh, rw, rc, co]