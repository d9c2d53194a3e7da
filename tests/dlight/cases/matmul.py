# dlight: Matmul
# C = A B, 256 x 128 x 32: two 128 x 128 tiles of 16 x 16 threads, k in
# steps of 16 through shared memory.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((256, 32), "float32"), B: T.Buffer((32, 128), "float32"),
         C: T.Buffer((256, 128), "float32")):
    for i, j, k in T.grid(256, 128, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
