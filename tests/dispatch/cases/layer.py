# One layer of an MLP: Y = relu(X W + b). The product goes to BLAS; the bias
# and the relu stay in TensorIR (the C backend's loops).
from tvm.script import tir as T

@T.prim_func
def layer(X: T.Buffer((96, 80), "float32"), W: T.Buffer((80, 48), "float32"),
          b: T.Buffer((48,), "float32"), Y: T.Buffer((96, 48), "float32")):
    H = T.alloc_buffer((96, 48), "float32")
    for i, j, k in T.grid(96, 48, 80):
        with T.block("H"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                H[vi, vj] = T.float32(0)
            H[vi, vj] = H[vi, vj] + X[vi, vk] * W[vk, vj]
    for i, j in T.grid(96, 48):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = T.max(H[vi, vj] + b[vj], T.float32(0))
