# Vector values: ramps with strides, broadcasts, vector selects, vector casts,
# lane-wise intrinsics and vector stores through scalar and vector indices.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), I: T.Buffer((8, 8), "int32"), H: T.Buffer((16,), "float16")):
    for i in range(4):
        B[T.Ramp(i, 4, 16)] = A[T.Ramp(i * 16, 1, 16)] * T.Broadcast(T.float32(0.5), 16) + T.exp(A[T.Ramp(i, 4, 16)])
    for i in range(8):
        I[i, T.Ramp(0, 1, 8)] = T.Ramp(i * 3 - 10, i - 4, 8) // T.Broadcast(3, 8) + T.Cast("int32x8", A[T.Ramp(i * 8, 1, 8)] * T.Broadcast(T.float32(10.0), 8))
        I[i, T.Ramp(7, -1, 8)] = T.Select(T.Ramp(0, 1, 8) < T.Broadcast(i, 8), I[i, T.Ramp(0, 1, 8)], T.Broadcast(i * 100, 8))
    H[T.Ramp(0, 1, 16)] = T.Cast("float16x16", A[T.Ramp(0, 2, 16)]) + T.Broadcast(T.float16(1000.0), 16)
    for i in range(2):
        B[T.Ramp(i * 32, 1, 32)] = T.max(B[T.Ramp(i * 32, 1, 32)], T.Broadcast(T.float32(0.0), 32))
