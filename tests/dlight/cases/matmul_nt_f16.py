# dlight: Matmul
# trace: tensor_intrin="wmma_load_16x16x16_f16_b_trans_shared"
# trace: tensor_intrin="wmma_sync_16x16x16_f16f16f32_trans"
# C = A Bᵀ in float16 accumulated in float32, followed by a relu: the
# matmul on tensor cores (B's n-by-k tiles loaded column-major), the relu by
# Fallback's step.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128, 64), "float16"), B: T.Buffer((128, 64), "float16"),
         D: T.Buffer((128, 128), "float32")):
    C = T.alloc_buffer((128, 128))
    for i, j, k in T.grid(128, 128, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vj, vk])
    for i, j in T.grid(128, 128):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))
