# A matmul with an elementwise epilogue: MultiLevelTiling moves the ReLU
# under the tiles (reverse_compute_at) instead of writing a cache.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 24), "float32"), bias: T.Buffer((24,), "float32"), D: T.Buffer((32, 24), "float32")):
    T.func_attr({"tir.noalias": True})
    C = T.alloc_buffer((32, 24))
    for i, j, k in T.grid(32, 24, 16):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(32, 24):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj] + bias[vj], T.float32(0.0))
