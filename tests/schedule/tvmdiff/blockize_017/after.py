# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(Input: T.Buffer((1, 224, 224, 3), "float32"), Weight: T.Buffer((7, 7, 3, 64), "float32"), Conv2d_nhwc: T.Buffer((1, 112, 112, 64), "float32")):
        T.func_attr({"global_symbol": "conv2d_nhwc"})
        # with T.sblock("root"):
        PadInput = T.sblock_alloc_buffer((1, 230, 230, 3), "int32")
        PadInput_local = T.sblock_alloc_buffer((1, 230, 230, 3), scope="local")
        for i0, i1, i2 in T.grid(1, 230, 230):
            for i3 in range(3):
                with T.sblock("PadInput"):
                    i0_1, i1_1, i2_1, i3_1 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                    T.reads(Input[i0_1, i1_1 - 3, i2_1 - 3, i3_1])
                    T.writes(PadInput_local[i0_1, i1_1, i2_1, i3_1])
                    PadInput_local[i0_1, i1_1, i2_1, i3_1] = T.if_then_else(i1_1 >= 3 and i1_1 < 227 and i2_1 >= 3 and i2_1 < 227, Input[i0_1, i1_1 - 3, i2_1 - 3, i3_1], T.float32(0.0))
            with T.sblock("PadInput_local"):
                v0, v1, v2 = T.axis.remap("SSS", [i0, i1, i2])
                T.reads(PadInput_local[v0, v1, v2, 0:3])
                T.writes(PadInput[v0, v1, v2, 0:3])
                T.sblock_attr({"auto_copy": True})
                for ax0, ax1, ax2, ax3 in T.grid(1, 1, 1, 3):
                    PadInput[v0 + ax0, v1 + ax1, v2 + ax2, ax3] = T.Cast("int32", PadInput_local[v0 + ax0, v1 + ax1, v2 + ax2, ax3])
        for i0, i1, i2, i3, i4 in T.grid(1, 112, 112, 64, 7):
            with T.sblock("conv2d_nhwc_o"):
                n_o, h_o, w_o, co_o, rh_o = T.axis.remap("SSSSR", [i0, i1, i2, i3, i4])
                rw_o = T.axis.reduce(1, 0)
                rc_o = T.axis.reduce(1, 0)
                T.reads(PadInput[n_o, h_o * 2 + rh_o, w_o * 2:w_o * 2 + 7, co_o // 64 * 3:co_o // 64 * 3 + 3], Weight[rh_o, 0:7, 0:3, co_o])
                T.writes(Conv2d_nhwc[n_o, h_o, w_o, co_o])
                with T.init():
                    with T.sblock("conv2d_nhwc_init"):
                        T.reads()
                        T.writes(Conv2d_nhwc[n_o, h_o, w_o, co_o])
                        Conv2d_nhwc[n_o, h_o, w_o, co_o] = T.float32(0.0)
                for i5, i6 in T.grid(7, 3):
                    with T.sblock("conv2d_nhwc"):
                        rw_i, rc_i = T.axis.remap("RR", [i5, i6])
                        T.reads(Conv2d_nhwc[n_o, h_o, w_o, co_o], PadInput[n_o, h_o * 2 + rh_o, w_o * 2 + rw_i, co_o // 64 * 3 + rc_i], Weight[rh_o, rw_i, rc_i, co_o])
                        T.writes(Conv2d_nhwc[n_o, h_o, w_o, co_o])
                        Conv2d_nhwc[n_o, h_o, w_o, co_o] = Conv2d_nhwc[n_o, h_o, w_o, co_o] + T.Cast("float32", PadInput[n_o, h_o * 2 + rh_o, w_o * 2 + rw_i, co_o // 64 * 3 + rc_i]) * Weight[rh_o, rw_i, rc_i, co_o]