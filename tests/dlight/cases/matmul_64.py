# dlight: Matmul
# 64 x 192 x 24: 64 x 64 tiles (128 divides neither M nor N), each thread
# 4 x 4 outputs, k in steps of 8.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 24), "float32"), B: T.Buffer((24, 192), "float32"),
         C: T.Buffer((64, 192), "float32")):
    for i, j, k in T.grid(64, 192, 24):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
