# expect: 7:5: error: threadIdx.x is bound to a loop of symbolic extent; thread extents must be positive constants
from tvm.script import tir as T

@T.prim_func
def main(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    for t in T.thread_binding(n, thread="threadIdx.x"):
        with T.block("A"):
            vi = T.axis.spatial(n, t)
            A[vi] = T.float32(1)
