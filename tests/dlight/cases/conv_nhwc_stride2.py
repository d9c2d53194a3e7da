# dlight: Matmul
# explain: Matmul: schedules it as a product (its operands reindexed into A[i, k], B[j, k] and C[i, j])
# A 1x1 convolution of stride 2, NHWC with HWIO weights (a ResNet
# downsampling): the product of the strided rows (128 x 32) by the
# weights (32 x 64).
from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((2, 16, 16, 32), "float32"), W: T.Buffer((1, 1, 32, 64), "float32"),
         Y: T.Buffer((2, 8, 8, 64), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for n, h, w, co, rh, rw, ci in T.grid(2, 8, 8, 64, 1, 1, 32):
        with T.block("conv"):
            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
            with T.init():
                Y[vn, vh, vw, vco] = T.float32(0)
            Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + X[vn, vh * 2 + vrh, vw * 2 + vrw, vci] * W[vrh, vrw, vci, vco]
