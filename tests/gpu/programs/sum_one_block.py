# A whole vector summed by one block of 128 threads, with no blockIdx loop:
# the cross-thread reduction's thread loop is the kernel's outermost loop.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1,), "float32")):
    T.func_attr({"tir.noalias": True})
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        for k in range(8):
            with T.block("B"):
                vi = T.axis.spatial(1, 0)
                vk = T.axis.reduce(1024, k * 128 + tx)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vk]
