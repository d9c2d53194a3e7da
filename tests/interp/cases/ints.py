# Integer semantics across widths: wrap-around, floor and truncating
# division of negative operands, shifts, bit operations and casts.
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def narrow(a: T.Buffer((16,), "int8"), b: T.Buffer((16,), "int16"), c: T.Buffer((16,), "uint8"), d: T.Buffer((16,), "uint16"), o: T.Buffer((16, 8), "int32")):
        for i in range(16):
            with T.block("w"):
                vi = T.axis.spatial(16, i)
                a[vi] = a[vi] * T.int8(37) + T.int8(100)
                b[vi] = b[vi] * T.int16(3000) - T.int16(7)
                c[vi] = c[vi] - T.uint8(9)
                d[vi] = d[vi] * T.uint16(9000)
                o[vi, 0] = T.Cast("int32", a[vi]) // 3
                o[vi, 1] = T.Cast("int32", a[vi]) % -3
                o[vi, 2] = T.truncdiv(T.Cast("int32", b[vi]), -7)
                o[vi, 3] = T.truncmod(T.Cast("int32", b[vi]), 7)
                o[vi, 4] = T.Cast("int32", c[vi]) * 1000 + T.Cast("int32", d[vi])
                o[vi, 5] = T.shift_left(T.Cast("int32", a[vi]), vi) + T.shift_right(T.Cast("int32", b[vi]), 3)
                o[vi, 6] = T.bitwise_xor(T.bitwise_or(T.Cast("int32", c[vi]), 5), T.bitwise_not(vi))
                o[vi, 7] = T.max(T.min(T.Cast("int32", a[vi]), 50), -50) + T.popcount(T.Cast("int32", d[vi])) + T.clz(T.Cast("int32", c[vi]) + 1)

    @T.prim_func
    def wide(a: T.Buffer((12,), "int64"), b: T.Buffer((12,), "uint64"), c: T.Buffer((12,), "uint32"), o: T.Buffer((12, 6), "int64")):
        for i in range(12):
            with T.block("w"):
                vi = T.axis.spatial(12, i)
                a[vi] = a[vi] * T.int64(6148914691236517205) + T.int64(9223372036854775807)
                b[vi] = b[vi] * T.uint64(12297829382473034411) - T.uint64(3)
                c[vi] = c[vi] * T.uint32(4000000000)
                o[vi, 0] = a[vi] // T.int64(-5)
                o[vi, 1] = a[vi] % T.int64(1000)
                o[vi, 2] = T.Cast("int64", b[vi] // T.uint64(3))
                o[vi, 3] = T.Cast("int64", c[vi] % T.uint32(77))
                o[vi, 4] = T.Cast("int64", T.Cast("float64", a[vi]))
                o[vi, 5] = T.Cast("int64", T.Cast("float32", b[vi]) * T.float32(2.0))

    @T.prim_func
    def casts(f: T.Buffer((16,), "float32"), o: T.Buffer((16, 6), "int32"), u: T.Buffer((16,), "uint8"), s: T.Buffer((16,), "int8")):
        for i in range(16):
            with T.block("c"):
                vi = T.axis.spatial(16, i)
                o[vi, 0] = T.Cast("int32", f[vi] * T.float32(1e10))
                o[vi, 1] = T.Cast("int32", f[vi] * T.float32(7.5))
                o[vi, 2] = T.Cast("int32", T.Cast("bool", f[vi]))
                o[vi, 3] = T.Cast("int32", T.Cast("int8", vi * 20))
                o[vi, 4] = T.Cast("int32", f[vi] > T.float32(0.0)) + T.Cast("int32", vi == 3 or vi > 12)
                o[vi, 5] = T.reinterpret("int32", f[vi])
                u[vi] = T.Cast("uint8", f[vi] * T.float32(300.0))
                s[vi] = T.Cast("int8", f[vi] * T.float32(-300.0))
