# dlight: Matmul
# explain: Matmul: schedules it as a product (its operands reindexed into A[i, k], B[j, k] and C[i, j])
# trace: sch.split(loop=l10, factors=[None, 7], preserve_unit_iters=True, disable_predication=False)
# A 7x7 convolution of stride 2 on three channels (ResNet's first): its
# product's reduction (147) is divided by no step of the table, so k steps
# by 7, its largest divisor below 16.
from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((1, 3, 37, 37), "float32"), W: T.Buffer((16, 3, 7, 7), "float32"),
         Y: T.Buffer((1, 16, 16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for n, co, h, w, ci, rh, rw in T.grid(1, 16, 16, 16, 3, 7, 7):
        with T.block("conv"):
            vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, rh, rw])
            with T.init():
                Y[vn, vco, vh, vw] = T.float32(0)
            Y[vn, vco, vh, vw] = Y[vn, vco, vh, vw] + X[vn, vci, vh * 2 + vrh, vw * 2 + vrw] * W[vco, vci, vrh, vrw]
