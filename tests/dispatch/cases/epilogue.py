# A product and an epilogue in separate nests: the product goes to BLAS.
# Moved under the product's loop (epilogue_at.sched.py), the epilogue would
# be skipped by the call, so the C backend prints the marked nest as loops.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 24), "float32"),
         C: T.Buffer((32, 24), "float32"), D: T.Buffer((32, 24), "float32")):
    for i, j, k in T.grid(32, 24, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(32, 24):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] * T.float32(2)
