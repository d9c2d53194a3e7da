# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(X: T.Buffer((16, 16), "float32"), Y: T.Buffer((256,), "float32")):
        T.func_attr({"global_symbol": "floordiv_and_floormod_indices"})
        # with T.sblock("root"):
        temp = T.sblock_alloc_buffer((16, 16), "float16")
        temp_global = T.sblock_alloc_buffer((16, 16), "float16")
        for i in range(256):
            for ax0 in range(1):
                for ax1 in T.parallel(1):
                    with T.sblock("A"):
                        v_i = T.axis.spatial(16, i // 16 + ax0)
                        v_j = T.axis.spatial(16, i % 16 + ax1)
                        T.reads(X[v_j, v_i])
                        T.writes(temp_global[v_i, v_j])
                        temp_global[v_i, v_j] = T.Cast("float16", X[v_j, v_i] + T.float32(1.0))
            for ax0, ax1 in T.grid(1, 1):
                with T.sblock("temp_global"):
                    v_i = T.axis.spatial(16, i // 16 + ax0)
                    v_j = T.axis.spatial(16, i % 16 + ax1)
                    T.reads(temp_global[v_i, v_j])
                    T.writes(temp[v_i, v_j])
                    temp[v_i, v_j] = temp_global[v_i, v_j]
            with T.sblock("B"):
                v_i = T.axis.spatial(256, i)
                T.reads(temp[v_i // 16, v_i % 16])
                T.writes(Y[v_i])
                Y[v_i] = T.Cast("float32", temp[v_i // 16, v_i % 16])