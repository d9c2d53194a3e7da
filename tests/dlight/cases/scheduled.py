# dlight: none
# explain: scheduled already
# A function that binds threads already is left as it is.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(1024, bx * 128 + tx)
                B[vi] = A[vi] * T.float32(2)
