# expect: 6:5: error: kernel 'main_kernel0' has 2048 threads per block; the target allows 1024
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((2, 1024), "float32")):
    for y in T.thread_binding(2, thread="threadIdx.y"):
        for x in T.thread_binding(1024, thread="threadIdx.x"):
            with T.block("A"):
                vy, vx = T.axis.remap("SS", [y, x])
                A[vy, vx] = T.float32(1)
