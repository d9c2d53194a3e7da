# dlight: Matmul
# explain: Matmul: schedules it as a product (its operands reindexed into A[i, k], B[j, k] and C[i, j])
# trace: tensor_intrin="wmma_sync_16x16x16_f16f16f32_trans"
# trace: factors=[None, 1, 4, 16], preserve_unit_iters=True
# trace: sch.bind(loop=l
# A float16 3x3 convolution of 64 channels summed in float32, its bias and
# ReLU after (ResNet-18's first stage at batch 2 and 32x32): the product
# (512 x 576 by 576 x 64) on the tensor cores in tiles of 128 x 64, two
# warps to a block.
from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((2, 64, 16, 16), "float16"), W: T.Buffer((64, 64, 3, 3), "float16"), B: T.Buffer((64,), "float16"), Y: T.Buffer((2, 64, 16, 16), "float16")):
    T.func_attr({"layout_free_buffers": [1, 2], "tir.noalias": True})
    # with T.block("root"):
    pad_temp = T.alloc_buffer((2, 64, 18, 18), "float16")
    conv2d_nchw = T.alloc_buffer((2, 64, 16, 16))
    T_add = T.alloc_buffer((2, 64, 16, 16))
    compute_intermediate = T.alloc_buffer((2, 64, 16, 16), "float16")
    for i0, i1, i2, i3 in T.grid(2, 64, 18, 18):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(X[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
            T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 17 and 1 <= v_i3 and v_i3 < 17, X[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float16(0.0))
    for nn, ff, yy, xx, rc, ry, rx in T.grid(2, 64, 16, 16, 64, 3, 3):
        with T.block("conv2d_nchw"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], W[v_ff, v_rc, v_ry, v_rx])
            T.writes(conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
            with T.init():
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0.0)
            conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + T.Cast("float32", pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx]) * T.Cast("float32", W[v_ff, v_rc, v_ry, v_rx])
    for i0, i1, i2, i3 in T.grid(2, 64, 16, 16):
        with T.block("T_add"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(conv2d_nchw[v_i0, v_i1, v_i2, v_i3], B[v_i1])
            T.writes(T_add[v_i0, v_i1, v_i2, v_i3])
            T_add[v_i0, v_i1, v_i2, v_i3] = conv2d_nchw[v_i0, v_i1, v_i2, v_i3] + T.Cast("float32", B[v_i1])
    for i0, i1, i2, i3 in T.grid(2, 64, 16, 16):
        with T.block("compute"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(T_add[v_i0, v_i1, v_i2, v_i3])
            T.writes(compute_intermediate[v_i0, v_i1, v_i2, v_i3])
            compute_intermediate[v_i0, v_i1, v_i2, v_i3] = T.Cast("float16", T_add[v_i0, v_i1, v_i2, v_i3])
    for i0, i1, i2, i3 in T.grid(2, 64, 16, 16):
        with T.block("compute1"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(compute_intermediate[v_i0, v_i1, v_i2, v_i3])
            T.writes(Y[v_i0, v_i1, v_i2, v_i3])
            Y[v_i0, v_i1, v_i2, v_i3] = T.max(compute_intermediate[v_i0, v_i1, v_i2, v_i3], T.float16(0.0))
