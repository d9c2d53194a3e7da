# Row sums in MetaSchedule's cross-thread form: the serial reduce loop ko outside
# the threadIdx loop, each thread's register kept across it.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 128), "float32"), B: T.Buffer((4,), "float32")):
    for b in T.thread_binding(4, thread="blockIdx.x"):
        for ko in range(4):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(4, b)
                    vk = T.axis.reduce(128, ko * 32 + tx)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
