# loom op softmax shape=8,32
from tvm import te

n, m = 8, 32
A = te.placeholder((n, m), name="A")
k = te.reduce_axis((0, m), name="k")
maxelem = te.compute((n,), lambda i0: te.max(A[i0, k], axis=k),
                     name="T_softmax_maxelem")
exp = te.compute((n, m), lambda i0, i1: te.exp(A[i0, i1] - maxelem[i0]),
                 name="T_softmax_exp")
k2 = te.reduce_axis((0, m), name="k")
expsum = te.compute((n,), lambda i0: te.sum(exp[i0, k2], axis=k2),
                    name="T_softmax_expsum")
norm = te.compute((n, m), lambda i0, i1: exp[i0, i1] / expsum[i0],
                  name="T_softmax_norm", attrs={"axis": 1})
te.create_prim_func([A, norm])
