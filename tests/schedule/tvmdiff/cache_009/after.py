# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(placeholder: T.Buffer((1, 32), "int32"), placeholder_red: T.Buffer((1,), "int32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        placeholder_red_temp_v0 = T.sblock_alloc_buffer((1,), "int32")
        placeholder_red_temp_v1 = T.sblock_alloc_buffer((1,), "int32")
        placeholder_red_temp_v1_local = T.sblock_alloc_buffer((1,), "int32", scope="local")
        for ax0, k1 in T.grid(1, 32):
            with T.sblock("placeholder_red_temp"):
                v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
                T.reads(placeholder[v_ax0, v_k1])
                T.writes(placeholder_red_temp_v0[v_ax0], placeholder_red_temp_v1_local[v_ax0])
                with T.init():
                    placeholder_red_temp_v0[v_ax0] = -1
                    placeholder_red_temp_v1_local[v_ax0] = 2147483647
                v_placeholder_red_temp_v0: T.let[T.int32] = T.Select(placeholder_red_temp_v1_local[v_ax0] < placeholder[v_ax0, v_k1] or placeholder_red_temp_v1_local[v_ax0] == placeholder[v_ax0, v_k1] and placeholder_red_temp_v0[v_ax0] < v_k1, placeholder_red_temp_v0[v_ax0], v_k1)
                v_placeholder_red_temp_v1: T.let[T.int32] = T.Select(placeholder_red_temp_v1_local[v_ax0] < placeholder[v_ax0, v_k1], placeholder_red_temp_v1_local[v_ax0], placeholder[v_ax0, v_k1])
                placeholder_red_temp_v0[v_ax0] = v_placeholder_red_temp_v0
                placeholder_red_temp_v1_local[v_ax0] = v_placeholder_red_temp_v1
        for ax0 in range(1):
            with T.sblock("placeholder_red_temp_v1_local"):
                v0 = T.axis.spatial(1, ax0)
                T.reads(placeholder_red_temp_v1_local[v0])
                T.writes(placeholder_red_temp_v1[v0])
                placeholder_red_temp_v1[v0] = placeholder_red_temp_v1_local[v0]
        for ax0 in range(1):
            with T.sblock("placeholder_red"):
                v_ax0 = T.axis.spatial(1, ax0)
                T.reads(placeholder_red_temp_v0[v_ax0])
                T.writes(placeholder_red[v_ax0])
                placeholder_red[v_ax0] = placeholder_red_temp_v0[v_ax0]