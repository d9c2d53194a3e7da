# TVM's fusion of tests/onnx/cases/convnet.onnx (tests/fuse/make_expect.py)
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def flatten(A: T.Buffer((1, 8, 1, 1), "float32"), T_reshape: T.Buffer((1, 8), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(1, 8):
            with T.sblock("T_reshape"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[(v_ax0 * 8 + v_ax1) // 8, (v_ax0 * 8 + v_ax1) % 8, 0, 0])
                T.writes(T_reshape[v_ax0, v_ax1])
                T_reshape[v_ax0, v_ax1] = A[(v_ax0 * 8 + v_ax1) // 8, (v_ax0 * 8 + v_ax1) % 8, 0, 0]

    @T.prim_func(private=True, s_tir=True)
    def fused_conv2d1_batch_norm1_add_relu1(lv6: T.Buffer((1, 8, 6, 6), "float32"), c3_w: T.Buffer((8, 8, 3, 3), "float32"), c3_b: T.Buffer((8,), "float32"), c3_bn_scale: T.Buffer((8,), "float32"), c3_bn_bias: T.Buffer((8,), "float32"), c3_bn_mean: T.Buffer((8,), "float32"), c3_bn_var: T.Buffer((8,), "float32"), lv3: T.Buffer((1, 8, 6, 6), "float32"), compute_intermediate: T.Buffer((1, 8, 6, 6), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        pad_temp = T.sblock_alloc_buffer((1, 8, 8, 8))
        conv2d_nchw = T.sblock_alloc_buffer((1, 8, 6, 6))
        T_add_intermediate = T.sblock_alloc_buffer((1, 8, 6, 6))
        T_batch_norm_intermediate = T.sblock_alloc_buffer((1, 8, 6, 6))
        T_add_intermediate_1 = T.sblock_alloc_buffer((1, 8, 6, 6))
        for i0, i1, i2, i3 in T.grid(1, 8, 8, 8):
            with T.sblock("pad_temp"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(lv6[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 7 and 1 <= v_i3 and v_i3 < 7, lv6[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0.0))
        for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 8, 6, 6, 8, 3, 3):
            with T.sblock("conv2d_nchw"):
                v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
                T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], c3_w[v_ff, v_rc, v_ry, v_rx])
                T.writes(conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
                with T.init():
                    conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0.0)
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * c3_w[v_ff, v_rc, v_ry, v_rx]
        for i0, i1, i2, i3 in T.grid(1, 8, 6, 6):
            with T.sblock("T_add"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(conv2d_nchw[v_i0, v_i1, v_i2, v_i3], c3_b[v_i1])
                T.writes(T_add_intermediate[v_i0, v_i1, v_i2, v_i3])
                T_add_intermediate[v_i0, v_i1, v_i2, v_i3] = conv2d_nchw[v_i0, v_i1, v_i2, v_i3] + c3_b[v_i1]
        for i0, i1, i2, i3 in T.grid(1, 8, 6, 6):
            with T.sblock("T_batch_norm"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(T_add_intermediate[v_i0, v_i1, v_i2, v_i3], c3_bn_mean[v_i1], c3_bn_var[v_i1], c3_bn_scale[v_i1], c3_bn_bias[v_i1])
                T.writes(T_batch_norm_intermediate[v_i0, v_i1, v_i2, v_i3])
                T_batch_norm_intermediate[v_i0, v_i1, v_i2, v_i3] = (T_add_intermediate[v_i0, v_i1, v_i2, v_i3] - c3_bn_mean[v_i1]) / T.sqrt(c3_bn_var[v_i1] + T.float32(9.9999997473787516e-06)) * c3_bn_scale[v_i1] + c3_bn_bias[v_i1]
        for ax0, ax1, ax2, ax3 in T.grid(1, 8, 6, 6):
            with T.sblock("T_add1"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(T_batch_norm_intermediate[v_ax0, v_ax1, v_ax2, v_ax3], lv3[v_ax0, v_ax1, v_ax2, v_ax3])
                T.writes(T_add_intermediate_1[v_ax0, v_ax1, v_ax2, v_ax3])
                T_add_intermediate_1[v_ax0, v_ax1, v_ax2, v_ax3] = T_batch_norm_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] + lv3[v_ax0, v_ax1, v_ax2, v_ax3]
        for i0, i1, i2, i3 in T.grid(1, 8, 6, 6):
            with T.sblock("compute"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(T_add_intermediate_1[v_i0, v_i1, v_i2, v_i3])
                T.writes(compute_intermediate[v_i0, v_i1, v_i2, v_i3])
                compute_intermediate[v_i0, v_i1, v_i2, v_i3] = T.max(T_add_intermediate_1[v_i0, v_i1, v_i2, v_i3], T.float32(0.0))

    @T.prim_func(private=True, s_tir=True)
    def fused_conv2d1_batch_norm1_relu1(lv3: T.Buffer((1, 8, 6, 6), "float32"), c2_w: T.Buffer((8, 8, 3, 3), "float32"), c2_b: T.Buffer((8,), "float32"), c2_bn_scale: T.Buffer((8,), "float32"), c2_bn_bias: T.Buffer((8,), "float32"), c2_bn_mean: T.Buffer((8,), "float32"), c2_bn_var: T.Buffer((8,), "float32"), compute_intermediate: T.Buffer((1, 8, 6, 6), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        pad_temp = T.sblock_alloc_buffer((1, 8, 8, 8))
        conv2d_nchw = T.sblock_alloc_buffer((1, 8, 6, 6))
        T_add_intermediate = T.sblock_alloc_buffer((1, 8, 6, 6))
        T_batch_norm_intermediate = T.sblock_alloc_buffer((1, 8, 6, 6))
        for i0, i1, i2, i3 in T.grid(1, 8, 8, 8):
            with T.sblock("pad_temp"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(lv3[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 7 and 1 <= v_i3 and v_i3 < 7, lv3[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0.0))
        for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 8, 6, 6, 8, 3, 3):
            with T.sblock("conv2d_nchw"):
                v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
                T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], c2_w[v_ff, v_rc, v_ry, v_rx])
                T.writes(conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
                with T.init():
                    conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0.0)
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * c2_w[v_ff, v_rc, v_ry, v_rx]
        for i0, i1, i2, i3 in T.grid(1, 8, 6, 6):
            with T.sblock("T_add"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(conv2d_nchw[v_i0, v_i1, v_i2, v_i3], c2_b[v_i1])
                T.writes(T_add_intermediate[v_i0, v_i1, v_i2, v_i3])
                T_add_intermediate[v_i0, v_i1, v_i2, v_i3] = conv2d_nchw[v_i0, v_i1, v_i2, v_i3] + c2_b[v_i1]
        for i0, i1, i2, i3 in T.grid(1, 8, 6, 6):
            with T.sblock("T_batch_norm"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(T_add_intermediate[v_i0, v_i1, v_i2, v_i3], c2_bn_mean[v_i1], c2_bn_var[v_i1], c2_bn_scale[v_i1], c2_bn_bias[v_i1])
                T.writes(T_batch_norm_intermediate[v_i0, v_i1, v_i2, v_i3])
                T_batch_norm_intermediate[v_i0, v_i1, v_i2, v_i3] = (T_add_intermediate[v_i0, v_i1, v_i2, v_i3] - c2_bn_mean[v_i1]) / T.sqrt(c2_bn_var[v_i1] + T.float32(9.9999997473787516e-06)) * c2_bn_scale[v_i1] + c2_bn_bias[v_i1]
        for i0, i1, i2, i3 in T.grid(1, 8, 6, 6):
            with T.sblock("compute"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(T_batch_norm_intermediate[v_i0, v_i1, v_i2, v_i3])
                T.writes(compute_intermediate[v_i0, v_i1, v_i2, v_i3])
                compute_intermediate[v_i0, v_i1, v_i2, v_i3] = T.max(T_batch_norm_intermediate[v_i0, v_i1, v_i2, v_i3], T.float32(0.0))

    @T.prim_func(private=True, s_tir=True)
    def fused_conv2d_batch_norm_relu(x: T.Buffer((1, 3, 12, 12), "float32"), c1_w: T.Buffer((8, 3, 3, 3), "float32"), c1_b: T.Buffer((8,), "float32"), c1_bn_scale: T.Buffer((8,), "float32"), c1_bn_bias: T.Buffer((8,), "float32"), c1_bn_mean: T.Buffer((8,), "float32"), c1_bn_var: T.Buffer((8,), "float32"), compute_intermediate: T.Buffer((1, 8, 12, 12), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        pad_temp = T.sblock_alloc_buffer((1, 3, 14, 14))
        conv2d_nchw = T.sblock_alloc_buffer((1, 8, 12, 12))
        T_add_intermediate = T.sblock_alloc_buffer((1, 8, 12, 12))
        T_batch_norm_intermediate = T.sblock_alloc_buffer((1, 8, 12, 12))
        for i0, i1, i2, i3 in T.grid(1, 3, 14, 14):
            with T.sblock("pad_temp"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(x[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 13 and 1 <= v_i3 and v_i3 < 13, x[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0.0))
        for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 8, 12, 12, 3, 3, 3):
            with T.sblock("conv2d_nchw"):
                v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
                T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], c1_w[v_ff, v_rc, v_ry, v_rx])
                T.writes(conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
                with T.init():
                    conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0.0)
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * c1_w[v_ff, v_rc, v_ry, v_rx]
        for i0, i1, i2, i3 in T.grid(1, 8, 12, 12):
            with T.sblock("T_add"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(conv2d_nchw[v_i0, v_i1, v_i2, v_i3], c1_b[v_i1])
                T.writes(T_add_intermediate[v_i0, v_i1, v_i2, v_i3])
                T_add_intermediate[v_i0, v_i1, v_i2, v_i3] = conv2d_nchw[v_i0, v_i1, v_i2, v_i3] + c1_b[v_i1]
        for i0, i1, i2, i3 in T.grid(1, 8, 12, 12):
            with T.sblock("T_batch_norm"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(T_add_intermediate[v_i0, v_i1, v_i2, v_i3], c1_bn_mean[v_i1], c1_bn_var[v_i1], c1_bn_scale[v_i1], c1_bn_bias[v_i1])
                T.writes(T_batch_norm_intermediate[v_i0, v_i1, v_i2, v_i3])
                T_batch_norm_intermediate[v_i0, v_i1, v_i2, v_i3] = (T_add_intermediate[v_i0, v_i1, v_i2, v_i3] - c1_bn_mean[v_i1]) / T.sqrt(c1_bn_var[v_i1] + T.float32(9.9999997473787516e-06)) * c1_bn_scale[v_i1] + c1_bn_bias[v_i1]
        for i0, i1, i2, i3 in T.grid(1, 8, 12, 12):
            with T.sblock("compute"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(T_batch_norm_intermediate[v_i0, v_i1, v_i2, v_i3])
                T.writes(compute_intermediate[v_i0, v_i1, v_i2, v_i3])
                compute_intermediate[v_i0, v_i1, v_i2, v_i3] = T.max(T_batch_norm_intermediate[v_i0, v_i1, v_i2, v_i3], T.float32(0.0))

    @T.prim_func(s_tir=True)
    def gemm(A: T.Buffer((1, 8), "float32"), B: T.Buffer((10, 8), "float32"), C: T.Buffer((10,), "float32"), T_add: T.Buffer((1, 10), "float32")):
        T.func_attr({"layout_free_buffers": [1], "tirx.noalias": True})
        # with T.sblock("root"):
        T_matmul_NT = T.sblock_alloc_buffer((1, 10))
        compute = T.sblock_alloc_buffer((10,))
        for i0, i1, k in T.grid(1, 10, 8):
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
        for i0, i1 in T.grid(1, 10):
            with T.sblock("T_add"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_matmul_NT[v_i0, v_i1], compute[v_i1])
                T.writes(T_add[v_i0, v_i1])
                T_add[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + compute[v_i1]

    @T.prim_func(s_tir=True)
    def global_avg_pool2d(A: T.Buffer((1, 8, 6, 6), "float32"), adaptive_pool_avg: T.Buffer((1, 8, 1, 1), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        adaptive_pool_sum = T.sblock_alloc_buffer((1, 8, 1, 1))
        for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(1, 8, 1, 1, 6, 6):
            with T.sblock("adaptive_pool_sum"):
                v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
                T.reads(A[v_ax0, v_ax1, v_ax2 * 6 + v_rv0, v_ax3 * 6 + v_rv1])
                T.writes(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                with T.init():
                    adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0.0)
                adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] + A[v_ax0, v_ax1, v_ax2 * 6 + v_rv0, v_ax3 * 6 + v_rv1]
        for ax0, ax1, ax2, ax3 in T.grid(1, 8, 1, 1):
            with T.sblock("adaptive_pool_avg"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                T.writes(adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3])
                T.sblock_attr({"schedule_rule": "meta_schedule.adaptive_pool_avg"})
                adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] / T.float32(36.0)

    @T.prim_func(s_tir=True)
    def max_pool2d(A: T.Buffer((1, 8, 12, 12), "float32"), pool_max: T.Buffer((1, 8, 6, 6), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        pad_temp = T.sblock_alloc_buffer((1, 8, 14, 14))
        for i0, i1, i2, i3 in T.grid(1, 8, 14, 14):
            with T.sblock("pad_temp"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(A[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 13 and 1 <= v_i3 and v_i3 < 13, A[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(-340282346638528859811704183484516925440.0))
        for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(1, 8, 6, 6, 3, 3):
            with T.sblock("pool_max"):
                v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
                T.reads(pad_temp[v_ax0, v_ax1, v_ax2 * 2 + v_rv0, v_ax3 * 2 + v_rv1])
                T.writes(pool_max[v_ax0, v_ax1, v_ax2, v_ax3])
                T.sblock_attr({"schedule_rule": "meta_schedule.pool_max"})
                with T.init():
                    pool_max[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(-340282346638528859811704183484516925440.0)
                pool_max[v_ax0, v_ax1, v_ax2, v_ax3] = T.max(pool_max[v_ax0, v_ax1, v_ax2, v_ax3], pad_temp[v_ax0, v_ax1, v_ax2 * 2 + v_rv0, v_ax3 * 2 + v_rv1])

    @R.function
    def main(x: R.Tensor((1, 3, 12, 12), dtype="float32"), c1_w: R.Tensor((8, 3, 3, 3), dtype="float32"), c1_b: R.Tensor((8,), dtype="float32"), c1_bn_scale: R.Tensor((8,), dtype="float32"), c1_bn_bias: R.Tensor((8,), dtype="float32"), c1_bn_mean: R.Tensor((8,), dtype="float32"), c1_bn_var: R.Tensor((8,), dtype="float32"), c2_w: R.Tensor((8, 8, 3, 3), dtype="float32"), c2_b: R.Tensor((8,), dtype="float32"), c2_bn_scale: R.Tensor((8,), dtype="float32"), c2_bn_bias: R.Tensor((8,), dtype="float32"), c2_bn_mean: R.Tensor((8,), dtype="float32"), c2_bn_var: R.Tensor((8,), dtype="float32"), c3_w: R.Tensor((8, 8, 3, 3), dtype="float32"), c3_b: R.Tensor((8,), dtype="float32"), c3_bn_scale: R.Tensor((8,), dtype="float32"), c3_bn_bias: R.Tensor((8,), dtype="float32"), c3_bn_mean: R.Tensor((8,), dtype="float32"), c3_bn_var: R.Tensor((8,), dtype="float32"), fc_w: R.Tensor((10, 8), dtype="float32"), fc_b: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.fused_conv2d_batch_norm_relu, (x, c1_w, c1_b, c1_bn_scale, c1_bn_bias, c1_bn_mean, c1_bn_var), out_ty=R.Tensor((1, 8, 12, 12), dtype="float32"))
            lv3 = R.call_tir(cls.max_pool2d, (lv,), out_ty=R.Tensor((1, 8, 6, 6), dtype="float32"))
            lv1 = R.call_tir(cls.fused_conv2d1_batch_norm1_relu1, (lv3, c2_w, c2_b, c2_bn_scale, c2_bn_bias, c2_bn_mean, c2_bn_var), out_ty=R.Tensor((1, 8, 6, 6), dtype="float32"))
            lv2 = R.call_tir(cls.fused_conv2d1_batch_norm1_add_relu1, (lv1, c3_w, c3_b, c3_bn_scale, c3_bn_bias, c3_bn_mean, c3_bn_var, lv3), out_ty=R.Tensor((1, 8, 6, 6), dtype="float32"))
            lv11 = R.call_tir(cls.global_avg_pool2d, (lv2,), out_ty=R.Tensor((1, 8, 1, 1), dtype="float32"))
            lv12 = R.call_tir(cls.flatten, (lv11,), out_ty=R.Tensor((1, 8), dtype="float32"))
            lv13 = R.call_tir(cls.gemm, (lv12, fc_w, fc_b), out_ty=R.Tensor((1, 10), dtype="float32"))
            R.output(lv13)
        return lv13