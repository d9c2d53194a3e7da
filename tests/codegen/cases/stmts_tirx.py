# The statement kinds the other cases lack: an allocation as a statement
# (T.alloc_buffer in TVM 0.25+'s spelling), an attribute, an evaluate, and
# T.likely in a condition.
# from tvm.script import tirx as T

@T.prim_func(s_tir=True)
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    tmp = T.alloc_buffer((64,), "float32", scope="local")
    for i in range(64):
        tmp[i] = A[i] * T.float32(3.0)
    with T.attr(0, "pragma_marker", 1):
        T.evaluate(0)
        for i in range(64):
            if T.likely(i < 60):
                B[i] = tmp[i] + T.float32(1.0)
            else:
                B[i] = tmp[63 - i]
