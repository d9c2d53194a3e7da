# Batches of products: B with the batch (one product per batch), B shared
# by every batch (one product of all the rows), and B shared under a
# transposed A (a product per batch again).
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def batched(A: T.Buffer((3, 20, 12), "float32"), B: T.Buffer((3, 12, 28), "float32"),
                C: T.Buffer((3, 20, 28), "float32")):
        for b, i, j, k in T.grid(3, 20, 28, 12):
            with T.block("C"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
                with T.init():
                    C[vb, vi, vj] = T.float32(0)
                C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]

    @T.prim_func
    def shared(A: T.Buffer((3, 20, 12), "float32"), W: T.Buffer((28, 12), "float32"),
               C: T.Buffer((3, 20, 28), "float32")):
        for b, i, j, k in T.grid(3, 20, 28, 12):
            with T.block("C"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
                with T.init():
                    C[vb, vi, vj] = T.float32(0)
                C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * W[vj, vk]

    @T.prim_func
    def shared_at(A: T.Buffer((3, 12, 20), "float64"), W: T.Buffer((12, 28), "float64"),
                  C: T.Buffer((3, 20, 28), "float64")):
        for b, i, j, k in T.grid(3, 20, 28, 12):
            with T.block("C"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
                with T.init():
                    C[vb, vi, vj] = T.float64(0)
                C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vk, vi] * W[vk, vj]
