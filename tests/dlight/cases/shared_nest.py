# dlight: Fallback
# explain: Reduction: does not apply: block 'B' is not a perfect nest of constant extent under the root
# trace: l5 = sch.fuse(l1, l2, preserve_unit_iters=True)
# Two reductions under shared loops: i and j are spatial for both and go to
# threads; k, a reduction for C, stays in each thread.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 12, 8, 6), "float32"), C: T.Buffer((16, 12), "float32")):
    B = T.alloc_buffer((16, 12, 8))
    for i, j, k in T.grid(16, 12, 8):
        for l in range(6):
            with T.block("B"):
                vi, vj, vk, vl = T.axis.remap("SSSR", [i, j, k, l])
                with T.init():
                    B[vi, vj, vk] = T.float32(0)
                B[vi, vj, vk] = B[vi, vj, vk] + A[vi, vj, vk, vl]
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + B[vi, vj, vk]
