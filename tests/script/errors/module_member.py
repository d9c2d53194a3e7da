# error: 7:5: an @I.ir_module class holds only @T.prim_func and @R.function functions
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    size = 8

    @T.prim_func
    def main(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = T.float32(0.0)
