# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10, 6), "float16")):
    for i in range(10):
        if i % 2 == 0:
            for j in range(6):
                with T.block("block1"):
                    A[i, j] = 1
        else:
            for j in range(6):
                with T.block("block2"):
                    A[i, j] = 2
