# dlight: none
# explain: Fallback: does not apply: no block has loops of its own with a spatial one to spread over threads
# The sum of a whole vector: no spatial loop for blocks or threads. Left as
# it is; the GPU lowering runs it in one thread.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4096,), "float32"), B: T.Buffer((1,), "float32")):
    for k in range(4096):
        with T.block("B"):
            vk = T.axis.remap("R", [k])
            with T.init():
                B[0] = T.float32(0)
            B[0] = B[0] + A[vk]
