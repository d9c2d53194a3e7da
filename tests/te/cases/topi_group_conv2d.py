# expect topi_group_conv2d.tir
# topi.nn.group_conv2d_nchw with per-dimension stride, padding and dilation
from tvm import te, topi
A = te.placeholder((1,4,9,7,), name="A", dtype="float32")
W = te.placeholder((6,2,3,2,), name="W", dtype="float32")
Y = topi.nn.group_conv2d_nchw(A, W, (2, 1), (1, 0, 1, 1), (1, 2), 2)
te.create_prim_func([A, W, Y])
