# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 12), "float32"), B: T.Buffer((12, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(16, 8, 12):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
