# dlight: GeneralReduction
# Softmax over rows of 256, one kernel with a thread block per row: the
# maximum and the sum across its threads into shared memory, the exponent
# inlined into the sum and the normalization.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 256), "float32"), B: T.Buffer((32, 256), "float32")):
    mx = T.alloc_buffer((32,))
    e = T.alloc_buffer((32, 256))
    s = T.alloc_buffer((32,))
    for i, k in T.grid(32, 256):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                mx[vi] = T.float32(-3.4e38)
            mx[vi] = T.max(mx[vi], A[vi, vk])
    for i, k in T.grid(32, 256):
        with T.block("exp"):
            vi, vk = T.axis.remap("SS", [i, k])
            e[vi, vk] = T.exp(A[vi, vk] - mx[vi])
    for i, k in T.grid(32, 256):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + e[vi, vk]
    for i, k in T.grid(32, 256):
        with T.block("norm"):
            vi, vk = T.axis.remap("SS", [i, k])
            B[vi, vk] = e[vi, vk] / s[vi]
