# dlight: Matmul
# explain: Matmul: schedules it as a product (its operands reindexed into A[i, k], B[j, k] and C[i, j])
# trace: sch.pad_einsum(block=
# trace: padding=[1, 1, 32]
# trace: tensor_intrin="wmma_sync_16x16x16_f16f16f32_trans"
# A float16 7x7 convolution of three channels, stride 2, summed in float32
# (ResNet-18's first, at batch 2 and 64x64): K = 147 is padded to 160
# (pad_einsum, zeros past K in both operands) for the tensor cores, the
# im2col copy inlined into the padded copy and that into the tiles.
from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((2, 3, 64, 64), "float16"), W: T.Buffer((64, 3, 7, 7), "float16"), B: T.Buffer((64,), "float16"), Y: T.Buffer((2, 64, 32, 32), "float16")):
    T.func_attr({"layout_free_buffers": [1, 2], "tir.noalias": True})
    # with T.block("root"):
    pad_temp = T.alloc_buffer((2, 3, 70, 70), "float16")
    conv2d_nchw = T.alloc_buffer((2, 64, 32, 32))
    T_add = T.alloc_buffer((2, 64, 32, 32))
    compute_intermediate = T.alloc_buffer((2, 64, 32, 32), "float16")
    for i0, i1, i2, i3 in T.grid(2, 3, 70, 70):
        with T.block("pad_temp"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(X[v_i0, v_i1, v_i2 - 3, v_i3 - 3])
            T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
            pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(3 <= v_i2 and v_i2 < 67 and 3 <= v_i3 and v_i3 < 67, X[v_i0, v_i1, v_i2 - 3, v_i3 - 3], T.float16(0.0))
    for nn, ff, yy, xx, rc, ry, rx in T.grid(2, 64, 32, 32, 3, 7, 7):
        with T.block("conv2d_nchw"):
            v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
            T.reads(pad_temp[v_nn, v_rc, v_yy * 2 + v_ry, v_xx * 2 + v_rx], W[v_ff, v_rc, v_ry, v_rx])
            T.writes(conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
            with T.init():
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0.0)
            conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + T.Cast("float32", pad_temp[v_nn, v_rc, v_yy * 2 + v_ry, v_xx * 2 + v_rx]) * T.Cast("float32", W[v_ff, v_rc, v_ry, v_rx])
    for i0, i1, i2, i3 in T.grid(2, 64, 32, 32):
        with T.block("T_add"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(conv2d_nchw[v_i0, v_i1, v_i2, v_i3], B[v_i1])
            T.writes(T_add[v_i0, v_i1, v_i2, v_i3])
            T_add[v_i0, v_i1, v_i2, v_i3] = conv2d_nchw[v_i0, v_i1, v_i2, v_i3] + T.Cast("float32", B[v_i1])
    for i0, i1, i2, i3 in T.grid(2, 64, 32, 32):
        with T.block("compute"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(T_add[v_i0, v_i1, v_i2, v_i3])
            T.writes(compute_intermediate[v_i0, v_i1, v_i2, v_i3])
            compute_intermediate[v_i0, v_i1, v_i2, v_i3] = T.Cast("float16", T_add[v_i0, v_i1, v_i2, v_i3])
    for i0, i1, i2, i3 in T.grid(2, 64, 32, 32):
        with T.block("compute1"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(compute_intermediate[v_i0, v_i1, v_i2, v_i3])
            T.writes(Y[v_i0, v_i1, v_i2, v_i3])
            Y[v_i0, v_i1, v_i2, v_i3] = T.max(compute_intermediate[v_i0, v_i1, v_i2, v_i3], T.float16(0.0))
