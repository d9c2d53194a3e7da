# Float semantics per dtype: rounding after every op in float16, bfloat16,
# float32 and float64, the math intrinsics, NaN and infinity handling.
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def arith(h: T.Buffer((16,), "float16"), p: T.Buffer((16,), "bfloat16"), f: T.Buffer((16,), "float32"), q: T.Buffer((16,), "float64")):
        for i in range(16):
            with T.block("a"):
                vi = T.axis.spatial(16, i)
                h[vi] = h[vi] * T.float16(3.0) / T.float16(7.0) + h[vi] - T.float16(0.1)
                p[vi] = p[vi] * T.bfloat16(3.0) / T.bfloat16(7.0) + p[vi] - T.bfloat16(0.1)
                f[vi] = f[vi] * T.float32(3.0) / T.float32(7.0) + f[vi] - T.float32(0.1)
                q[vi] = q[vi] * T.float64(3.0) / T.float64(7.0) + q[vi] - T.float64(0.1)
                f[vi] = f[vi] + T.Cast("float32", h[vi]) * T.Cast("float32", p[vi]) + T.Cast("float32", q[vi])
                h[vi] = h[vi] * T.float16(60000.0)
                q[vi] = T.sqrt(q[vi]) + T.floordiv(q[vi], T.float64(0.3)) + T.floormod(q[vi], T.float64(0.3)) + T.fmod(q[vi], T.float64(0.7))

    @T.prim_func
    def math(f: T.Buffer((32,), "float32"), h: T.Buffer((32,), "float16"), o: T.Buffer((32, 12), "float32"), b: T.Buffer((32, 4), "bool")):
        for i in range(32):
            with T.block("m"):
                vi = T.axis.spatial(32, i)
                o[vi, 0] = T.exp(f[vi] * T.float32(100.0))
                o[vi, 1] = T.log(f[vi]) + T.log10(T.fabs(f[vi])) + T.log1p(f[vi])
                o[vi, 2] = T.sqrt(f[vi]) + T.rsqrt(f[vi])
                o[vi, 3] = T.tanh(f[vi]) + T.sigmoid(f[vi]) + T.erf(f[vi])
                o[vi, 4] = T.sin(f[vi]) + T.cos(f[vi]) + T.tan(f[vi]) + T.asin(f[vi]) + T.acos(f[vi]) + T.atan(f[vi])
                o[vi, 5] = T.sinh(f[vi]) + T.cosh(f[vi]) + T.exp2(f[vi]) + T.exp10(f[vi])
                o[vi, 6] = T.floor(f[vi] * T.float32(4.0)) + T.ceil(f[vi] * T.float32(4.0)) + T.round(f[vi] * T.float32(4.0)) + T.nearbyint(f[vi] * T.float32(4.0)) + T.trunc(f[vi] * T.float32(4.0))
                o[vi, 7] = T.pow(f[vi], T.float32(3.0)) + T.atan2(f[vi], T.float32(0.5))
                o[vi, 8] = T.max(f[vi], T.float32(0.0) / T.float32(0.0)) + T.min(f[vi], T.float32(0.25))
                o[vi, 9] = T.Cast("float32", T.exp(h[vi]) + T.sqrt(h[vi]))
                o[vi, 10] = T.Select(f[vi] < T.float32(0.0), T.float32(1.0) / f[vi], f[vi] / T.float32(0.0))
                o[vi, 11] = T.Cast("float32", vi) / T.float32(3.0) - T.Cast("float32", T.Cast("float16", vi)) * T.float32(1e-3)
                b[vi, 0] = T.isnan(T.log(f[vi]))
                b[vi, 1] = T.isinf(T.float32(1.0) / f[vi])
                b[vi, 2] = T.isfinite(f[vi]) and f[vi] != T.float32(0.5)
                b[vi, 3] = T.log(f[vi]) < T.float32(0.0) or T.log(f[vi]) >= T.float32(0.0)
