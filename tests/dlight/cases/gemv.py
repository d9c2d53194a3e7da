# dlight: Reduction
# y = W x with W laid out along the reduction, and a bias added after: the
# sum across threads, the epilogue by Fallback's step.
from tvm.script import tir as T

@T.prim_func
def main(W: T.Buffer((128, 512), "float32"), x: T.Buffer((512,), "float32"),
         bias: T.Buffer((128,), "float32"), y: T.Buffer((128,), "float32")):
    acc = T.alloc_buffer((128,))
    for i, k in T.grid(128, 512):
        with T.block("gemv"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                acc[vi] = T.float32(0)
            acc[vi] = acc[vi] + W[vi, vk] * x[vk]
    for i in range(128):
        with T.block("bias"):
            vi = T.axis.remap("S", [i])
            y[vi] = acc[vi] + bias[vi]
