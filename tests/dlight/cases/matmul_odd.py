# dlight: Fallback
# explain: Matmul: does not apply: block 'C': no tile divides 100 x 128 x 32 (tiles of 128 down to 16, k steps down to 2)
# A shape the tiles do not divide: one thread per output element.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((100, 32), "float32"), B: T.Buffer((32, 128), "float32"),
         C: T.Buffer((100, 128), "float32")):
    for i, j, k in T.grid(100, 128, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
