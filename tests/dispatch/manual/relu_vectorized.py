# A pair for `loom compile --pipeline manual=DIR`: any function structurally
# equal to `before` (names aside) is replaced by `after`, which computes the
# same with its rows parallel and its columns vectorized.
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def before(A: T.Buffer((40, 56), "float32"), B: T.Buffer((40, 56), "float32")):
        for i, j in T.grid(40, 56):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.max(A[vi, vj], T.float32(0))

    @T.prim_func
    def after(A: T.Buffer((40, 56), "float32"), B: T.Buffer((40, 56), "float32")):
        for i in T.parallel(40):
            for j in T.vectorized(56):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.max(A[vi, vj], T.float32(0))
