# loom op conv2d N=1 C=4 H=10 K=8 R=3 stride=2 pad=1 dilation=2
from tvm import te, tir

N, C, H, K, R = 1, 4, 10, 8, 3
stride, pad, dil = 2, 1, 2
A = te.placeholder((N, C, H, H), name="A")
W = te.placeholder((K, C, R, R), name="W")
P = H + 2 * pad
pad_temp = te.compute(
    (N, C, P, P),
    lambda i0, i1, i2, i3: te.if_then_else(
        tir.all(pad <= i2, i2 < H + pad, pad <= i3, i3 < H + pad),
        A[i0, i1, i2 - pad, i3 - pad], tir.const(0.0, "float32")),
    name="pad_temp")
O = (P - (R - 1) * dil - 1) // stride + 1
rc = te.reduce_axis((0, C), name="rc")
ry = te.reduce_axis((0, R), name="ry")
rx = te.reduce_axis((0, R), name="rx")
out = te.compute(
    (N, K, O, O),
    lambda nn, ff, yy, xx: te.sum(
        pad_temp[nn, rc, yy * stride + ry * dil, xx * stride + rx * dil]
        * W[ff, rc, ry, rx], axis=[rc, ry, rx]),
    name="conv2d_nchw")
te.create_prim_func([A, W, out])
