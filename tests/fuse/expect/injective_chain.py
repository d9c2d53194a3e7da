# TVM's fusion of cases/injective_chain.py (tests/fuse/make_expect.py)
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_transpose_transpose_add_transpose(x: T.Buffer((8, 8), "float32"), y: T.Buffer((8, 8), "float32"), C_intermediate_1_2_3: T.Buffer((8, 8), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        C_intermediate = T.sblock_alloc_buffer((8, 8))
        C_intermediate_1 = T.sblock_alloc_buffer((8, 8))
        C_intermediate_1_2 = T.sblock_alloc_buffer((8, 8))
        for i, j in T.grid(8, 8):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(x[vj, vi])
                T.writes(C_intermediate[vi, vj])
                C_intermediate[vi, vj] = x[vj, vi] - T.float32(0.25)
        for i, j in T.grid(8, 8):
            with T.sblock("C1"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C_intermediate[vj, vi])
                T.writes(C_intermediate_1[vi, vj])
                C_intermediate_1[vi, vj] = C_intermediate[vj, vi] - T.float32(0.25)
        for i, j in T.grid(8, 8):
            with T.sblock("C2"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C_intermediate_1[vi, vj], y[vi, vj])
                T.writes(C_intermediate_1_2[vi, vj])
                C_intermediate_1_2[vi, vj] = C_intermediate_1[vi, vj] + y[vi, vj]
        for i, j in T.grid(8, 8):
            with T.sblock("C3"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C_intermediate_1_2[vj, vi])
                T.writes(C_intermediate_1_2_3[vi, vj])
                C_intermediate_1_2_3[vi, vj] = C_intermediate_1_2[vj, vi] - T.float32(0.25)

    @T.prim_func(s_tir=True)
    def rowsum(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i, k in T.grid(8, 8):
            with T.sblock("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(C[vi])
                with T.init():
                    C[vi] = T.float32(0.0)
                C[vi] = C[vi] + A[vi, vk]

    @R.function
    def main(x: R.Tensor((8, 8), dtype="float32"), y: R.Tensor((8, 8), dtype="float32"), v: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.fused_transpose_transpose_add_transpose, (x, y), out_ty=R.Tensor((8, 8), dtype="float32"))
            e = R.call_tir(cls.rowsum, (lv,), out_ty=R.Tensor((8,), dtype="float32"))
            R.output(e)
        return e