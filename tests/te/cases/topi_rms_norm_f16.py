# expect topi_rms_norm_f16.tir
# topi.nn.rms_norm of float16 data
from tvm import te, topi
A = te.placeholder((2, 3, 16), name="A", dtype="float16")
gamma = te.placeholder((16,), name="gamma", dtype="float16")
Y = topi.nn.rms_norm(A, gamma, [2], 1e-5)
te.create_prim_func([A, gamma, Y])
