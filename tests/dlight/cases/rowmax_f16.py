# dlight: Reduction
# A row maximum of float16 over a 3-d input, two reduce axes fused.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8, 64), "float16"), B: T.Buffer((16,), "float16")):
    for i, j, k in T.grid(16, 8, 64):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SRR", [i, j, k])
            with T.init():
                B[vi] = T.float16(-65504)
            B[vi] = T.max(B[vi], A[vi, vj, vk])
