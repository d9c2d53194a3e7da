# dlight: Fallback
# explain: Reduction: does not apply: block 'C' is not a reduction with an init writing one buffer
# Elementwise: spatial loops fused and spread over blocks of threads.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((300, 70), "float32"), B: T.Buffer((300, 70), "float32"),
         C: T.Buffer((300, 70), "float32")):
    for i, j in T.grid(300, 70):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
