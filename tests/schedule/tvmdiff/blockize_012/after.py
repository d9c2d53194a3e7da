# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32, 48), "float32"), T_matmul_NN: T.Buffer((64, 48), "float32")):
        T.func_attr({"layout_free_buffers": [1], "tirx.noalias": True})
        # with T.sblock("root"):
        with T.sblock("T_matmul_NN_o"):
            v_i0_o = T.axis.spatial(1, 0)
            v_i1_o = T.axis.spatial(1, 0)
            v_k_o = T.axis.reduce(1, 0)
            T.reads(A[0:64, 0:32], B[0:32, 0:48])
            T.writes(T_matmul_NN[0:64, 0:48])
            with T.init():
                for i0_i1_k_fused in range(98304):
                    with T.sblock("T_matmul_NN_init"):
                        v_i0_i_init = T.axis.spatial(64, i0_i1_k_fused // 1536)
                        v_i1_i_init = T.axis.spatial(48, i0_i1_k_fused % 1536 // 32)
                        T.reads()
                        T.writes(T_matmul_NN[v_i0_i_init, v_i1_i_init])
                        T_matmul_NN[v_i0_i_init, v_i1_i_init] = T.float32(0.0)
            for i0_i1_k_fused in range(98304):
                with T.sblock("T_matmul_NN"):
                    v_i0_i = T.axis.spatial(64, i0_i1_k_fused // 1536)
                    v_i1_i = T.axis.spatial(48, i0_i1_k_fused % 1536 // 32)
                    v_k_i = T.axis.reduce(32, i0_i1_k_fused % 32)
                    T.reads(T_matmul_NN[v_i0_i, v_i1_i], A[v_i0_i, v_k_i], B[v_k_i, v_i1_i])
                    T.writes(T_matmul_NN[v_i0_i, v_i1_i])
                    T.sblock_attr({"pragma_unroll_explicit": 1})
                    T_matmul_NN[v_i0_i, v_i1_i] = T_matmul_NN[v_i0_i, v_i1_i] + A[v_i0_i, v_k_i] * B[v_k_i, v_i1_i]