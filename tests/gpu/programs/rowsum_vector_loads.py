# Reductions whose unrolled steps read contiguous global memory
# (src/codegen/cuda_vector.c): each thread's 8 halves of a row summed after
# one 16-byte load, and each thread's 4 floats of a row times a vector
# after one 16-byte load of each; the rows are then reduced across the
# block's threads. On a GPU each is checked against the interpreter.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 1024), "float16"), B: T.Buffer((64,), "float32"),
         X: T.Buffer((64, 512), "float32"), y: T.Buffer((512,), "float32"),
         Z: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in T.thread_binding(64, thread="blockIdx.x"):
        for j_1 in T.thread_binding(128, thread="threadIdx.x"):
            for j_2 in T.unroll(8):
                with T.block("B"):
                    vi = T.axis.spatial(64, i)
                    vj = T.axis.reduce(1024, j_1 * 8 + j_2)
                    with T.init():
                        B[vi] = T.float32(0.0)
                    B[vi] = B[vi] + T.Cast("float32", A[vi, vj])
        for k_1 in T.thread_binding(128, thread="threadIdx.x"):
            for k_2 in T.unroll(4):
                with T.block("Z"):
                    vi = T.axis.spatial(64, i)
                    vk = T.axis.reduce(512, k_1 * 4 + k_2)
                    with T.init():
                        Z[vi] = T.float32(0.0)
                    Z[vi] = Z[vi] + X[vi, vk] * y[vk]
