# a symbolic size, a where= reduction, if_then_else and astype
from tvm import te
n = te.var("n")
A = te.placeholder((n, 8), name="A")
k = te.reduce_axis((0, 8), name="k")
B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k, where=k < i), name="B")
C = te.compute((n, 8), lambda i, j: te.if_then_else(A[i, j] > 0.0, A[i, j].astype("float16"), tir.const(0, "float16")), name="C")
te.create_prim_func([A, B, C])
