# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "matmul_with_annotation"})
        # with T.sblock("root"):
        B_shared = T.sblock_alloc_buffer((128, 128), scope="shared")
        for j, k in T.grid(128, 128):
            with T.sblock("B_shared"):
                vj, vk = T.axis.remap("SS", [j, k])
                T.reads(B[vj, vk])
                T.writes(B_shared[vj, vk])
                B_shared[vj, vk] = B[vj, vk]
        for i in range(128):
            for j in T.thread_binding(128, thread="threadIdx.y"):
                for k in range(128):
                    with T.sblock("update"):
                        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[vi, vk], B_shared[vj, vk])
                        T.writes(C[vi, vj])
                        T.sblock_attr({"test_annotation": 1})
                        with T.init():
                            C[vi, vj] = T.float32(0.0)
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B_shared[vj, vk]