# loom op dense M=4 N=6 K=8
from tvm import te
A = te.placeholder((4, 8), name="A")
W = te.placeholder((6, 8), name="W")
k = te.reduce_axis((0, 8), name="k")
C = te.compute((4, 6), lambda i, j: te.sum(A[i, k] * W[j, k], axis=k), name="T_matmul_NT", attrs={"layout_free_placeholders": [W]})
te.create_prim_func([A, W, C])
