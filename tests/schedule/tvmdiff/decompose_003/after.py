# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, 48), "float32"), T_matmul_NN: T.Buffer((64, 48), "float32")):
        T.func_attr({"layout_free_buffers": [1], "tirx.noalias": True})
        # with T.sblock("root"):
        for i0 in range(64):
            for i1_k_fused_init in range(1536):
                with T.sblock("T_matmul_NN_init"):
                    v_i0 = T.axis.spatial(64, i0)
                    v_i1 = T.axis.spatial(48, i1_k_fused_init // 32)
                    T.reads()
                    T.writes(T_matmul_NN[v_i0, v_i1])
                    T_matmul_NN[v_i0, v_i1] = T.float32(0.0)
            for i1_k_fused in range(1536):
                with T.sblock("T_matmul_NN_update"):
                    v_i0 = T.axis.spatial(64, i0)
                    v_i1 = T.axis.spatial(48, i1_k_fused // 32)
                    v_k = T.axis.reduce(32, i1_k_fused % 32)
                    T.reads(T_matmul_NN[v_i0, v_i1], A[v_i0, v_k], B[v_k, v_i1])
                    T.writes(T_matmul_NN[v_i0, v_i1])
                    T_matmul_NN[v_i0, v_i1] = T_matmul_NN[v_i0, v_i1] + A[v_i0, v_k] * B[v_k, v_i1]