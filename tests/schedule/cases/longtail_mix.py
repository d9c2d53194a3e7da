# A stencil with offset loops, a triangular in-place update and a histogram, after loom normalize.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 48), "float32"), H: T.Buffer((16,), "int32"), X: T.Buffer((64,), "int32")):
    # with T.block("root"):
    for i, j in T.grid(31, 46):
        with T.block("sweep"):
            v_i = T.axis.scan(31, i)
            v_j = T.axis.spatial(46, j)
            T.reads(A[v_i:v_i + 2, v_j:v_j + 3])
            T.writes(A[v_i + 1, v_j + 1])
            A[v_i + 1, v_j + 1] = A[v_i, v_j] + A[v_i, v_j + 2] - A[v_i + 1, v_j + 1]
    for i in range(8):
        for j in range(i + 1):
            with T.block("lower"):
                v_i = T.axis.spatial(8, i)
                v_j = T.axis.spatial(8, j)
                T.reads(A[v_i, v_j])
                T.writes(A[v_i, v_j])
                A[v_i, v_j] = A[v_i, v_j] * T.float32(0.5)
    for k in range(64):
        with T.block("hist"):
            v_k = T.axis.scan(64, k)
            T.reads(H[X[v_k] % 16], X[v_k])
            T.writes(H[X[v_k] % 16])
            H[X[v_k] % 16] = H[X[v_k] % 16] + 1
