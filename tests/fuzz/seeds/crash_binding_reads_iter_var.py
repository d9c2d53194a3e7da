# Every loop kind, annotations, non-zero starts, thread bindings.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in T.parallel(64):
        for j0 in T.unroll(2):
            for j1 in T.vectorized(16):
                with T.block("copy"):
                    vi = T.axis.spatial(64, i)
                    vj = T.axis.spatial(64, j0 * 16 + vi)
                    T.reads(A[vi, vj])
 # from tvm.scrip t