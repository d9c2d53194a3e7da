from tvm.script import ir as I
from tvm.script import tir as T
from tvm.script import relax as R
@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]
    @T.prim_func
    def relu(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(A[vi, vj], T.float32(0))
    @T.prim_func
    def mm(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, j, k in T.grid(8, 8, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    @R.function
    def main(x: R.Tensor((8, 8), dtype="float32"), y: R.Tensor((8, 8), dtype="float32"), v: R.Tensor((8,), dtype="float32")):
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.add, (x,y,), out_sinfo=R.Tensor((8, 8), dtype="float32"))
            b = R.call_tir(cls.relu, (a,), out_sinfo=R.Tensor((8, 8), dtype="float32"))
            c = R.call_tir(cls.mm, (b,y,), out_sinfo=R.Tensor((8, 8), dtype="float32"))
            R.output(a, c)
        return (a, c)
