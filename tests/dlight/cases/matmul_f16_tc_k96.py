# dlight: Matmul
# trace: tensor_intrin="wmma_sync_16x16x16_f16f16f32"
# trace: factors=[None, 2, 16], preserve_unit_iters=True
# K a multiple of 32 but not of 64: the tensor-core tiling with k in steps
# of 32 through shared memory.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((256, 96), "float16"), B: T.Buffer((96, 128), "float16"),
         C: T.Buffer((256, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(256, 128, 96):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
