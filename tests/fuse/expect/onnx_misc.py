# TVM's fusion of tests/onnx/cases/misc.onnx (tests/fuse/make_expect.py)
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_add_concatenate_clip(lv1: T.Buffer((5, 2), "float32"), c: T.Buffer((5, 2), "float32"), compute_intermediate: T.Buffer((15, 2), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        T_add_intermediate = T.sblock_alloc_buffer((5, 2))
        T_concat_intermediate = T.sblock_alloc_buffer((15, 2))
        for ax0, ax1 in T.grid(5, 2):
            with T.sblock("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(lv1[v_ax0, v_ax1], c[v_ax0, v_ax1])
                T.writes(T_add_intermediate[v_ax0, v_ax1])
                T_add_intermediate[v_ax0, v_ax1] = lv1[v_ax0, v_ax1] + c[v_ax0, v_ax1]
        for i0, i1 in T.grid(15, 2):
            with T.sblock("T_concat"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(lv1[v_i0 - 10, v_i1], T_add_intermediate[v_i0 - 5, v_i1])
                T.writes(T_concat_intermediate[v_i0, v_i1])
                T_concat_intermediate[v_i0, v_i1] = T.if_then_else(10 <= v_i0, lv1[v_i0 - 10, v_i1], T.if_then_else(5 <= v_i0, T_add_intermediate[v_i0 - 5, v_i1], T_add_intermediate[v_i0, v_i1]))
        for i0, i1 in T.grid(15, 2):
            with T.sblock("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_concat_intermediate[v_i0, v_i1])
                T.writes(compute_intermediate[v_i0, v_i1])
                compute_intermediate[v_i0, v_i1] = T.min(T.max(T_concat_intermediate[v_i0, v_i1], T.float32(-0.5)), T.float32(0.5))

    @T.prim_func(s_tir=True)
    def matmul(A: T.Buffer((2, 1, 3, 4), "float32"), B: T.Buffer((5, 4, 2), "float32"), matmul: T.Buffer((2, 5, 3, 2), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i0, i1, i2, i3, k in T.grid(2, 5, 3, 2, 4):
            with T.sblock("matmul"):
                v_i0, v_i1, v_i2, v_i3, v_k = T.axis.remap("SSSSR", [i0, i1, i2, i3, k])
                T.reads(A[v_i0, 0, v_i2, v_k], B[v_i1, v_k, v_i3])
                T.writes(matmul[v_i0, v_i1, v_i2, v_i3])
                with T.init():
                    matmul[v_i0, v_i1, v_i2, v_i3] = T.float32(0.0)
                matmul[v_i0, v_i1, v_i2, v_i3] = matmul[v_i0, v_i1, v_i2, v_i3] + A[v_i0, 0, v_i2, v_k] * B[v_i1, v_k, v_i3]

    @T.prim_func(s_tir=True)
    def matmul1(A: T.Buffer((4,), "float32"), B: T.Buffer((5, 4, 2), "float32"), matmul: T.Buffer((5, 2), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i0, i1, k in T.grid(5, 2, 4):
            with T.sblock("matmul"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(A[v_k], B[v_i0, v_k, v_i1])
                T.writes(matmul[v_i0, v_i1])
                with T.init():
                    matmul[v_i0, v_i1] = T.float32(0.0)
                matmul[v_i0, v_i1] = matmul[v_i0, v_i1] + A[v_k] * B[v_i0, v_k, v_i1]

    @T.prim_func(s_tir=True)
    def reshape(A: T.Buffer((2, 5, 3, 2), "float32"), T_reshape: T.Buffer((2, 30), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(2, 30):
            with T.sblock("T_reshape"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[(v_ax0 * 30 + v_ax1) // 30, (v_ax0 * 30 + v_ax1) // 6 % 5, (v_ax0 * 30 + v_ax1) // 2 % 3, (v_ax0 * 30 + v_ax1) % 2])
                T.writes(T_reshape[v_ax0, v_ax1])
                T_reshape[v_ax0, v_ax1] = A[(v_ax0 * 30 + v_ax1) // 30, (v_ax0 * 30 + v_ax1) // 6 % 5, (v_ax0 * 30 + v_ax1) // 2 % 3, (v_ax0 * 30 + v_ax1) % 2]

    @R.function
    def main(a: R.Tensor((2, 1, 3, 4), dtype="float32"), b: R.Tensor((5, 4, 2), dtype="float32"), v: R.Tensor((4,), dtype="float32"), c: R.Tensor((5, 2), dtype="float32")) -> R.Tuple(R.Tensor((2, 30), dtype="float32"), R.Tensor((15, 2), dtype="float32")):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.matmul, (a, b), out_ty=R.Tensor((2, 5, 3, 2), dtype="float32"))
            lv1 = R.call_tir(cls.matmul1, (v, b), out_ty=R.Tensor((5, 2), dtype="float32"))
            lv2 = R.call_tir(cls.reshape, (lv,), out_ty=R.Tensor((2, 30), dtype="float32"))
            gv = R.call_tir(cls.fused_add_concatenate_clip, (lv1, c), out_ty=R.Tensor((15, 2), dtype="float32"))
            R.output(lv2, gv)
        return (lv2, gv)