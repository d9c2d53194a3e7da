# Iterations of a parallel loop that all update A[0]: a race ThreadSanitizer
# must report when the kernel runs on several threads.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1,), "float32"), B: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        with T.block("sum"):
            vi = T.axis.spatial(4096, i)
            A[0] = A[0] + B[vi]
