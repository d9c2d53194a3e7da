# expect topi_concatenate.tir
# topi.concatenate of two tensors
from tvm import te, topi
A = te.placeholder((4,8,), name="A", dtype="float32")
B = te.placeholder((4,5,), name="B", dtype="float32")
Y = topi.concatenate((A, B), axis=1)
te.create_prim_func([A, B, Y])
