# expect topi_matmul.tir
# topi.matmul with the second operand transposed
from tvm import te, topi
A = te.placeholder((6,7,), name="A", dtype="float32")
B = te.placeholder((5,7,), name="B", dtype="float32")
Y = topi.matmul(A, B, transp_b=True)
te.create_prim_func([A, B, Y])
