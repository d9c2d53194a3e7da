# Statements and allocations: blocks with init, predicates and their own
# buffers (one too large for the stack), match_buffer views at an offset,
# let, if/else, asserts that hold, buffer aliases, loop kinds.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32,), "float32"), D: T.Buffer((30, 8), "float32"), E: T.Buffer((64,), "int32")):
    T.func_attr({"tir.noalias": True})
    big = T.alloc_buffer((129, 129), "float32")
    for i, j in T.grid(32, 32):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            big[vi + 97, vj] = A[vi, vj] * T.float32(2.0)
    for i in T.parallel(32):
        for k in range(32):
            with T.block("rowsum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(1.0)
                C[vi] = C[vi] + big[vi + 97, vk]
    for io in range(8):
        for ii in T.vectorized(4):
            for j in T.unroll(8):
                with T.block("padded"):
                    vi = T.axis.spatial(30, io * 4 + ii)
                    vj = T.axis.spatial(8, j)
                    T.where(io * 4 + ii < 30)
                    D[vi, vj] = B[vi, vj] + T.float32(1.0)
    for i in range(4):
        with T.block("tile"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi * 8:vi * 8 + 8, 4:12])
            T.writes(B[vi * 8:vi * 8 + 8, 4:12])
            src = T.match_buffer(A[vi * 8:vi * 8 + 8, 4:12], (8, 8))
            dst = T.match_buffer(B[vi * 8:vi * 8 + 8, 4:12], (8, 8))
            tmp = T.alloc_buffer((8, 8), "float32", scope="local")
            for x, y in T.grid(8, 8):
                tmp[x, y] = src[x, y] * T.float32(3.0)
            for x, y in T.grid(8, 8):
                dst[y, x] = tmp[x, y]
    for i in range(64):
        with T.block("control"):
            vi = T.axis.spatial(64, i)
            if vi % 3 == 0:
                E[vi] = vi * 2
            elif vi % 3 == 1:
                E[vi] = E[vi] + 100
            else:
                E[vi] = -1
    for i in range(16):
        x: T.int32 = i * i
        assert x >= 0, "squares are not negative"
        E[i] = E[i] + x
    with T.block("alias"):
        flat = T.alloc_buffer((64,), "int32")
        for i in range(64):
            flat[i] = E[i] * 3
        square = T.Buffer((8, 8), "int32", data=flat.data)
        for i, j in T.grid(8, 8):
            E[i * 8 + j] = square[j, i]
