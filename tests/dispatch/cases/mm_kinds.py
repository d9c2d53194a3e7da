# Four layouts and float64: each function's product goes to BLAS.
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def nt(A: T.Buffer((40, 24), "float32"), B: T.Buffer((56, 24), "float32"),
           C: T.Buffer((40, 56), "float32")):
        for i, j, k in T.grid(40, 56, 24):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]

    @T.prim_func
    def tn_f64(A: T.Buffer((24, 40), "float64"), B: T.Buffer((24, 56), "float64"),
               C: T.Buffer((40, 56), "float64")):
        for i, j, k in T.grid(40, 56, 24):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float64(0)
                C[vi, vj] = C[vi, vj] + A[vk, vi] * B[vk, vj]

    @T.prim_func
    def tt_accumulate(A: T.Buffer((24, 40), "float32"), B: T.Buffer((56, 24), "float32"),
                      C: T.Buffer((40, 56), "float32")):
        for i, j, k in T.grid(40, 56, 24):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + B[vj, vk] * A[vk, vi]

    @T.prim_func
    def relu(A: T.Buffer((40, 56), "float32"), B: T.Buffer((40, 56), "float32")):
        for i, j in T.grid(40, 56):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.max(A[vi, vj], T.float32(0))
