# Layer norm whose moments are two sums in one block, stored one after the
# other: AddRFactor splits both (rfactor reads the plain stores as lets).
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 256), "float32"), G: T.Buffer((256,), "float32"), Bt: T.Buffer((256,), "float32"), B: T.Buffer((8, 256), "float32")):
    T.func_attr({"tir.noalias": True})
    s1 = T.alloc_buffer((8,))
    s2 = T.alloc_buffer((8,))
    for i, k in T.grid(8, 256):
        with T.block("moments"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s1[vi] = T.float32(0.0)
                s2[vi] = T.float32(0.0)
            s1[vi] = s1[vi] + A[vi, vk]
            s2[vi] = s2[vi] + A[vi, vk] * A[vi, vk]
    for i, j in T.grid(8, 256):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = (A[vi, vj] - s1[vi] * T.float32(0.00390625)) / T.sqrt(s2[vi] * T.float32(0.00390625) - s1[vi] * T.float32(0.00390625) * (s1[vi] * T.float32(0.00390625)) + T.float32(1e-05)) * G[vj] + Bt[vj]
