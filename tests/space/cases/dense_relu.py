# A dense layer (A times B transposed) with a ReLU epilogue: each output is
# a dot product of two rows, the shape of the loom_f32_dot_16 intrinsic
# once its reduction is split by 16 (AutoTensorize, with -tensorize=1).
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 32), "float32"), B: T.Buffer((24, 32), "float32"), D: T.Buffer((16, 24), "float32")):
    T.func_attr({"tir.noalias": True})
    C = T.alloc_buffer((16, 24))
    for i, j, k in T.grid(16, 24, 32):
        with T.block("dense"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
    for i, j in T.grid(16, 24):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0.0))
