# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((8, 16, 1), "float32"), D: T.Buffer((1, 8, 16, 128), "float32")):
        T.func_attr({"global_symbol": "elementwise_reverse_affine_load_unit_iter"})
        # with T.sblock("root"):
        C = T.sblock_alloc_buffer((128, 128))
        A_shared = T.sblock_alloc_buffer((128, 128), scope="shared")
        A_global = T.sblock_alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.sblock("A_global"):
                v0, v1 = T.axis.remap("SS", [i, j])
                T.reads(A[v0, v1])
                T.writes(A_global[v0, v1])
                A_global[v0, v1] = A[v0, v1]
        for i, j in T.grid(128, 128):
            with T.sblock("A_shared"):
                v0, v1 = T.axis.remap("SS", [i, j])
                T.reads(A_global[v0, v1])
                T.writes(A_shared[v0, v1])
                T.sblock_attr({"auto_copy": True})
                for ax0, ax1 in T.grid(1, 1):
                    A_shared[v0 + ax0, v1 + ax1] = A_global[v0, v1]
            with T.sblock("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A_shared[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A_shared[vi, vj] * T.float32(2.0)
        for i, j, k, l in T.grid(1, 8, 16, 128):
            with T.sblock("C"):
                vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, l])
                T.reads(C[vj * 16 + vk, vl], B[vj, vk, vi])
                T.writes(D[vi, vj, vk, vl])
                D[vi, vj, vk, vl] = C[vj * 16 + vk, vl] + B[vj, vk, vi]