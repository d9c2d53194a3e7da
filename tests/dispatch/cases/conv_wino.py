# Convolutions oneDNN computes by Winograd's F(2x2, 3x3) on a machine that
# has it (3x3, stride 1, 64 channels or more, 100 output pixels or more),
# its data moved to and from its blocked layout: a ResNet block's fused
# function (bias, residual, ReLU: the residual goes into the blocked
# output before the sum), a conv added to what Y holds, one NCHW, and one
# of 81 output pixels, which stays direct.
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def nhwc_block(X: T.Buffer((1, 12, 12, 64), "float32"), W: T.Buffer((3, 3, 64, 64), "float32"),
                   B: T.Buffer((64,), "float32"), R: T.Buffer((1, 12, 12, 64), "float32"),
                   Z: T.Buffer((1, 12, 12, 64), "float32")):
        pad = T.alloc_buffer((1, 14, 14, 64))
        Y = T.alloc_buffer((1, 12, 12, 64))
        Yb = T.alloc_buffer((1, 12, 12, 64))
        Ys = T.alloc_buffer((1, 12, 12, 64))
        for n, h, w, c in T.grid(1, 14, 14, 64):
            with T.block("pad"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                pad[vn, vh, vw, vc] = T.if_then_else(1 <= vh and vh < 13 and 1 <= vw and vw < 13, X[vn, vh - 1, vw - 1, vc], T.float32(0.0))
        for n, h, w, co, rh, rw, ci in T.grid(1, 12, 12, 64, 3, 3, 64):
            with T.block("conv"):
                vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
                with T.init():
                    Y[vn, vh, vw, vco] = T.float32(0.0)
                Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + pad[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]
        for n, h, w, c in T.grid(1, 12, 12, 64):
            with T.block("bias"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                Yb[vn, vh, vw, vc] = B[vc] + Y[vn, vh, vw, vc]
        for n, h, w, c in T.grid(1, 12, 12, 64):
            with T.block("add"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                Ys[vn, vh, vw, vc] = Yb[vn, vh, vw, vc] + R[vn, vh, vw, vc]
        for n, h, w, c in T.grid(1, 12, 12, 64):
            with T.block("relu"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                Z[vn, vh, vw, vc] = T.max(Ys[vn, vh, vw, vc], T.float32(0.0))

    @T.prim_func
    def nhwc_acc(X: T.Buffer((1, 12, 12, 64), "float32"), W: T.Buffer((3, 3, 64, 80), "float32"),
                 Y: T.Buffer((1, 10, 10, 80), "float32")):
        for n, h, w, co, rh, rw, ci in T.grid(1, 10, 10, 80, 3, 3, 64):
            with T.block("conv"):
                vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
                Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + X[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]

    @T.prim_func
    def nchw(X: T.Buffer((2, 64, 10, 10), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"),
             Y: T.Buffer((2, 64, 8, 8), "float32")):
        for n, co, h, w, ci, rh, rw in T.grid(2, 64, 8, 8, 64, 3, 3):
            with T.block("conv"):
                vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, rh, rw])
                with T.init():
                    Y[vn, vco, vh, vw] = T.float32(0.0)
                Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + X[vn, vci, vh + vrh, vw + vrw] * W[vco, vci, vrh, vrw]

    @T.prim_func
    def nhwc_small(X: T.Buffer((1, 11, 11, 64), "float32"), W: T.Buffer((3, 3, 64, 64), "float32"),
                   Y: T.Buffer((1, 9, 9, 64), "float32")):
        for n, h, w, co, rh, rw, ci in T.grid(1, 9, 9, 64, 3, 3, 64):
            with T.block("conv"):
                vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
                with T.init():
                    Y[vn, vh, vw, vco] = T.float32(0.0)
                Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + X[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]
