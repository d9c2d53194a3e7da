# expect: 11:17: error: shared buffer 'S' is read here before any thread of the block wrote it
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    S = T.alloc_buffer((128,), "float32", scope="shared")
    for b in T.thread_binding(1, thread="blockIdx.x"):
        for t in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(128, t)
                B[vi] = S[vi] + A[vi]
        for t in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("S"):
                vi = T.axis.spatial(128, t)
                S[vi] = A[vi]
