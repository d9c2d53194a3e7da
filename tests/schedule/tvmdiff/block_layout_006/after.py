# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((1, 3, 8, 8), "float32"), PadInput: T.Buffer((1, 3, 10, 10), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        PadInput_shared = T.sblock_alloc_buffer((1, 3, 10, 10), scope="shared")
        for i0 in range(1):
            with T.sblock("PadInput_o"):
                v_i0_o = T.axis.spatial(1, i0)
                v_i1_o = T.axis.spatial(1, 0)
                v_i2_o = T.axis.spatial(1, 0)
                v_i3_o = T.axis.spatial(1, 0)
                T.reads(A[v_i0_o, 0:3, -1:9, -1:9])
                T.writes(PadInput_shared[v_i0_o, 0:3, 0:10, 0:10])
                for ax0, ax1 in T.grid(30, 10):
                    with T.sblock("PadInput"):
                        v0, v1 = T.axis.remap("SS", [ax0, ax1])
                        T.reads(A[v_i0_o, v0 // 10, v0 % 10 + -1, v1 + -1])
                        T.writes(PadInput_shared[v_i0_o, v0 // 10, v0 % 10, v1])
                        PadInput_shared[v_i0_o, v0 // 10, v0 % 10, v1] = T.if_then_else(1 <= v0 % 10 and v0 % 10 < 9 and 1 <= v1 and v1 < 9, A[v_i0_o, v0 // 10, v0 % 10 + -1, v1 - 1], T.float32(0.0))
        for ax0, ax1, ax2, ax3 in T.grid(1, 3, 10, 10):
            with T.sblock("PadInput_shared"):
                v0, v1, v2, v3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(PadInput_shared[v0, v1, v2, v3])
                T.writes(PadInput[v0, v1, v2, v3])
                PadInput[v0, v1, v2, v3] = PadInput_shared[v0, v1, v2, v3]