# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 6), "float32"), B: T.Buffer((8, 6), "float32"), C: T.Buffer((8, 12), "float32"), D: T.Buffer((8, 12), "float32"), E: T.Buffer((8,), "float32")):
    for i, j in T.grid(8, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
    for i, j in T.grid(8, 12):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] + T.float32(1.0)
    for i, k in T.grid(8, 12):
        with T.block("E"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                E[vi] = T.float32(0.0)
            E[vi] = E[vi] + C[vi, vk]
