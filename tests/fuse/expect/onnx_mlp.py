# TVM's fusion of tests/onnx/cases/mlp.onnx (tests/fuse/make_expect.py)
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_gemm1_relu1(lv1: T.Buffer((4, 32), "float32"), fc1_weight: T.Buffer((24, 32), "float32"), fc1_bias: T.Buffer((24,), "float32"), compute_intermediate: T.Buffer((4, 24), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        T_matmul_NT = T.sblock_alloc_buffer((4, 24))
        compute = T.sblock_alloc_buffer((24,))
        T_add_intermediate = T.sblock_alloc_buffer((4, 24))
        for i0, i1, k in T.grid(4, 24, 32):
            with T.sblock("T_matmul_NT"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(lv1[v_i0, v_k], fc1_weight[v_i1, v_k])
                T.writes(T_matmul_NT[v_i0, v_i1])
                with T.init():
                    T_matmul_NT[v_i0, v_i1] = T.float32(0.0)
                T_matmul_NT[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + lv1[v_i0, v_k] * fc1_weight[v_i1, v_k]
        for i0 in range(24):
            with T.sblock("compute"):
                v_i0 = T.axis.spatial(24, i0)
                T.reads(fc1_bias[v_i0])
                T.writes(compute[v_i0])
                compute[v_i0] = fc1_bias[v_i0]
        for i0, i1 in T.grid(4, 24):
            with T.sblock("T_add"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_matmul_NT[v_i0, v_i1], compute[v_i1])
                T.writes(T_add_intermediate[v_i0, v_i1])
                T_add_intermediate[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + compute[v_i1]
        for i0, i1 in T.grid(4, 24):
            with T.sblock("compute1"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_add_intermediate[v_i0, v_i1])
                T.writes(compute_intermediate[v_i0, v_i1])
                compute_intermediate[v_i0, v_i1] = T.max(T_add_intermediate[v_i0, v_i1], T.float32(0.0))

    @T.prim_func(private=True, s_tir=True)
    def fused_gemm_relu(x: T.Buffer((4, 16), "float32"), fc0_weight: T.Buffer((32, 16), "float32"), fc0_bias: T.Buffer((32,), "float32"), compute_intermediate: T.Buffer((4, 32), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        T_matmul_NT = T.sblock_alloc_buffer((4, 32))
        compute = T.sblock_alloc_buffer((32,))
        T_add_intermediate = T.sblock_alloc_buffer((4, 32))
        for i0, i1, k in T.grid(4, 32, 16):
            with T.sblock("T_matmul_NT"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(x[v_i0, v_k], fc0_weight[v_i1, v_k])
                T.writes(T_matmul_NT[v_i0, v_i1])
                with T.init():
                    T_matmul_NT[v_i0, v_i1] = T.float32(0.0)
                T_matmul_NT[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + x[v_i0, v_k] * fc0_weight[v_i1, v_k]
        for i0 in range(32):
            with T.sblock("compute"):
                v_i0 = T.axis.spatial(32, i0)
                T.reads(fc0_bias[v_i0])
                T.writes(compute[v_i0])
                compute[v_i0] = fc0_bias[v_i0]
        for i0, i1 in T.grid(4, 32):
            with T.sblock("T_add"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_matmul_NT[v_i0, v_i1], compute[v_i1])
                T.writes(T_add_intermediate[v_i0, v_i1])
                T_add_intermediate[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + compute[v_i1]
        for i0, i1 in T.grid(4, 32):
            with T.sblock("compute1"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_add_intermediate[v_i0, v_i1])
                T.writes(compute_intermediate[v_i0, v_i1])
                compute_intermediate[v_i0, v_i1] = T.max(T_add_intermediate[v_i0, v_i1], T.float32(0.0))

    @T.prim_func(s_tir=True)
    def gemm2(A: T.Buffer((4, 24), "float32"), B: T.Buffer((10, 24), "float32"), C: T.Buffer((10,), "float32"), T_add: T.Buffer((4, 10), "float32")):
        T.func_attr({"layout_free_buffers": [1], "tirx.noalias": True})
        # with T.sblock("root"):
        T_matmul_NT = T.sblock_alloc_buffer((4, 10))
        compute = T.sblock_alloc_buffer((10,))
        for i0, i1, k in T.grid(4, 10, 24):
            with T.sblock("T_matmul_NT"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(A[v_i0, v_k], B[v_i1, v_k])
                T.writes(T_matmul_NT[v_i0, v_i1])
                with T.init():
                    T_matmul_NT[v_i0, v_i1] = T.float32(0.0)
                T_matmul_NT[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + A[v_i0, v_k] * B[v_i1, v_k]
        for i0 in range(10):
            with T.sblock("compute"):
                v_i0 = T.axis.spatial(10, i0)
                T.reads(C[v_i0])
                T.writes(compute[v_i0])
                compute[v_i0] = C[v_i0]
        for i0, i1 in T.grid(4, 10):
            with T.sblock("T_add"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_matmul_NT[v_i0, v_i1], compute[v_i1])
                T.writes(T_add[v_i0, v_i1])
                T_add[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + compute[v_i1]

    @R.function
    def main(x: R.Tensor((4, 16), dtype="float32"), fc0_weight: R.Tensor((32, 16), dtype="float32"), fc0_bias: R.Tensor((32,), dtype="float32"), fc1_weight: R.Tensor((24, 32), dtype="float32"), fc1_bias: R.Tensor((24,), dtype="float32"), fc2_weight: R.Tensor((10, 24), dtype="float32"), fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor((4, 10), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.fused_gemm_relu, (x, fc0_weight, fc0_bias), out_ty=R.Tensor((4, 32), dtype="float32"))
            lv1 = R.call_tir(cls.fused_gemm1_relu1, (lv, fc1_weight, fc1_bias), out_ty=R.Tensor((4, 24), dtype="float32"))
            lv4 = R.call_tir(cls.gemm2, (lv1, fc2_weight, fc2_bias), out_ty=R.Tensor((4, 10), dtype="float32"))
            R.output(lv4)
        return lv4