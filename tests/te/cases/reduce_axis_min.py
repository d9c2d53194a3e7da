# expect reduce_axis_min.tir
# A reduce axis over [2, 11): the loop and the block iter var keep the range.
from tvm import te
A = te.placeholder((9, 13), name="A")
k = te.reduce_axis((2, 11), name="k")
B = te.compute((9,), lambda i: te.sum(A[i, k] * 2.0, axis=k), name="B")
te.create_prim_func([A, B])
