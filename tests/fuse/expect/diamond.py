# TVM's fusion of cases/diamond.py (tests/fuse/make_expect.py)
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_relu_transpose_add_add_rowsum(x: T.Buffer((8, 8), "float32"), y: T.Buffer((8, 8), "float32"), C_intermediate_1_2_3_4: T.Buffer((8,), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        C_intermediate = T.sblock_alloc_buffer((8, 8))
        C_intermediate_1 = T.sblock_alloc_buffer((8, 8))
        C_intermediate_1_2 = T.sblock_alloc_buffer((8, 8))
        C_intermediate_1_2_3 = T.sblock_alloc_buffer((8, 8))
        for i, j in T.grid(8, 8):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(x[vi, vj])
                T.writes(C_intermediate[vi, vj])
                C_intermediate[vi, vj] = T.max(x[vi, vj], T.float32(0.0))
        for i, j in T.grid(8, 8):
            with T.sblock("C1"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C_intermediate[vj, vi])
                T.writes(C_intermediate_1[vi, vj])
                C_intermediate_1[vi, vj] = C_intermediate[vj, vi] - T.float32(0.25)
        for i, j in T.grid(8, 8):
            with T.sblock("C2"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C_intermediate[vi, vj], y[vi, vj])
                T.writes(C_intermediate_1_2[vi, vj])
                C_intermediate_1_2[vi, vj] = C_intermediate[vi, vj] + y[vi, vj]
        for i, j in T.grid(8, 8):
            with T.sblock("C3"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C_intermediate_1[vi, vj], C_intermediate_1_2[vi, vj])
                T.writes(C_intermediate_1_2_3[vi, vj])
                C_intermediate_1_2_3[vi, vj] = C_intermediate_1[vi, vj] + C_intermediate_1_2[vi, vj]
        for i, k in T.grid(8, 8):
            with T.sblock("C4"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(C_intermediate_1_2_3[vi, vk])
                T.writes(C_intermediate_1_2_3_4[vi])
                with T.init():
                    C_intermediate_1_2_3_4[vi] = T.float32(0.0)
                C_intermediate_1_2_3_4[vi] = C_intermediate_1_2_3_4[vi] + C_intermediate_1_2_3[vi, vk]

    @R.function
    def main(x: R.Tensor((8, 8), dtype="float32"), y: R.Tensor((8, 8), dtype="float32"), v: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused_relu_transpose_add_add_rowsum, (x, y), out_ty=R.Tensor((8,), dtype="float32"))
            R.output(gv)
        return gv