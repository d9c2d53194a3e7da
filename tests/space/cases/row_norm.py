# Rows scaled by their sums: 8 rows leave 2 cores idle unless the sums are
# split (AddRFactor), and the scaling consumes them (RandomComputeLocation
# places the sums and their rfactor block).
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 4096), "float32"), B: T.Buffer((8, 4096), "float32")):
    T.func_attr({"tir.noalias": True})
    total = T.alloc_buffer((8,))
    for i, k in T.grid(8, 4096):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                total[vi] = T.float32(0.0)
            total[vi] = total[vi] + A[vi, vk]
    for i, j in T.grid(8, 4096):
        with T.block("scale"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] / total[vi]
