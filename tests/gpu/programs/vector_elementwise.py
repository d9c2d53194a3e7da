# Vectorized elementwise loops in CUDA (src/codegen/cuda_vector.c): each
# input that moves with the lanes read as one 16-byte (or 8-byte) vector,
# the lanes computed from it, the result stored as one vector. C = A + B
# in float16 with a per-row bias that does not move with the lanes; D, the
# float32 of C's inputs scaled, in two chunks of four lanes (16 bytes of D,
# 8 of A). On a GPU each is checked against the interpreter.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 256), "float16"), B: T.Buffer((64, 256), "float16"),
         bias: T.Buffer((64,), "float16"), C: T.Buffer((64, 256), "float16"),
         D: T.Buffer((64, 256), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for bx in T.thread_binding(16, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for v in T.vectorized(8):
                with T.block("C"):
                    r = T.axis.spatial(64, (bx * 128 + tx) // 32)
                    c = T.axis.spatial(256, (bx * 128 + tx) % 32 * 8 + v)
                    C[r, c] = A[r, c] + B[r, c] + bias[r]
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for v in T.vectorized(8):
                with T.block("D"):
                    r = T.axis.spatial(64, (bx * 128 + tx) // 32)
                    c = T.axis.spatial(256, (bx * 128 + tx) % 32 * 8 + v)
                    D[r, c] = T.Cast("float32", A[r, c]) * T.float32(0.5)
