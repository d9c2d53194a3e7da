# expect: 11:9: error: threadIdx.x is bound with extent 64 here and with extent 128 at line 7
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for b in T.thread_binding(1, thread="blockIdx.x"):
        for t in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("A"):
                vi = T.axis.spatial(128, t)
                A[vi] = T.float32(1)
        for t in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(64, t)
                B[vi] = A[vi]
