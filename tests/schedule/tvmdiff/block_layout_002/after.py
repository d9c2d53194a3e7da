# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((1, 4, 10, 10), "float32"), pool_avg: T.Buffer((1, 4, 5, 5), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        pad_temp = T.sblock_alloc_buffer((1, 4, 12, 12))
        pool_sum = T.sblock_alloc_buffer((1, 4, 5, 5))
        for i0, i1, i2, i3 in T.grid(1, 4, 12, 12):
            with T.sblock("pad_temp"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(A[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i2 and v_i2 < 11 and 1 <= v_i3 and v_i3 < 11, A[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0.0))
        for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(1, 4, 5, 5, 3, 3):
            with T.sblock("pool_sum"):
                v_ax0, v_ax1, v_ax2, v_ax3, v_rv0, v_rv1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
                T.reads(pad_temp[v_ax0, v_ax1, v_ax2 * 2 + v_rv0, v_ax3 * 2 + v_rv1])
                T.writes(pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                with T.init():
                    pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0.0)
                pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] + pad_temp[v_ax0, v_ax1, v_ax2 * 2 + v_rv0, v_ax3 * 2 + v_rv1]
        for ax0, ax1, ax2, ax3 in T.grid(4, 5, 1, 5):
            with T.sblock("pool_avg"):
                v0, v1, v2, v3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(pool_sum[v2, v0, v1, v3])
                T.writes(pool_avg[v2, v0, v1, v3])
                T.sblock_attr({"schedule_rule": "meta_schedule.pool_avg"})
                pool_avg[v2, v0, v1, v3] = pool_sum[v2, v0, v1, v3] / T.float32(9.0)