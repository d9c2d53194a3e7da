# dlight: Reduction
# A row sum: each row's 1024 elements across 256 threads of its block.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 1024), "float32"), B: T.Buffer((64,), "float32")):
    for i, k in T.grid(64, 1024):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
