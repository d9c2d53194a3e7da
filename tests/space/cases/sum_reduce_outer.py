# Two reductions AddRFactor must reorder or fuse first: the sum of a whole
# matrix (two reduce loops, no spatial one) and column sums whose reduce
# loop runs outside the spatial one.
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def total(A: T.Buffer((64, 256), "float32"), B: T.Buffer((1,), "float32")):
        for i, j in T.grid(64, 256):
            with T.block("total"):
                vi, vj = T.axis.remap("RR", [i, j])
                with T.init():
                    B[0] = T.float32(0.0)
                B[0] = B[0] + A[vi, vj]

    @T.prim_func
    def columns(A: T.Buffer((512, 8), "float32"), B: T.Buffer((8,), "float32")):
        for k, j in T.grid(512, 8):
            with T.block("columns"):
                vk, vj = T.axis.remap("RS", [k, j])
                with T.init():
                    B[vj] = T.float32(0.0)
                B[vj] = B[vj] + A[vk, vj]
