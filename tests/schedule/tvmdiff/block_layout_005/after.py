# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((1, 8, 7, 7), "float32"), adaptive_pool_avg: T.Buffer((1, 8, 1, 1), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        adaptive_pool_sum = T.sblock_alloc_buffer((1, 8, 1, 1))
        for ax0, ax1, ax2, ax3, ax4, ax5 in T.grid(1, 8, 7, 1, 1, 7):
            with T.sblock("adaptive_pool_sum"):
                v0, v1, v2, v3, v4, v5 = T.axis.remap("SSRSSR", [ax0, ax1, ax2, ax3, ax4, ax5])
                T.reads(A[v4, v1, v2, v5])
                T.writes(adaptive_pool_sum[v4, v1, v0, v3])
                with T.init():
                    adaptive_pool_sum[v4, v1, v0, v3] = T.float32(0.0)
                adaptive_pool_sum[v4, v1, v0, v3] = adaptive_pool_sum[v4, v1, v0, v3] + A[v4, v1, v2, v5]
        for ax0, ax1, ax2, ax3 in T.grid(1, 8, 1, 1):
            with T.sblock("adaptive_pool_avg"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3])
                T.writes(adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3])
                T.sblock_attr({"schedule_rule": "meta_schedule.adaptive_pool_avg"})
                adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] / T.float32(49.0)