# dlight: Reduction
# Rows of 100: 64 threads a row, the second step of each predicated off
# past the row's end.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((48, 100), "float32"), B: T.Buffer((48,), "float32")):
    for i, k in T.grid(48, 100):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
