# Statements outside blocks: if/else, let, evaluate, attributes, asserts,
# allocations and buffer aliases.
# run-error: cannot call extern function trace_point
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        if i % 2 == 0:
            x: T.float32 = A[i] * T.float32(2.0)
            B[i] = x + T.float32(1.0)
        else:
            if i < 32:
                B[i] = A[i]
            else:
                B[i] = T.float32(0.0)
    assert A[0] >= T.float32(0.0), "A must start non-negative"
    T.evaluate(T.call_extern("void", "trace_point", 1))
    with T.attr(0, "pragma_marker", 1):
        flat = T.decl_buffer((64,), scope="local")
        flat[0] = B[0]
        alias = T.Buffer((8, 8), data=flat.data, scope="local")
        B[1] = alias[0, 0]
