# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((1, 4, 6, 6), "float32"), W: T.Buffer((4, 4, 4, 4), "float32"), compute: T.Buffer((1, 4, 12, 12), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        data_dilate = T.sblock_alloc_buffer((1, 4, 11, 11))
        data_pad = T.sblock_alloc_buffer((1, 4, 15, 15))
        kernel_transform = T.sblock_alloc_buffer((4, 4, 4, 4))
        W_local = T.sblock_alloc_buffer((4, 4, 4, 4), scope="local")
        for i0, i1, i2, i3 in T.grid(1, 4, 11, 11):
            with T.sblock("data_dilate"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(A[v_i0, v_i1, v_i2 // 2, v_i3 // 2])
                T.writes(data_dilate[v_i0, v_i1, v_i2, v_i3])
                data_dilate[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(v_i2 % 2 == 0 and v_i3 % 2 == 0, A[v_i0, v_i1, v_i2 // 2, v_i3 // 2], T.float32(0.0))
        for i0, i1, i2, i3 in T.grid(1, 4, 15, 15):
            with T.sblock("data_pad"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(data_dilate[v_i0, v_i1, v_i2 - 2, v_i3 - 2])
                T.writes(data_pad[v_i0, v_i1, v_i2, v_i3])
                data_pad[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(2 <= v_i2 and v_i2 < 13 and 2 <= v_i3 and v_i3 < 13, data_dilate[v_i0, v_i1, v_i2 - 2, v_i3 - 2], T.float32(0.0))
        for o, i, h in T.grid(4, 4, 4):
            with T.sblock("W_local"):
                v0, v1, v2 = T.axis.remap("SSS", [i, o, h])
                T.reads(W[v0, v1, 3 - v2, 0:4])
                T.writes(W_local[v0, v1, 3 - v2, 0:4])
                T.sblock_attr({"auto_copy": True})
                for ax0, ax1, ax2, ax3 in T.grid(1, 1, 1, 4):
                    W_local[v0 + ax0, v1 + ax1, 3 - v2 + ax2, ax3] = W[v0 + ax0, v1 + ax1, 3 - v2 + ax2, ax3]
            for w in range(4):
                with T.sblock("kernel_transform"):
                    v_o, v_i, v_h, v_w = T.axis.remap("SSSS", [o, i, h, w])
                    T.reads(W_local[v_i, v_o, 3 - v_h, 3 - v_w])
                    T.writes(kernel_transform[v_o, v_i, v_h, v_w])
                    kernel_transform[v_o, v_i, v_h, v_w] = W_local[v_i, v_o, 3 - v_h, 3 - v_w]
        for b, c, h, w, dc, dh, dw in T.grid(1, 4, 12, 12, 4, 4, 4):
            with T.sblock("compute"):
                v_b, v_c, v_h, v_w, v_dc, v_dh, v_dw = T.axis.remap("SSSSRRR", [b, c, h, w, dc, dh, dw])
                T.reads(data_pad[v_b, v_dc, v_h + v_dh, v_w + v_dw], kernel_transform[v_c, v_dc, v_dh, v_dw])
                T.writes(compute[v_b, v_c, v_h, v_w])
                with T.init():
                    compute[v_b, v_c, v_h, v_w] = T.float32(0.0)
                compute[v_b, v_c, v_h, v_w] = compute[v_b, v_c, v_h, v_w] + data_pad[v_b, v_dc, v_h + v_dh, v_w + v_dw] * kernel_transform[v_c, v_dc, v_dh, v_dw]