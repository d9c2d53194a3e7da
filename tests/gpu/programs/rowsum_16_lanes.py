# Row sums, eight rows per block, each across 16 threads: shuffles within
# segments of 16 lanes.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128, 64), "float16"), B: T.Buffer((128,), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for i_0 in T.thread_binding(16, thread="blockIdx.x"):
        for i_1 in T.thread_binding(8, thread="threadIdx.y"):
            for j_1 in T.thread_binding(16, thread="threadIdx.x"):
                for j_0 in range(4):
                    with T.block("B"):
                        vi = T.axis.spatial(128, i_0 * 8 + i_1)
                        vj = T.axis.reduce(64, j_0 * 16 + j_1)
                        T.reads(A[vi, vj])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0.0)
                        B[vi] = B[vi] + T.Cast("float32", A[vi, vj])
