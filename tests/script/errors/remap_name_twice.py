# error: 8:17: iter var 'vi' is bound twice by one T.axis.remap; the first binding would be lost (give each iter var its own name)
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("A"):
            vi, vi = T.axis.remap("SS", [i, j])
            A[vi, vi] = T.float32(0.0)
