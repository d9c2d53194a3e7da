# Max pools oneDNN computes: ResNet's (3x3, stride 2, padded by one with
# the lowest float32, NHWC; the pad nest and the pool are one call), and an
# NCHW one with a batch, unpadded, with a window and stride that differ.
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def nhwc_pad(A: T.Buffer((1, 12, 12, 16), "float32"), Y: T.Buffer((1, 6, 6, 16), "float32")):
        P = T.alloc_buffer((1, 14, 14, 16))
        for i0, i1, i2, i3 in T.grid(1, 14, 14, 16):
            with T.block("pad"):
                v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                P[v0, v1, v2, v3] = T.if_then_else(1 <= v1 and v1 < 13 and (1 <= v2 and v2 < 13), A[v0, v1 - 1, v2 - 1, v3], T.float32(-340282346638528859811704183484516925440.0))
        for i0, i1, i2, i3, r0, r1 in T.grid(1, 6, 6, 16, 3, 3):
            with T.block("pool"):
                v0, v1, v2, v3, vr0, vr1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, r0, r1])
                with T.init():
                    Y[v0, v1, v2, v3] = T.float32(-340282346638528859811704183484516925440.0)
                Y[v0, v1, v2, v3] = T.max(Y[v0, v1, v2, v3], P[v0, v1 * 2 + vr0, v2 * 2 + vr1, v3])

    @T.prim_func
    def nchw(A: T.Buffer((2, 5, 11, 9), "float32"), Y: T.Buffer((2, 5, 3, 4), "float32")):
        for n, c, h, w, r0, r1 in T.grid(2, 5, 3, 4, 3, 3):
            with T.block("pool"):
                vn, vc, vh, vw, vr0, vr1 = T.axis.remap("SSSSRR", [n, c, h, w, r0, r1])
                with T.init():
                    Y[vn, vc, vh, vw] = T.float32(-340282346638528859811704183484516925440.0)
                Y[vn, vc, vh, vw] = T.max(Y[vn, vc, vh, vw], A[vn, vc, vh * 3 + vr0, vw * 2 + vr1])
