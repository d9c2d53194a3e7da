# dlight: GeneralReduction
# Softmax over rows of 100 (no power of two divides them): 64 threads a
# row, each split's last step predicated off past the row's end.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 100), "float32"), B: T.Buffer((8, 100), "float32")):
    mx = T.alloc_buffer((8,))
    s = T.alloc_buffer((8,))
    for i, k in T.grid(8, 100):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                mx[vi] = T.float32(-3.4e38)
            mx[vi] = T.max(mx[vi], A[vi, vk])
    for i, k in T.grid(8, 100):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + T.exp(A[vi, vk] - mx[vi])
    for i, k in T.grid(8, 100):
        with T.block("norm"):
            vi, vk = T.axis.remap("SS", [i, k])
            B[vi, vk] = T.exp(A[vi, vk] - mx[vi]) / s[vi]
