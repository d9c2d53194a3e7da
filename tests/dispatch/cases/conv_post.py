# Convolutions with the nests after them that oneDNN computes in the same
# call: a bias per channel, a residual added and a ReLU (a ResNet block's
# fused function, NHWC; the addition is oneDNN's sum), a ReLU alone, a
# ReLU and then an addition (a binary post-op), and the same nests after
# an NCHW convolution, which stay loops.
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def bias_add_relu(X: T.Buffer((1, 10, 10, 8), "float32"), W: T.Buffer((3, 3, 8, 16), "float32"),
                      B: T.Buffer((16,), "float32"), R: T.Buffer((1, 10, 10, 16), "float32"),
                      Z: T.Buffer((1, 10, 10, 16), "float32")):
        pad = T.alloc_buffer((1, 12, 12, 8))
        Y = T.alloc_buffer((1, 10, 10, 16))
        Yb = T.alloc_buffer((1, 10, 10, 16))
        Ys = T.alloc_buffer((1, 10, 10, 16))
        for n, h, w, c in T.grid(1, 12, 12, 8):
            with T.block("pad"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                pad[vn, vh, vw, vc] = T.if_then_else(1 <= vh and vh < 11 and 1 <= vw and vw < 11, X[vn, vh - 1, vw - 1, vc], T.float32(0.0))
        for n, h, w, co, rh, rw, ci in T.grid(1, 10, 10, 16, 3, 3, 8):
            with T.block("conv"):
                vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
                with T.init():
                    Y[vn, vh, vw, vco] = T.float32(0.0)
                Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + pad[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]
        for n, h, w, c in T.grid(1, 10, 10, 16):
            with T.block("bias"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                Yb[vn, vh, vw, vc] = B[vc] + Y[vn, vh, vw, vc]
        for n, h, w, c in T.grid(1, 10, 10, 16):
            with T.block("add"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                Ys[vn, vh, vw, vc] = Yb[vn, vh, vw, vc] + R[vn, vh, vw, vc]
        for n, h, w, c in T.grid(1, 10, 10, 16):
            with T.block("relu"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                Z[vn, vh, vw, vc] = T.max(Ys[vn, vh, vw, vc], T.float32(0.0))

    @T.prim_func
    def relu_only(X: T.Buffer((2, 9, 7, 4), "float32"), W: T.Buffer((3, 3, 4, 8), "float32"),
                  Z: T.Buffer((2, 4, 3, 8), "float32")):
        Y = T.alloc_buffer((2, 4, 3, 8))
        for n, h, w, co, rh, rw, ci in T.grid(2, 4, 3, 8, 3, 3, 4):
            with T.block("conv"):
                vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
                with T.init():
                    Y[vn, vh, vw, vco] = T.float32(0.0)
                Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + X[vn, vh * 2 + vrh, vw * 2 + vrw, vci] * W[vrh, vrw, vci, vco]
        for n, h, w, c in T.grid(2, 4, 3, 8):
            with T.block("relu"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                Z[vn, vh, vw, vc] = T.max(T.float32(0.0), Y[vn, vh, vw, vc])

    @T.prim_func
    def relu_add(X: T.Buffer((1, 5, 5, 8), "float32"), W: T.Buffer((1, 1, 8, 8), "float32"),
                 R: T.Buffer((1, 5, 5, 8), "float32"), Z: T.Buffer((1, 5, 5, 8), "float32")):
        Y = T.alloc_buffer((1, 5, 5, 8))
        Yr = T.alloc_buffer((1, 5, 5, 8))
        for n, h, w, co, rh, rw, ci in T.grid(1, 5, 5, 8, 1, 1, 8):
            with T.block("conv"):
                vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
                with T.init():
                    Y[vn, vh, vw, vco] = T.float32(0.0)
                Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + X[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]
        for n, h, w, c in T.grid(1, 5, 5, 8):
            with T.block("relu"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                Yr[vn, vh, vw, vc] = T.max(Y[vn, vh, vw, vc], T.float32(0.0))
        for n, h, w, c in T.grid(1, 5, 5, 8):
            with T.block("add"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                Z[vn, vh, vw, vc] = Yr[vn, vh, vw, vc] + R[vn, vh, vw, vc]

    @T.prim_func
    def nchw_bias(X: T.Buffer((1, 4, 8, 8), "float32"), W: T.Buffer((8, 4, 3, 3), "float32"),
                  B: T.Buffer((8,), "float32"), Z: T.Buffer((1, 8, 6, 6), "float32")):
        Y = T.alloc_buffer((1, 8, 6, 6))
        for n, co, h, w, ci, rh, rw in T.grid(1, 8, 6, 6, 4, 3, 3):
            with T.block("conv"):
                vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, rh, rw])
                with T.init():
                    Y[vn, vco, vh, vw] = T.float32(0.0)
                Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + X[vn, vci, vh + vrh, vw + vrw] * W[vco, vci, vrh, vrw]
        for n, c, h, w in T.grid(1, 8, 6, 6):
            with T.block("bias"):
                vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
                Z[vn, vc, vh, vw] = Y[vn, vc, vh, vw] + B[vc]
