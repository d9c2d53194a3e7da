# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((8, 32, 8, 8), "float32")):
        T.func_attr({"global_symbol": "elementwise_reverse_affine_load"})
        # with T.sblock("root"):
        B = T.sblock_alloc_buffer((128, 128))
        B_shared = T.sblock_alloc_buffer((128, 128), scope="shared")
        for i in range(128):
            for j in T.serial(128, annotations={"pragma_unroll_explicit": 1}):
                with T.sblock("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for ax0, ax1 in T.grid(128, 128):
            with T.sblock("B_shared"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B[v0, v1])
                T.writes(B_shared[v0, v1])
                B_shared[v0, v1] = B[v0, v1]
        for i, j_0, j_1, k, l in T.grid(8, 7, 5, 8, 8):
            with T.sblock("C"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(32, j_0 * 5 + j_1)
                vk, vl = T.axis.remap("SS", [k, l])
                T.where(j_0 * 5 + j_1 < 32)
                T.reads(B_shared[vi * 16 + (vj * 64 + vk * 8 + vl) // 128, (vj * 64 + vk * 8 + vl) % 128])
                T.writes(C[vi, vj, vk, vl])
                C[vi, vj, vk, vl] = B_shared[vi * 16 + (vj * 64 + vk * 8 + vl) // 128, (vj * 64 + vk * 8 + vl) % 128]