# Softmax over rows of 1024, 16384 rows of float16, computed in float32.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16384, 1024), "float16"), B: T.Buffer((16384, 1024), "float16")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    mx = T.alloc_buffer((16384,))
    s = T.alloc_buffer((16384,))
    for i, k in T.grid(16384, 1024):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                mx[vi] = T.float32(-3.4e38)
            mx[vi] = T.max(mx[vi], T.Cast("float32", A[vi, vk]))
    for i, k in T.grid(16384, 1024):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + T.exp(T.Cast("float32", A[vi, vk]) - mx[vi])
    for i, k in T.grid(16384, 1024):
        with T.block("norm"):
            vi, vk = T.axis.remap("SS", [i, k])
            B[vi, vk] = T.Cast("float16", T.exp(T.Cast("float32", A[vi, vk]) - mx[vi]) / s[vi])
