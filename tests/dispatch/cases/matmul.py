# Products by a layer's constant weights (B listed in "layout_free_buffers",
# as a model's are) go to oneDNN's matmul, the weights reordered once: B
# stored [n, k] (NT), A stored [k, m] (TN), and one accumulating into C.
# Without the attribute the same product goes to BLAS.
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def nt(A: T.Buffer((24, 40), "float32"), B: T.Buffer((56, 40), "float32"),
           C: T.Buffer((24, 56), "float32")):
        T.func_attr({"layout_free_buffers": [1]})
        for i, j, k in T.grid(24, 56, 40):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]

    @T.prim_func
    def tn_acc(A: T.Buffer((40, 24), "float32"), B: T.Buffer((40, 56), "float32"),
               C: T.Buffer((24, 56), "float32")):
        T.func_attr({"layout_free_buffers": [1]})
        for i, j, k in T.grid(24, 56, 40):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + A[vk, vi] * B[vk, vj]

    @T.prim_func
    def plain(A: T.Buffer((24, 40), "float32"), B: T.Buffer((56, 40), "float32"),
              C: T.Buffer((24, 56), "float32")):
        for i, j, k in T.grid(24, 56, 40):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
