# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

m = TypeVar("m")
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(lv44: T.Buffer((T.int64(1), T.int64(32), n, m), "float32"), var_compute_intermediate: T.Buffer((T.int64(1), T.int64(32), n, m), "float16")):
        T.func_attr({"global_symbol": "before", "tirx.noalias": True})
        # with T.sblock("root"):
        T_softmax_maxelem = T.sblock_alloc_buffer((T.int64(1), T.int64(32), n))
        T_softmax_exp = T.sblock_alloc_buffer((T.int64(1), T.int64(32), n, m))
        T_softmax_expsum = T.sblock_alloc_buffer((T.int64(1), T.int64(32), n))
        var_T_softmax_norm_intermediate = T.sblock_alloc_buffer((T.int64(1), T.int64(32), n, m))
        for i0, i1, i2, k in T.grid(T.int64(1), T.int64(32), n, m):
            with T.sblock("T_softmax_maxelem"):
                v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])
                T.reads(lv44[v_i0, v_i1, v_i2, v_k])
                T.writes(T_softmax_maxelem[v_i0, v_i1, v_i2])
                with T.init():
                    T_softmax_maxelem[v_i0, v_i1, v_i2] = T.float32(-340282346638528859811704183484516925440.0)
                T_softmax_maxelem[v_i0, v_i1, v_i2] = T.max(T_softmax_maxelem[v_i0, v_i1, v_i2], lv44[v_i0, v_i1, v_i2, v_k])
        with T.sblock("T_softmax_exp_o"):
            v_i0_o = T.axis.spatial(T.int64(1), T.int64(0))
            v_i1_o = T.axis.spatial(T.int64(1), T.int64(0))
            v_i2_o = T.axis.spatial(T.int64(1), T.int64(0))
            v_i3_o = T.axis.spatial(T.int64(1), T.int64(0))
            T.reads(lv44[v_i0_o, T.int64(0):T.int64(32), T.int64(0):n, T.int64(0):m], T_softmax_maxelem[v_i0_o, T.int64(0):T.int64(32), T.int64(0):n])
            T.writes(T_softmax_exp[v_i0_o, T.int64(0):T.int64(32), T.int64(0):n, T.int64(0):m])
            for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(32), n, m):
                with T.sblock("T_softmax_exp"):
                    v_i1_i, v_i2_i, v_i3_i = T.axis.remap("SSS", [i1, i2, i3])
                    T.reads(lv44[v_i0_o, v_i1_i, v_i2_i, v_i3_i], T_softmax_maxelem[v_i0_o, v_i1_i, v_i2_i])
                    T.writes(T_softmax_exp[v_i0_o, v_i1_i, v_i2_i, v_i3_i])
                    T_softmax_exp[v_i0_o, v_i1_i, v_i2_i, v_i3_i] = T.exp(lv44[v_i0_o, v_i1_i, v_i2_i, v_i3_i] - T_softmax_maxelem[v_i0_o, v_i1_i, v_i2_i])
        for i0, i1, i2, k in T.grid(T.int64(1), T.int64(32), n, m):
            with T.sblock("T_softmax_expsum"):
                v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])
                T.reads(T_softmax_exp[v_i0, v_i1, v_i2, v_k])
                T.writes(T_softmax_expsum[v_i0, v_i1, v_i2])
                with T.init():
                    T_softmax_expsum[v_i0, v_i1, v_i2] = T.float32(0.0)
                T_softmax_expsum[v_i0, v_i1, v_i2] = T_softmax_expsum[v_i0, v_i1, v_i2] + T_softmax_exp[v_i0, v_i1, v_i2, v_k]
        for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(32), n, m):
            with T.sblock("T_softmax_norm"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(T_softmax_exp[v_i0, v_i1, v_i2, v_i3], T_softmax_expsum[v_i0, v_i1, v_i2])
                T.writes(var_T_softmax_norm_intermediate[v_i0, v_i1, v_i2, v_i3])
                T.sblock_attr({"axis": 3})
                var_T_softmax_norm_intermediate[v_i0, v_i1, v_i2, v_i3] = T_softmax_exp[v_i0, v_i1, v_i2, v_i3] / T_softmax_expsum[v_i0, v_i1, v_i2]
        for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(32), n, m):
            with T.sblock("compute"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(var_T_softmax_norm_intermediate[v_i0, v_i1, v_i2, v_i3])
                T.writes(var_compute_intermediate[v_i0, v_i1, v_i2, v_i3])
                var_compute_intermediate[v_i0, v_i1, v_i2, v_i3] = T.Cast("float16", var_T_softmax_norm_intermediate[v_i0, v_i1, v_i2, v_i3])