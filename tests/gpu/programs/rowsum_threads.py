# Row sums with a cross-thread reduction: a row per block of 256 threads,
# four elements per thread, then warp shuffles and shared memory.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 1024), "float16"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for i in T.thread_binding(64, thread="blockIdx.x"):
        for j_1 in T.thread_binding(256, thread="threadIdx.x"):
            for j_0 in T.unroll(4):
                with T.block("B"):
                    vi = T.axis.spatial(64, i)
                    vj = T.axis.reduce(1024, j_0 * 256 + j_1)
                    T.reads(A[vi, vj])
                    T.writes(B[vi])
                    with T.init():
                        B[vi] = T.float32(0.0)
                    B[vi] = B[vi] + T.Cast("float32", A[vi, vj])
