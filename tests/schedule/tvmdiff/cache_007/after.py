# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32"), D: T.Buffer((256, 256), "float32")):
        T.func_attr({"global_symbol": "matmul_not_stage_pipeline"})
        # with T.sblock("root"):
        C = T.sblock_alloc_buffer((256, 256))
        C_local = T.sblock_alloc_buffer((128, 128), scope="local")
        for i, j, k in T.grid(128, 128, 128):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C_local[vi, vj])
                with T.init():
                    C_local[vi, vj] = T.float32(0.0)
                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0, ax1 in T.grid(128, 128):
            with T.sblock("C_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(C_local[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_local[v0, v1]
        for i, j in T.grid(256, 256):
            with T.sblock("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = C[vi, vj]
