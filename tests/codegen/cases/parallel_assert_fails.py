# An assert inside a parallel loop that fails for some iterations: the kernel
# returns -1 after the loop, and loom run reports it and exits 1.
# run-error: the kernel returned -1 (a T.assert failed)
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    for i in T.parallel(64):
        x: T.int32 = A[i] % 7
        assert i < 40, "i is below 40"
        B[i] = x * 2
