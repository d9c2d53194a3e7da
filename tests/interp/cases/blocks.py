# Blocks as schedules leave them: split reductions with init, predicates,
# block-local buffers, match_buffer views, lets, nested blocks and
# if_then_else that must not evaluate the branch not taken.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((30, 20), "float32"), B: T.Buffer((20, 30), "float32"), C: T.Buffer((30, 30), "float32"), D: T.Buffer((30,), "float32")):
    for io, jo, ko, ii, ji, ki in T.grid(4, 4, 3, 8, 8, 7):
        with T.block("mm"):
            vi = T.axis.spatial(30, io * 8 + ii)
            vj = T.axis.spatial(30, jo * 8 + ji)
            vk = T.axis.reduce(20, ko * 7 + ki)
            T.where(io * 8 + ii < 30 and jo * 8 + ji < 30 and ko * 7 + ki < 20)
            with T.init():
                C[vi, vj] = T.float32(0.5)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i in range(30):
        with T.block("outer"):
            vi = T.axis.spatial(30, i)
            T.reads(C[vi, 0:30])
            T.writes(D[vi])
            row = T.match_buffer(C[vi, 5:15], (10,), "float32")
            tmp = T.alloc_buffer((30,), "float32")
            for j in range(30):
                with T.block("copy"):
                    vj = T.axis.spatial(30, j)
                    tmp[vj] = C[vi, vj] * T.float32(2.0)
            for j in range(10):
                with T.block("acc"):
                    vj = T.axis.reduce(10, j)
                    with T.init():
                        D[vi] = T.float32(0.0)
                    D[vi] = D[vi] + row[vj] + T.if_then_else(vj + 5 < 30, tmp[vj + 5], tmp[100])
    for i in range(30):
        x: T.float32 = D[i] * T.float32(3.0)
        y: T.int32 = i * 7 % 30
        D[y] = x + D[y]
