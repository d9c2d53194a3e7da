# dlight: Fallback
# trace: l5 = sch.fuse(l1, l2, preserve_unit_iters=True)
# A triangular nest: k's extent depends on i, so only i and j (constant,
# outermost) go to threads; k and l run in each thread.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8, 16, 6), "float32"), B: T.Buffer((16, 8, 16, 6), "float32")):
    for i, j in T.grid(16, 8):
        for k, l in T.grid(i, 6):
            with T.block("B"):
                vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, l])
                B[vi, vj, vk, vl] = A[vi, vj, vk, vl] * T.float32(2)
