# dlight: Matmul
# trace: tensor_intrin="wmma_sync_16x16x16_f16f16f32"
# trace: tensor_intrin="wmma_store_16x16x16_f32_global"
# trace: sch.cache_read(block=b0, read_buffer_index=1, storage_scope="wmma.matrix_a")
# trace: factors=[None, 4, 16], preserve_unit_iters=True
# trace: factors=[None, 4, 32, 8], preserve_unit_iters=True
# trace: sch.storage_align(block=
# C = A B in float16 accumulated in float32, A[i, k] and B[k, j], on a GPU with
# float16 tensor cores: tiles of 128 x 128 by four warps, each a 64 x 64 tile
# of wmma accumulators (bench/gpu/matmul_wmma.sched.py's schedule), k in
# steps of 64 through shared tiles copied 16 bytes at a time into padded rows.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((256, 64), "float16"), B: T.Buffer((64, 128), "float16"),
         C: T.Buffer((256, 128), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(256, 128, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
