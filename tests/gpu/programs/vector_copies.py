# Vectorized copies in CUDA (src/codegen/cuda_vector.c): A to B 8 halves at
# a time through a padded shared tile (16-byte moves), C to D 4 floats at a
# time (16-byte moves), and E to F one element off alignment, which stays
# a loop of scalar copies. On a GPU each is checked against the interpreter.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float16"), B: T.Buffer((64, 64), "float16"),
         C: T.Buffer((4096,), "float32"), D: T.Buffer((4096,), "float32"),
         E: T.Buffer((4104,), "float16"), F: T.Buffer((4096,), "float16")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    S = T.alloc_buffer((64, 72), "float16", scope="shared")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for o in range(4):
                    for v in T.vectorized(8):
                        with T.block("S"):
                            r = T.axis.spatial(64, ((o * 4 + ty) * 32 + tx) * 8 // 64 + v * 0)
                            c = T.axis.spatial(64, (((o * 4 + ty) * 32 + tx) * 8 + v) % 64)
                            S[r, c] = A[r, c]
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for o in range(4):
                    for v in T.vectorized(8):
                        with T.block("B"):
                            r = T.axis.spatial(64, ((o * 4 + ty) * 32 + tx) * 8 // 64 + v * 0)
                            c = T.axis.spatial(64, (((o * 4 + ty) * 32 + tx) * 8 + v) % 64)
                            B[r, c] = S[r, c]
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for o in range(8):
                    for v in T.vectorized(4):
                        with T.block("D"):
                            i = T.axis.spatial(4096, ((o * 4 + ty) * 32 + tx) * 4 + v)
                            D[i] = C[i]
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for o in range(4):
                    for v in T.vectorized(8):
                        with T.block("F"):
                            i = T.axis.spatial(4096, ((o * 4 + ty) * 32 + tx) * 8 + v)
                            F[i] = E[i + 1]
