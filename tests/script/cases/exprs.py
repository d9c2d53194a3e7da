# Every expression kind and operator, with precedence that needs parentheses.
# run: --arg n=5
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16,), "int32"), F: T.Buffer((16,), "float32"), B: T.Buffer((16,), "bool"), n: T.int32):
    for i in range(16):
        with T.block("ints"):
            vi = T.axis.spatial(16, i)
            A[vi] = (A[vi] + 1) * 3 - A[vi] // 2 % 5 + T.Div(A[vi], 3) + T.truncmod(A[vi], 7) + T.max(A[vi], n) - T.min(A[vi], 2) - (A[vi] - (n - 1))
    for i in range(16):
        with T.block("floats"):
            vi = T.axis.spatial(16, i)
            F[vi] = T.exp(F[vi]) / (T.float32(1.0) + T.sqrt(T.fabs(F[vi]))) + T.pow(F[vi], T.float32(2.0)) + T.Cast("float32", A[vi]) + T.Select(F[vi] > T.float32(0.0), F[vi], -F[vi]) + T.if_then_else(vi < 8, T.float32(1.5), T.float32(-2.25e-05))
    for i in range(16):
        with T.block("bools"):
            vi = T.axis.spatial(16, i)
            B[vi] = (vi < 4 or vi >= 12) and not vi == 7 and vi != n and vi <= 15 and T.isnan(F[vi])
    for i in range(16):
        with T.block("math"):
            vi = T.axis.spatial(16, i)
            F[vi] = T.log(T.tanh(F[vi])) + T.sigmoid(F[vi]) + T.erf(F[vi]) + T.floor(F[vi]) + T.ceil(F[vi]) + T.round(F[vi]) + T.trunc(F[vi]) + T.sin(F[vi]) + T.cos(F[vi]) + T.rsqrt(F[vi]) + T.exp2(F[vi]) + T.log2(F[vi])
