# Convolutions oneDNN computes: NHWC padded by one (the pad nest and the
# conv are one call), NCHW unpadded with stride 2 and a batch, and NHWC
# accumulating into Y with dilation 2 and uneven padding, and NCHW
# accumulating (oneDNN computes it in a blocked layout, Y moved in and out).
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def nhwc_pad(X: T.Buffer((1, 14, 14, 16), "float32"), W: T.Buffer((3, 3, 16, 24), "float32"),
                 Y: T.Buffer((1, 14, 14, 24), "float32")):
        pad = T.alloc_buffer((1, 16, 16, 16))
        for n, h, w, c in T.grid(1, 16, 16, 16):
            with T.block("pad"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                pad[vn, vh, vw, vc] = T.if_then_else(1 <= vh and vh < 15 and 1 <= vw and vw < 15, X[vn, vh - 1, vw - 1, vc], T.float32(0.0))
        for n, h, w, co, rh, rw, ci in T.grid(1, 14, 14, 24, 3, 3, 16):
            with T.block("conv"):
                vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
                with T.init():
                    Y[vn, vh, vw, vco] = T.float32(0.0)
                Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + pad[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]

    @T.prim_func
    def nchw_stride2(X: T.Buffer((2, 8, 17, 15), "float32"), W: T.Buffer((12, 8, 3, 3), "float32"),
                     Y: T.Buffer((2, 12, 8, 7), "float32")):
        for n, co, h, w, ci, rh, rw in T.grid(2, 12, 8, 7, 8, 3, 3):
            with T.block("conv"):
                vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, rh, rw])
                with T.init():
                    Y[vn, vco, vh, vw] = T.float32(0.0)
                Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + X[vn, vci, vh * 2 + vrh, vw * 2 + vrw] * W[vco, vci, vrh, vrw]

    @T.prim_func
    def nhwc_acc_dilated(X: T.Buffer((1, 12, 10, 8), "float32"), W: T.Buffer((3, 3, 8, 8), "float32"),
                         Y: T.Buffer((1, 11, 8, 8), "float32")):
        P = T.alloc_buffer((1, 15, 12, 8))
        for n, h, w, c in T.grid(1, 15, 12, 8):
            with T.block("P"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                P[vn, vh, vw, vc] = T.if_then_else(T.likely(vw < 11 and 2 <= vh) and vh < 14 and 1 <= vw, X[vn, vh - 2, vw - 1, vc], T.float32(0.0))
        for n, h, w, co, rh, rw, ci in T.grid(1, 11, 8, 8, 3, 3, 8):
            with T.block("conv"):
                vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
                Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + P[vn, vh + vrh * 2, vw + vrw * 2, vci] * W[vrh, vrw, vci, vco]

    @T.prim_func
    def nchw_acc(X: T.Buffer((1, 16, 9, 9), "float32"), W: T.Buffer((32, 16, 3, 3), "float32"),
                 Y: T.Buffer((1, 32, 7, 7), "float32")):
        for n, co, h, w, ci, rh, rw in T.grid(1, 32, 7, 7, 16, 3, 3):
            with T.block("conv"):
                vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, rh, rw])
                Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + X[vn, vci, vh + vrh, vw + vrw] * W[vco, vci, vrh, vrw]
