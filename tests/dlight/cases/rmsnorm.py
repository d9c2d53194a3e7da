# dlight: GeneralReduction
# RMS norm over rows of 512: the sum of squares across a block's threads
# into shared memory, then each element scaled, in one kernel.
from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((16, 512), "float32"), W: T.Buffer((512,), "float32"),
         Y: T.Buffer((16, 512), "float32")):
    ss = T.alloc_buffer((16,))
    for i, k in T.grid(16, 512):
        with T.block("ss"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                ss[vi] = T.float32(0)
            ss[vi] = ss[vi] + X[vi, vk] * X[vi, vk]
    for i, k in T.grid(16, 512):
        with T.block("norm"):
            vi, vk = T.axis.remap("SS", [i, k])
            Y[vi, vk] = X[vi, vk] * W[vk] / T.sqrt(ss[vi] / T.float32(512) + T.float32(1e-5))
