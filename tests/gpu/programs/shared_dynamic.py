# 64 KiB of shared memory, past the static 48 KiB: the kernel takes it as
# dynamic shared memory, with the opt-in attribute at launch.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16384,), "float32"), B: T.Buffer((16384,), "float32")):
    S = T.alloc_buffer((16384,), "float32", scope="shared")
    for b in T.thread_binding(1, thread="blockIdx.x"):
        for t in T.thread_binding(256, thread="threadIdx.x"):
            for k in range(64):
                with T.block("S"):
                    vi = T.axis.spatial(16384, k * 256 + t)
                    S[vi] = A[vi]
        for t in T.thread_binding(256, thread="threadIdx.x"):
            for k in range(64):
                with T.block("B"):
                    vi = T.axis.spatial(16384, k * 256 + t)
                    B[vi] = S[16383 - vi]
