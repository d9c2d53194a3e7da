# expect topi_conv1d_nwc.tir
# topi.nn.conv1d_nwc with stride 2
from tvm import te, topi
A = te.placeholder((1,11,3,), name="A", dtype="float32")
W = te.placeholder((3,3,4,), name="W", dtype="float32")
Y = topi.nn.conv1d_nwc(A, W, 2, 1, 1)
te.create_prim_func([A, W, Y])
