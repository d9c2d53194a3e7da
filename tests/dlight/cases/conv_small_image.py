# dlight: Fallback
# explain: Matmul: does not apply to it as a product: block 'conv': no tile divides 49 x 64 x 576 (tiles of 128 down to 16, k steps down to 2)
# A 3x3 convolution on a 7x7 image at batch 1 (ResNet's last stage): the
# product's 49 rows are divided by no tile, so it stays as written and
# Fallback binds it.
from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((1, 64, 9, 9), "float32"), W: T.Buffer((64, 64, 3, 3), "float32"),
         Y: T.Buffer((1, 64, 7, 7), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for n, co, h, w, ci, rh, rw in T.grid(1, 64, 7, 7, 64, 3, 3):
        with T.block("conv"):
            vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, rh, rw])
            with T.init():
                Y[vn, vco, vh, vw] = T.float32(0)
            Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + X[vn, vci, vh + vrh, vw + vrw] * W[vco, vci, vrh, vrw]
