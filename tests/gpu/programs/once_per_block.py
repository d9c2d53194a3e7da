# A store outside the threadIdx loop of its kernel: TensorIR runs it once
# per block, so the GPU runs it in the block's thread 0 only.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4, 32), "float32")):
    T.func_attr({"tir.noalias": True})
    for b in T.thread_binding(4, thread="blockIdx.x"):
        with T.block("B"):
            vb = T.axis.spatial(4, b)
            B[vb] = A[vb, 0] * T.float32(2)
        for t in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("C"):
                vb, vt = T.axis.remap("SS", [b, t])
                C[vb, vt] = A[vb, vt] + T.float32(1)
