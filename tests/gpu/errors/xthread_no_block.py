# expect: 8:13: error: block 'B' reduces across threadIdx.x and over loop 'ko' outside it, with no loop bound to blockIdx around both
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128,), "float32"), B: T.Buffer((1,), "float32")):
    for ko in range(4):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(1, 0)
                vk = T.axis.reduce(128, ko * 32 + tx)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vk]
