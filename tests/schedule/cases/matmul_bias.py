# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((12, 10), "float32"), B: T.Buffer((8, 10), "float32"), C: T.Buffer((12, 8), "float32"), D: T.Buffer((12, 8), "float32")):
    T.func_attr({"tir.noalias": True})
    temp = T.alloc_buffer((12, 8))
    for i, j, k in T.grid(12, 8, 10):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                temp[vi, vj] = T.float32(0.0)
            temp[vi, vj] = temp[vi, vj] + A[vi, vk] * B[vj, vk]
    for i, j in T.grid(12, 8):
        with T.block("bias"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = temp[vi, vj] + C[vi, vj]
