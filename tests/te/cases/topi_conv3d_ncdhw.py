# expect topi_conv3d_ncdhw.tir
# topi.nn.conv3d_ncdhw with dilation 2 in depth
from tvm import te, topi
A = te.placeholder((1,2,5,4,6,), name="A", dtype="float32")
W = te.placeholder((3,2,2,2,2,), name="W", dtype="float32")
Y = topi.nn.conv3d_ncdhw(A, W, 1, 1, (2, 1, 1), 1)
te.create_prim_func([A, W, Y])
