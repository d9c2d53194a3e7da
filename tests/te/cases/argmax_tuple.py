# expect argmax_tuple.tir
from tvm import te, tir

def fcombine(x, y):
    lhs = tir.Select(x[1] >= y[1], x[0], y[0])
    rhs = tir.Select(x[1] >= y[1], x[1], y[1])
    return lhs, rhs

def fidentity(t0, t1):
    return tir.const(-1, t0), te.min_value(t1)

argmax = te.comm_reducer(fcombine, fidentity, name="argmax")
idx = te.placeholder((13, 29), name="idx", dtype="int32")
val = te.placeholder((13, 29), name="val", dtype="float32")
k = te.reduce_axis((0, 29), "k")
max_idx, max_val = te.compute((13,), lambda i: argmax((idx[i, k], val[i, k]), axis=k), name="argmax")
te.create_prim_func([idx, val, max_idx, max_val])
