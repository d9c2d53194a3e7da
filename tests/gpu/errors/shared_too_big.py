# expect: 7:5: error: kernel 'main_kernel0' allocates 262144 bytes of shared memory per block; the target allows 232448 (49152 without the opt-in to dynamic shared memory)
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((65536,), "float32"), B: T.Buffer((65536,), "float32")):
    S = T.alloc_buffer((65536,), "float32", scope="shared")
    for b in T.thread_binding(1, thread="blockIdx.x"):
        for t in T.thread_binding(256, thread="threadIdx.x"):
            for k in range(256):
                with T.block("S"):
                    vi = T.axis.spatial(65536, k * 256 + t)
                    S[vi] = A[vi]
        for t in T.thread_binding(256, thread="threadIdx.x"):
            for k in range(256):
                with T.block("B"):
                    vi = T.axis.spatial(65536, k * 256 + t)
                    B[vi] = S[65535 - vi]
