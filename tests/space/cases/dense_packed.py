# A dense layer (A times B transposed) whose 32 columns the 16 lanes of a
# 64-byte vector divide: besides the spaces reading B as it is and through
# a transposed copy, three read it through a copy packed by the lanes,
# B_global[vj // 16, vk, vj % 16], which the copy fills 16 rows of B at a
# time.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 24), "float32"), B: T.Buffer((32, 24), "float32"), C: T.Buffer((16, 32), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(16, 32, 24):
        with T.block("dense"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
