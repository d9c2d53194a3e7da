# A kernel that would run for centuries: loom run kills it at the timeout,
# reports that and exits 1.
# run: --timeout 300
# run-error: the kernel failed: timed out after 300 ms
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1,), "float32")):
    for i in range(T.int64(4611686018427387904)):
        A[0] = A[0] * T.float32(0.5) + T.float32(1.0)
