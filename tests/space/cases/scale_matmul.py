# A spatial producer that AutoInline inlines into the matmul reading it.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), W: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("scale"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
    for i, j, k in T.grid(16, 16, 16):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + B[vi, vk] * W[vk, vj]
