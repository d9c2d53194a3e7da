# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 32), "float32"), B: T.Buffer((6, 32), "float32"), C: T.Buffer((4, 6), "float32"), E: T.Buffer((8, 4), "float32"), W: T.Buffer((4, 16), "float32"), F: T.Buffer((8, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    D = T.alloc_buffer((8, 16))
    for i, j, k in T.grid(4, 6, 32):
        with T.block("dot"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
    for i, j, k in T.grid(8, 16, 4):
        with T.block("tile"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                D[vi, vj] = T.float32(0.0)
            D[vi, vj] = D[vi, vj] + E[vi, vk] * W[vk, vj]
    for i, j in T.grid(8, 16):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            F[vi, vj] = T.max(D[vi, vj], T.float32(0.0))
