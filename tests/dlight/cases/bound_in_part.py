# dlight: Fallback
# explain: binds threads in part: Fallback binds the 1 block under no bound loop
# trace: sch.bind(loop=l4, thread_axis="blockIdx.x")
# A function that binds threads in part (a conformance case's schedule
# half done): the bound nest stays as it is, and the block under no bound
# loop is spread over threads rather than run in a kernel of one thread.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((256, 256), "float32"), C: T.Buffer((256, 256), "float32")):
    B = T.alloc_buffer((256, 256), "float32")
    for i, j in T.grid(256, 256):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for bx in T.thread_binding(256, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [bx, tx])
                C[vi, vj] = B[vi, vj] + T.float32(1)
