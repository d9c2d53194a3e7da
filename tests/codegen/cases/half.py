# float16 and bfloat16: every operation rounds to the type, casts to and
# from float32, int and bool, math computed wider and rounded back.
# from tvm.script import tir as T

@T.prim_func
def main(h: T.Buffer((64,), "float16"), b: T.Buffer((64,), "bfloat16"), f: T.Buffer((64,), "float32"), oh: T.Buffer((64, 6), "float16"), ob: T.Buffer((64, 6), "bfloat16"), of: T.Buffer((64, 2), "float32")):
    for i in range(64):
        with T.block("half"):
            vi = T.axis.spatial(64, i)
            oh[vi, 0] = h[vi] * h[vi] + h[vi] / T.float16(3.0) - T.float16(0.0999755859375)
            oh[vi, 1] = T.Cast("float16", f[vi] * T.float32(70000.0))
            oh[vi, 2] = T.exp(h[vi]) + T.sqrt(T.fabs(h[vi]))
            oh[vi, 3] = T.Cast("float16", f[vi] * T.float32(1e-05))
            oh[vi, 4] = T.max(h[vi], T.float16(0.0)) + T.Cast("float16", b[vi])
            oh[vi, 5] = T.Cast("float16", T.Cast("int32", f[vi] * T.float32(100.0)))
            ob[vi, 0] = b[vi] * b[vi] + b[vi] / T.bfloat16(3.0)
            ob[vi, 1] = T.Cast("bfloat16", f[vi] * T.float32(3e+38))
            ob[vi, 2] = T.tanh(b[vi]) + T.log(T.fabs(b[vi]) + T.bfloat16(1.0))
            ob[vi, 3] = T.Cast("bfloat16", f[vi] * T.float32(1e-38))
            ob[vi, 4] = T.Cast("bfloat16", h[vi]) - T.min(b[vi], T.bfloat16(0.25))
            ob[vi, 5] = T.Cast("bfloat16", T.Cast("float64", f[vi]) * T.float64(1.0000001))
            of[vi, 0] = T.Cast("float32", h[vi]) + T.Cast("float32", b[vi])
            of[vi, 1] = T.Cast("float32", T.Cast("int8", h[vi] * T.float16(300.0))) + T.Cast("float32", h[vi] > T.float16(0.5))
