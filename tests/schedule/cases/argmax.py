# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6, 16), "float32"), idx: T.Buffer((6,), "int32"), val: T.Buffer((6,), "float32"), S: T.Buffer((6,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(6, 16):
        with T.block("argmax"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                idx[vi] = -1
                val[vi] = T.float32(-340282346638528859811704183484516925440.0)
            v_idx: T.int32 = T.Select(val[vi] > A[vi, vk] or val[vi] == A[vi, vk] and idx[vi] < vk, idx[vi], vk)
            v_val: T.float32 = T.Select(val[vi] > A[vi, vk], val[vi], A[vi, vk])
            idx[vi] = v_idx
            val[vi] = v_val
    for i, k in T.grid(6, 16):
        with T.block("prod"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(1.0)
            S[vi] = S[vi] * (A[vi, vk] * T.float32(0.25) + T.float32(1.0))
