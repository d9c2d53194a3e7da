# A kernel that writes far outside its buffer: the child running it dies of
# SIGSEGV, and loom run reports that and exits 1.
# run-error: the kernel failed: killed by signal 11 (SIGSEGV)
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    for i in range(16):
        A[T.int64(1099511627776) * T.Cast("int64", i + 1)] = T.float32(1.0)
