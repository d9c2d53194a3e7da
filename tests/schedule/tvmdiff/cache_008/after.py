# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
        T.func_attr({"global_symbol": "access_opaque_ptr_then_elemwise"})
        # with T.sblock("root"):
        A_cache = T.sblock_alloc_buffer((1024,))
        BB = T.sblock_alloc_buffer((1024,))
        A_cache_global = T.sblock_alloc_buffer((512,))
        with T.sblock("opaque"):
            T.reads(A[0:512])
            T.writes(A_cache_global[0:512])
            T.tvm_access_ptr(T.type_annotation("float32"), A.data, 0, 512, 1)
            T.tvm_access_ptr(T.type_annotation("float32"), A_cache_global.data, 0, 512, 2)
        for ax0 in range(512):
            with T.sblock("A_cache_global"):
                v0 = T.axis.spatial(512, ax0)
                T.reads(A_cache_global[v0])
                T.writes(A_cache[v0])
                A_cache[v0] = A_cache_global[v0]
        with T.sblock("BB_o"):
            vi_o = T.axis.spatial(1, 0)
            T.reads(A_cache[0:512])
            T.writes(BB[0:512])
            for i in range(512):
                with T.sblock("BB"):
                    vi_i = T.axis.spatial(512, i)
                    T.reads(A_cache[vi_i])
                    T.writes(BB[vi_i])
                    BB[vi_i] = A_cache[vi_i] * T.float32(2.0)
        for i in range(512):
            with T.sblock("B"):
                vi = T.axis.spatial(512, i)
                T.reads(BB[vi])
                T.writes(B[vi])
                B[vi] = BB[vi] + T.float32(1.0)
