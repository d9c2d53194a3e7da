# expect: 8:13: error: block 'B' reduces across threadIdx.x, but its update is not out = out + x
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
    for b in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(4, b)
                vk = T.axis.reduce(32, tx)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] * T.float32(0.5) + A[vi, vk]
