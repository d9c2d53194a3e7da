# expect: 6:5: error: blockIdx.y is bound to a loop of extent 70000; the limit is 65535
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((70000,), "float32")):
    for y in T.thread_binding(70000, thread="blockIdx.y"):
        with T.block("A"):
            vi = T.axis.spatial(70000, y)
            A[vi] = T.float32(1)
