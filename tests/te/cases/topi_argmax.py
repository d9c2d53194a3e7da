# expect topi_argmax.tir
# topi.argmax over the last axis
from tvm import te, topi
A = te.placeholder((8,31,), name="A", dtype="float32")
Y = topi.argmax(A, axis=-1)
te.create_prim_func([A, Y])
