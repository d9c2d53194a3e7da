# dlight: Fallback
# target: cuda -arch=sm_90 -multiprocessors=1
# trace: sch.split(loop=l3, factors=[None, 4, 256, 8], preserve_unit_iters=True, disable_predication=False)
# trace: sch.vectorize(loop=l7)
# An elementwise nest with a row broadcast, large enough for its GPU (one
# multiprocessor here: 32,768 elements or more): each thread takes four
# unrolled vectors of 8 halves, which the CUDA backend loads and stores 16
# bytes at a time.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 1024), "float16"), bias: T.Buffer((1024,), "float16"),
         C: T.Buffer((64, 1024), "float16")):
    for i, j in T.grid(64, 1024):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + bias[vj]
