# expect topi_nn_matmul_bias.tir
# topi.nn.matmul, first operand transposed, with a bias
from tvm import te, topi
A = te.placeholder((7,6,), name="A", dtype="float32")
B = te.placeholder((7,5,), name="B", dtype="float32")
bias = te.placeholder((5,), name="bias", dtype="float32")
Y = topi.nn.matmul(A, B, bias=bias, transpose_a=True)
te.create_prim_func([A, B, bias, Y])
