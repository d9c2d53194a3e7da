# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((1, 2, 4, 6, 5), "float32"), W: T.Buffer((4, 2, 3, 3, 3), "float32"), conv3d_ncdhw: T.Buffer((1, 4, 4, 6, 5), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        pad_temp = T.sblock_alloc_buffer((1, 2, 6, 8, 7))
        for i0, i1, i2, i3, i4 in T.grid(1, 2, 6, 8, 7):
            with T.sblock("pad_temp"):
                v_i0, v_i1, v_i2, v_i3, v_i4 = T.axis.remap("SSSSS", [i0, i1, i2, i3, i4])
                T.reads(A[v_i0, v_i1, v_i2 - 1, v_i3 - 1, v_i4 - 1])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3, v_i4])
                pad_temp[v_i0, v_i1, v_i2, v_i3, v_i4] = T.if_then_else(1 <= v_i2 and v_i2 < 5 and 1 <= v_i3 and v_i3 < 7 and 1 <= v_i4 and v_i4 < 6, A[v_i0, v_i1, v_i2 - 1, v_i3 - 1, v_i4 - 1], T.float32(0.0))
        for nn, ff, yy, xx, zz, rc in T.grid(1, 4, 4, 6, 5, 2):
            with T.sblock("conv3d_ncdhw_o"):
                v_nn_o, v_ff_o, v_yy_o, v_xx_o, v_zz_o, v_rc_o = T.axis.remap("SSSSSR", [nn, ff, yy, xx, zz, rc])
                v_ry_o = T.axis.reduce(1, 0)
                v_rx_o = T.axis.reduce(1, 0)
                v_rz_o = T.axis.reduce(1, 0)
                T.reads(pad_temp[v_nn_o, v_rc_o, v_yy_o:v_yy_o + 3, v_xx_o:v_xx_o + 3, v_zz_o:v_zz_o + 3], W[v_ff_o, v_rc_o, 0:3, 0:3, 0:3])
                T.writes(conv3d_ncdhw[v_nn_o, v_ff_o, v_yy_o, v_xx_o, v_zz_o])
                with T.init():
                    with T.sblock("conv3d_ncdhw_init"):
                        T.reads()
                        T.writes(conv3d_ncdhw[v_nn_o, v_ff_o, v_yy_o, v_xx_o, v_zz_o])
                        conv3d_ncdhw[v_nn_o, v_ff_o, v_yy_o, v_xx_o, v_zz_o] = T.float32(0.0)
                for ry, rx, rz in T.grid(3, 3, 3):
                    with T.sblock("conv3d_ncdhw"):
                        v_ry_i, v_rx_i, v_rz_i = T.axis.remap("RRR", [ry, rx, rz])
                        T.reads(conv3d_ncdhw[v_nn_o, v_ff_o, v_yy_o, v_xx_o, v_zz_o], pad_temp[v_nn_o, v_rc_o, v_yy_o + v_ry_i, v_xx_o + v_rx_i, v_zz_o + v_rz_i], W[v_ff_o, v_rc_o, v_ry_i, v_rx_i, v_rz_i])
                        T.writes(conv3d_ncdhw[v_nn_o, v_ff_o, v_yy_o, v_xx_o, v_zz_o])
                        conv3d_ncdhw[v_nn_o, v_ff_o, v_yy_o, v_xx_o, v_zz_o] = conv3d_ncdhw[v_nn_o, v_ff_o, v_yy_o, v_xx_o, v_zz_o] + pad_temp[v_nn_o, v_rc_o, v_yy_o + v_ry_i, v_xx_o + v_rx_i, v_zz_o + v_rz_i] * W[v_ff_o, v_rc_o, v_ry_i, v_rx_i, v_rz_i]