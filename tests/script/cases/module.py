# A module of several functions, one private, with handle parameters and
# run: --arg n=7 --arg s=3
# symbolic shapes.
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def add(a: T.handle, b: T.handle, n: T.int32):
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        for i in range(n):
            with T.block("add"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] + T.float32(1.0)

    @T.prim_func(private=True)
    def scale(A: T.Buffer((4, 4), "float32"), s: T.float32):
        for i, j in T.grid(4, 4):
            with T.block("scale"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = A[vi, vj] * s
