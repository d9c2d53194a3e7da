# Row maxima, four rows per block (threadIdx.y), each row across 48
# threads (threadIdx.x): not a multiple of the warp, so through shared memory.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 96), "float16"), B: T.Buffer((64,), "float16")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for i_0 in T.thread_binding(16, thread="blockIdx.x"):
        for i_1 in T.thread_binding(4, thread="threadIdx.y"):
            for j_1 in T.thread_binding(48, thread="threadIdx.x"):
                for j_0 in range(2):
                    with T.block("B"):
                        vi = T.axis.spatial(64, i_0 * 4 + i_1)
                        vj = T.axis.reduce(96, j_0 * 48 + j_1)
                        T.reads(A[vi, vj])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float16(-65504.0)
                        B[vi] = T.max(B[vi], A[vi, vj])
