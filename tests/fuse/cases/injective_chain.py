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
    def transpose(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vj, vi] - T.float32(0.25)
    @T.prim_func
    def rowsum(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, k in T.grid(8, 8):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
    @R.function
    def main(x: R.Tensor((8, 8), dtype="float32"), y: R.Tensor((8, 8), dtype="float32"), v: R.Tensor((8,), dtype="float32")):
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.transpose, (x,), out_sinfo=R.Tensor((8, 8), dtype="float32"))
            b = R.call_tir(cls.transpose, (a,), out_sinfo=R.Tensor((8, 8), dtype="float32"))
            c = R.call_tir(cls.add, (b, y,), out_sinfo=R.Tensor((8, 8), dtype="float32"))
            d = R.call_tir(cls.transpose, (c,), out_sinfo=R.Tensor((8, 8), dtype="float32"))
            e = R.call_tir(cls.rowsum, (d,), out_sinfo=R.Tensor((8,), dtype="float32"))
            R.output(e)
        return e
