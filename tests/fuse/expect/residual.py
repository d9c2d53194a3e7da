# TVM's fusion of cases/residual.py (tests/fuse/make_expect.py)
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_mm_add_relu(b: T.Buffer((8, 8), "float32"), y: T.Buffer((8, 8), "float32"), a: T.Buffer((8, 8), "float32"), C_intermediate_1_2: T.Buffer((8, 8), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        C_intermediate = T.sblock_alloc_buffer((8, 8))
        C_intermediate_1 = T.sblock_alloc_buffer((8, 8))
        for i, j, k in T.grid(8, 8, 8):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(b[vi, vk], y[vk, vj])
                T.writes(C_intermediate[vi, vj])
                with T.init():
                    C_intermediate[vi, vj] = T.float32(0.0)
                C_intermediate[vi, vj] = C_intermediate[vi, vj] + b[vi, vk] * y[vk, vj]
        for i, j in T.grid(8, 8):
            with T.sblock("C1"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C_intermediate[vi, vj], a[vi, vj])
                T.writes(C_intermediate_1[vi, vj])
                C_intermediate_1[vi, vj] = C_intermediate[vi, vj] + a[vi, vj]
        for i, j in T.grid(8, 8):
            with T.sblock("C2"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C_intermediate_1[vi, vj])
                T.writes(C_intermediate_1_2[vi, vj])
                C_intermediate_1_2[vi, vj] = T.max(C_intermediate_1[vi, vj], T.float32(0.0))

    @T.prim_func(s_tir=True)
    def mm(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i, j, k in T.grid(8, 8, 8):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func(s_tir=True)
    def relu(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i, j in T.grid(8, 8):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(A[vi, vj], T.float32(0.0))

    @R.function
    def main(x: R.Tensor((8, 8), dtype="float32"), y: R.Tensor((8, 8), dtype="float32"), v: R.Tensor((8,), dtype="float32")) -> R.Tensor((8, 8), dtype="float32"):
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.mm, (x, y), out_ty=R.Tensor((8, 8), dtype="float32"))
            b = R.call_tir(cls.relu, (a,), out_ty=R.Tensor((8, 8), dtype="float32"))
            gv = R.call_tir(cls.fused_mm_add_relu, (b, y, a), out_ty=R.Tensor((8, 8), dtype="float32"))
            R.output(gv)
        return gv