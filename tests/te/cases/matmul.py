# loom op matmul M=64 N=48 K=32 layout=NN
import tvm
from tvm import te

M, N, K = 64, 48, 32
A = te.placeholder((M, K), name="A", dtype="float32")
B = te.placeholder((K, N), name="B", dtype="float32")
k = te.reduce_axis((0, K), name="k")
C = te.compute((M, N), lambda i0, i1: te.sum(A[i0, k] * B[k, i1], axis=k),
               name="T_matmul_NN", attrs={"layout_free_placeholders": [B]})
func = te.create_prim_func([A, B, C])
