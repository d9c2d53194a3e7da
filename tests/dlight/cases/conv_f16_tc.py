# dlight: Matmul
# explain: Matmul: schedules it as a product (its operands reindexed into A[i, k], B[j, k] and C[i, j])
# trace: tensor_intrin="wmma_sync_16x16x16_f16f16f32_trans"
# trace: tensor_intrin="wmma_store_16x16x16_f32_global"
# A float16 3x3 convolution summed in float32, as `loom model run` imports
# a float16 network (ResNet-18's second stage at batch 2 and 64x64): the
# bias added in float32, then rounded to float16, the skip added and ReLU.
# Its im2col product (128 x 1152 by 1152 x 128) fits the tensor cores.
from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((2, 128, 8, 8), "float16"), W: T.Buffer((128, 128, 3, 3), "float16"), B: T.Buffer((128,), "float16"), S: T.Buffer((2, 128, 8, 8), "float16"), Y: T.Buffer((2, 128, 8, 8), "float16")):
    T.func_attr({"layout_free_buffers": [1, 2], "tir.noalias": True})
    # with T.block("root"):
    pad_temp = T.alloc_buffer((2, 128, 10, 10), "float16")
    conv2d_nchw = T.alloc_buffer((2, 128, 8, 8))
    T_add = T.alloc_buffer((2, 128, 8, 8))
    compute_intermediate = T.alloc_buffer((2, 128, 8, 8), "float16")
    T_add_intermediate = T.alloc_buffer((2, 128, 8, 8), "float16")
    for i0, i1, i2, i3 in T.grid(2, 128, 10, 10):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(X[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
            T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 9 and 1 <= v_i3 and v_i3 < 9, X[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float16(0.0))
    for nn, ff, yy, xx, rc, ry, rx in T.grid(2, 128, 8, 8, 128, 3, 3):
        with T.block("conv2d_nchw"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], W[v_ff, v_rc, v_ry, v_rx])
            T.writes(conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
            with T.init():
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0.0)
            conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + T.Cast("float32", pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx]) * T.Cast("float32", W[v_ff, v_rc, v_ry, v_rx])
    for i0, i1, i2, i3 in T.grid(2, 128, 8, 8):
        with T.block("T_add"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(conv2d_nchw[v_i0, v_i1, v_i2, v_i3], B[v_i1])
            T.writes(T_add[v_i0, v_i1, v_i2, v_i3])
            T_add[v_i0, v_i1, v_i2, v_i3] = conv2d_nchw[v_i0, v_i1, v_i2, v_i3] + T.Cast("float32", B[v_i1])
    for i0, i1, i2, i3 in T.grid(2, 128, 8, 8):
        with T.block("compute"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(T_add[v_i0, v_i1, v_i2, v_i3])
            T.writes(compute_intermediate[v_i0, v_i1, v_i2, v_i3])
            compute_intermediate[v_i0, v_i1, v_i2, v_i3] = T.Cast("float16", T_add[v_i0, v_i1, v_i2, v_i3])
    for ax0, ax1, ax2, ax3 in T.grid(2, 128, 8, 8):
        with T.block("T_add1"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            T.reads(compute_intermediate[v_ax0, v_ax1, v_ax2, v_ax3], S[v_ax0, v_ax1, v_ax2, v_ax3])
            T.writes(T_add_intermediate[v_ax0, v_ax1, v_ax2, v_ax3])
            T_add_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] = compute_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] + S[v_ax0, v_ax1, v_ax2, v_ax3]
    for i0, i1, i2, i3 in T.grid(2, 128, 8, 8):
        with T.block("compute1"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(T_add_intermediate[v_i0, v_i1, v_i2, v_i3])
            T.writes(Y[v_i0, v_i1, v_i2, v_i3])
            Y[v_i0, v_i1, v_i2, v_i3] = T.max(T_add_intermediate[v_i0, v_i1, v_i2, v_i3], T.float16(0.0))
