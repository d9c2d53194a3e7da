# Y = conv2d(X, W), 3x3, stride 1, padded by one, float32, NCHW: ResNet-18's
# first stage at batch 128 (128 x 64 x 56 x 56, 64 channels out).
from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((128, 64, 56, 56), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"), Y: T.Buffer((128, 64, 56, 56), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    P = T.alloc_buffer((128, 64, 58, 58))
    for n, c, h, w in T.grid(128, 64, 58, 58):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            P[vn, vc, vh, vw] = T.if_then_else(1 <= vh and vh < 57 and 1 <= vw and vw < 57, X[vn, vc, vh - 1, vw - 1], T.float32(0))
    for n, co, h, w, ci, rh, rw in T.grid(128, 64, 56, 56, 64, 3, 3):
        with T.block("Y"):
            vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, rh, rw])
            with T.init():
                Y[vn, vco, vh, vw] = T.float32(0)
            Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + P[vn, vci, vh + vrh, vw + vrw] * W[vco, vci, vrh, vrw]
