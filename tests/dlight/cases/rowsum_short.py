# dlight: Fallback
# explain: Reduction: does not apply: block 'B': its reduce extent 20 is shorter than a warp
# Rows of 20, shorter than a warp: each thread sums a row.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((300, 20), "float32"), B: T.Buffer((300,), "float32")):
    for i, k in T.grid(300, 20):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
