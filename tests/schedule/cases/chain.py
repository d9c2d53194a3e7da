# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), C: T.Buffer((4, 4, 8), "float32"), D: T.Buffer((15, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    E = T.alloc_buffer((16, 8))
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
    for i, j, k in T.grid(4, 4, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[vi * 4 + vj, vk] + T.float32(1.0)
    for i, j in T.grid(16, 8):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = A[vi, vj] - T.float32(1.0)
    for i, j in T.grid(15, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = E[vi, vj] * T.float32(3.0)
