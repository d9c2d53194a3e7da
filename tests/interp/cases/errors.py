# Runtime errors, one per function: each must stop the run at its statement
# with the same message and leave the same partial results.
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def load_oob(A: T.Buffer((4, 5), "float32"), B: T.Buffer((4,), "float32")):
        for i, j in T.grid(4, 6):
            B[i] = B[i] + A[i, j]

    @T.prim_func
    def store_oob(A: T.Buffer((10,), "int32")):
        for i in range(12):
            A[i * 2 - 3] = i

    @T.prim_func
    def vector_oob(A: T.Buffer((10,), "int32")):
        A[T.Ramp(4, 1, 8)] = T.Broadcast(1, 8)

    @T.prim_func
    def div_zero(A: T.Buffer((8,), "int32")):
        for i in range(8):
            A[i] = 100 // (i - 5)

    @T.prim_func
    def failed_assert(A: T.Buffer((8,), "int32")):
        for i in range(8):
            assert i < 6, "i stays below six"
            A[i] = i

    @T.prim_func
    def domain(A: T.Buffer((8,), "int32")):
        for i in range(9):
            with T.block("b"):
                vi = T.axis.spatial(8, i)
                A[vi] = vi

    @T.prim_func
    def extern(A: T.Buffer((8,), "float32")):
        A[0] = T.float32(1.0)
        A[1] = T.call_extern("float32", "f", A[0])

    @T.prim_func
    def scalar_param(A: T.Buffer((8,), "int32"), n: T.int32, s: T.float32):
        for i in range(n):
            A[i] = i * n + T.Cast("int32", s * T.float32(1.5))
