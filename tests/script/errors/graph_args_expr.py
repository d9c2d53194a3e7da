# error: 19:39: expected the name of a tensor
from tvm.script import ir as I
from tvm.script import tir as T
from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func
    def relu(A: T.Buffer((1, 4), "float32"), B: T.Buffer((1, 4), "float32")):
        for i, j in T.grid(1, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.max(A[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor((1, 4), dtype="float32")):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.relu, x - x, out_sinfo=R.Tensor((1, 4), dtype="float32"))
            lv1 = R.call_tir(cls.relu, (lv,), out_sinfo=R.Tensor((1, 4), dtype="float32"))
            R.output(lv1)
        return lv1
