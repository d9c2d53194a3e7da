# expect topi_softmax.tir
# topi.nn.softmax over the middle axis
from tvm import te, topi
A = te.placeholder((5,7,3,), name="A", dtype="float32")
Y = topi.nn.softmax(A, axis=1)
te.create_prim_func([A, Y])
