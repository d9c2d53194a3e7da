# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((16,), "float32"), y: T.Buffer((8,), "float32"), T_concat: T.Buffer((24,), "float32")):
        T.func_attr({"global_symbol": "concat_two_elemwise"})
        # with T.sblock("root"):
        T_add_1 = T.sblock_alloc_buffer((16,))
        T_add_2 = T.sblock_alloc_buffer((8,))
        for i in range(16):
            with T.sblock("T_add_1"):
                ax = T.axis.spatial(16, i)
                T.reads(x[ax])
                T.writes(T_add_1[ax])
                T_add_1[ax] = x[ax] + T.float32(1.0)
        with T.sblock("T_add_2_o"):
            ax_o = T.axis.spatial(1, 0)
            T.reads(y[0:8])
            T.writes(T_add_2[0:8])
            for i in range(8):
                with T.sblock("T_add_2"):
                    ax_i = T.axis.spatial(8, i)
                    T.reads(y[ax_i])
                    T.writes(T_add_2[ax_i])
                    T_add_2[ax_i] = y[ax_i] + T.float32(2.0)
        for i in range(24):
            with T.sblock("T_concat"):
                ax = T.axis.spatial(24, i)
                T.reads(T_add_2[ax - 16], T_add_1[ax])
                T.writes(T_concat[ax])
                T_concat[ax] = T.if_then_else(16 <= ax, T_add_2[ax - 16], T_add_1[ax])