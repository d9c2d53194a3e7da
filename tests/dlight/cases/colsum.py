# dlight: Fallback
# explain: Reduction: does not apply: block 'B' has no input indexed by all its iters and laid out along the reduction
# A column sum: one thread per column already reads each row coalesced.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((256, 64), "float32"), B: T.Buffer((64,), "float32")):
    for i, j in T.grid(256, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("RS", [i, j])
            with T.init():
                B[vj] = T.float32(0)
            B[vj] = B[vj] + A[vi, vj]
