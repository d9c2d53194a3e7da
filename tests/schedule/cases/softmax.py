# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 12), "float32"), B: T.Buffer((4, 12), "float32")):
    T.func_attr({"tir.noalias": True})
    maxv = T.alloc_buffer((4,))
    ex = T.alloc_buffer((4, 12))
    total = T.alloc_buffer((4,))
    for i, k in T.grid(4, 12):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxv[vi] = T.min_value("float32")
            maxv[vi] = T.max(maxv[vi], A[vi, vk])
    for i, j in T.grid(4, 12):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            ex[vi, vj] = T.exp(A[vi, vj] - maxv[vi])
    for i, k in T.grid(4, 12):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                total[vi] = T.float32(0.0)
            total[vi] = total[vi] + ex[vi, vk]
    for i, j in T.grid(4, 12):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = ex[vi, vj] / total[vi]
