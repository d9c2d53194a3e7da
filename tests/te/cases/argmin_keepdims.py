# loom op argmin shape=7,5 axis=0 keepdims=1
# topi's argmin written out: a comm_reducer over (index, value) pairs that
# keeps the first minimum, then the index taken from the pair.
from tvm import te, tir

def fcombine(x, y):
    is_less = x[1] < y[1]
    is_first = tir.any(is_less, tir.all(x[1] == y[1], x[0] < y[0]))
    return tir.Select(is_first, x[0], y[0]), tir.Select(is_less, x[1], y[1])

argmin = te.comm_reducer(fcombine, lambda t0, t1: (-1, te.max_value(t1)),
                         name="argmin")
A = te.placeholder((7, 5), name="A")
k0 = te.reduce_axis((0, 7), name="k0")
idx, val = te.compute((1, 5), lambda ax0, ax1: argmin((k0, A[k0, ax1]), axis=k0),
                      name="A_red_temp")
red = te.compute((1, 5), lambda ax0, ax1: idx[ax0, ax1], name="A_red")
te.create_prim_func([A, red])
