# Matrix times vector, A as stored and transposed, float32 and float64.
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def gemv(A: T.Buffer((48, 40), "float32"), x: T.Buffer((40,), "float32"),
             y: T.Buffer((48,), "float32")):
        for i, k in T.grid(48, 40):
            with T.block("y"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    y[vi] = T.float32(0)
                y[vi] = y[vi] + A[vi, vk] * x[vk]

    @T.prim_func
    def gemv_t(A: T.Buffer((40, 48), "float64"), x: T.Buffer((40,), "float64"),
               y: T.Buffer((48,), "float64")):
        for i, k in T.grid(48, 40):
            with T.block("y"):
                vi, vk = T.axis.remap("SR", [i, k])
                y[vi] = y[vi] + x[vk] * A[vk, vi]
