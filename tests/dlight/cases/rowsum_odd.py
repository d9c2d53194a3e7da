# dlight: Fallback
# explain: Reduction: does not apply: block 'B': its reduce extent 100 has no power-of-two factor of a warp (32) or more
# Rows of 100: no warp-wide split divides them, so each thread sums a row.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((48, 100), "float32"), B: T.Buffer((48,), "float32")):
    for i, k in T.grid(48, 100):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
