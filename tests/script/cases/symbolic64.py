# A symbolic int64 dimension: the signature names it as a string and the body
# declares its dtype, as TVM prints it.
# run-error: symbolic shape n of buffer
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((T.int64(4), "n"), "float32"), B: T.Buffer((T.int64(4),), "float32")):
    n = T.int64()
    # with T.block("root"):
    for i, j in T.grid(T.int64(4), n):
        with T.block("s"):
            vi, vj = T.axis.remap("SR", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + A[vi, vj]
