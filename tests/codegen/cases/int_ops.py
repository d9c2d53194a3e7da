# Integer arithmetic of every width: wrap-around, truncating and floor
# division and modulo on negative operands, shifts, bit operations.
# from tvm.script import tir as T

@T.prim_func
def main(a: T.Buffer((64,), "int8"), b: T.Buffer((64,), "int16"), c: T.Buffer((64,), "int32"), d: T.Buffer((64,), "int64"), e: T.Buffer((64,), "uint8"), f: T.Buffer((64,), "uint16"), g: T.Buffer((64,), "uint32"), h: T.Buffer((64,), "uint64"), out: T.Buffer((64, 26), "int32")):
    for i in range(64):
        with T.block("ops"):
            vi = T.axis.spatial(64, i)
            out[vi, 0] = T.Cast("int32", a[vi] * a[vi] * a[vi] * a[vi] + T.int8(100))
            out[vi, 1] = T.Cast("int32", b[vi] * T.int16(4000) * b[vi])
            out[vi, 2] = c[vi] * 536870912 + c[vi] * c[vi]
            out[vi, 3] = T.Cast("int32", d[vi] * T.int64(4611686018427387904) // T.int64(3))
            out[vi, 4] = T.Cast("int32", e[vi] * e[vi] * e[vi] - T.uint8(200))
            out[vi, 5] = T.Cast("int32", f[vi] * T.uint16(9000) - f[vi])
            out[vi, 6] = T.Cast("int32", g[vi] - T.uint32(20) >> T.uint32(3))
            out[vi, 7] = T.Cast("int32", h[vi] * T.uint64(3) - T.uint64(40) >> T.uint64(60))
            out[vi, 8] = c[vi] // (c[vi] % 5 - 7)
            out[vi, 9] = c[vi] % (c[vi] % 5 - 7)
            out[vi, 10] = T.truncdiv(c[vi], c[vi] % 5 - 7)
            out[vi, 11] = T.truncmod(c[vi], c[vi] % 5 - 7)
            out[vi, 12] = T.Cast("int32", a[vi] // T.int8(3) + a[vi] % T.int8(-3))
            out[vi, 13] = T.shift_left(c[vi], 28) + T.shift_right(c[vi], 2)
            out[vi, 14] = T.bitwise_and(c[vi], 5) + T.bitwise_or(c[vi], 12) + T.bitwise_xor(c[vi], 7)
            out[vi, 15] = T.bitwise_not(c[vi])
            out[vi, 16] = T.Cast("int32", T.popcount(a[vi])) + T.popcount(c[vi])
            out[vi, 17] = T.clz(c[vi] + 8)
            out[vi, 18] = T.min(c[vi], 2) * 10 + T.max(c[vi], -3)
            out[vi, 19] = T.Cast("int32", T.min(e[vi], T.uint8(9))) + T.Cast("int32", T.max(h[vi], T.uint64(7)))
            out[vi, 20] = T.if_then_else(c[vi] > 0, c[vi] * 3, c[vi] - 100)
            out[vi, 21] = T.Select(a[vi] < T.int8(0), 1, 2) + T.Cast("int32", c[vi] != 3 and c[vi] != -3)
            out[vi, 22] = T.Cast("int32", T.Cast("int8", c[vi] * 40)) + T.Cast("int32", T.Cast("uint16", c[vi]))
            out[vi, 23] = T.Cast("int32", T.fabs(T.Cast("float32", c[vi])))
            out[vi, 24] = T.q_multiply_shift(c[vi] * 100000, 1395864371, 31, c[vi] % 5 - 2)
            out[vi, 25] = T.exp(c[vi] % 4) + T.Cast("int32", T.sqrt(T.Cast("float64", c[vi] * c[vi])))
