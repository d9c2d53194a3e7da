# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128, 128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "reduce"})
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128, 128))
        C_shared = T.sblock_alloc_buffer((128, 128), scope="shared")
        for i, j, k in T.grid(128, 128, 128):
            for l in range(128):
                with T.sblock("B"):
                    vi, vj, vk, vl = T.axis.remap("SSSR", [i, j, k, l])
                    T.reads(A[vi, vj, vk, vl])
                    T.writes(B[vi, vj, vk])
                    with T.init():
                        B[vi, vj, vk] = T.float32(0.0)
                    B[vi, vj, vk] = B[vi, vj, vk] + A[vi, vj, vk, vl]
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(B[vi, vj, vk])
                T.writes(C_shared[vi, vj])
                with T.init():
                    C_shared[vi, vj] = T.float32(0.0)
                C_shared[vi, vj] = C_shared[vi, vj] + B[vi, vj, vk]
        for i, j in T.grid(128, 128):
            with T.sblock("C_shared"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C_shared[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = C_shared[vi, vj]