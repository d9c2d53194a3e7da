# dlight: Matmul
# explain: Matmul: schedules it as a product (its operands reindexed into A[i, k], B[j, k] and C[i, j])
# trace: sch.reindex(block=b0, buffer=("read", 0))
# trace: sch.transform_block_layout(block=b0, index_map=lambda x0, x1, x2, x3, x4, x5, x6: (x0 * 256 + x2 * 16 + x3, x1, x4 * 9 + x5 * 3 + x6))
# A 3x3 convolution (NCHW, padded by one) with its bias and ReLU: made the
# product of its im2col matrix (512 x 144) by its weights (144 x 32), the
# padding inlined into the copy of its input's tile, the epilogue into the
# write-back of each thread's patch: one kernel.
from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((2, 16, 16, 16), "float32"), W: T.Buffer((32, 16, 3, 3), "float32"),
         bias: T.Buffer((32,), "float32"), Y: T.Buffer((2, 32, 16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    P = T.alloc_buffer((2, 16, 18, 18))
    C = T.alloc_buffer((2, 32, 16, 16))
    for n, c, h, w in T.grid(2, 16, 18, 18):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            P[vn, vc, vh, vw] = T.if_then_else(1 <= vh and vh < 17 and 1 <= vw and vw < 17, X[vn, vc, vh - 1, vw - 1], T.float32(0))
    for n, co, h, w, ci, rh, rw in T.grid(2, 32, 16, 16, 16, 3, 3):
        with T.block("conv"):
            vn, vco, vh, vw, vci, vrh, vrw = T.axis.remap("SSSSRRR", [n, co, h, w, ci, rh, rw])
            with T.init():
                C[vn, vco, vh, vw] = T.float32(0)
            C[vn, vco, vh, vw] = C[vn, vco, vh, vw] + P[vn, vci, vh + vrh, vw + vrw] * W[vco, vci, vrh, vrw]
    for n, co, h, w in T.grid(2, 32, 16, 16):
        with T.block("bias_relu"):
            vn, vco, vh, vw = T.axis.remap("SSSS", [n, co, h, w])
            Y[vn, vco, vh, vw] = T.max(C[vn, vco, vh, vw] + bias[vco], T.float32(0))
