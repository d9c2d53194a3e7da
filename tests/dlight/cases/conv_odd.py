# dlight: Fallback
# explain: Matmul: does not apply: block 'conv' is not a reduction over three loops of constant extent
# A 7x7 convolution on three channels (ResNet's first): its product's
# reduction (147) is divided by no step of k, so Matmul leaves it, and
# Fallback binds the convolution as written.
from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((1, 3, 22, 22), "float32"), W: T.Buffer((16, 3, 7, 7), "float32"),
         Y: T.Buffer((1, 16, 8, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for n, co, h, w, ci, rh, rw in T.grid(1, 16, 8, 8, 3, 7, 7):
        with T.block("conv"):
            vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, rh, rw])
            with T.init():
                Y[vn, vco, vh, vw] = T.float32(0)
            Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + X[vn, vci, vh * 2 + vrh, vw * 2 + vrw] * W[vco, vci, vrh, vrw]
