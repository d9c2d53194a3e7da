# int64's minimum, which TVM prints as a negated literal too large for
# int64 on its own (the identity of a max reduction over int64).
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "int64"), B: T.Buffer((1,), "int64")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.reduce(4, i)
            with T.init():
                B[0] = T.int64(-9223372036854775808)
            B[0] = T.max(B[0], A[vi])
