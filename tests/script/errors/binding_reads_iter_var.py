# error: 9:37: the binding of iter var 'vj' reads iter var 'vi' of the same block
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32")):
    for i, j in T.grid(64, 16):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            vj = T.axis.spatial(64, j + vi)
            A[vi, vj] = T.float32(0.0)
