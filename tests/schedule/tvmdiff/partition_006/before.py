# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((1, 4, 16), "float32"), W: T.Buffer((8, 4, 3), "float32"), conv1d_ncw: T.Buffer((1, 8, 16), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        pad_temp = T.sblock_alloc_buffer((1, 4, 18))
        for i0, i1, i2 in T.grid(1, 4, 18):
            with T.sblock("pad_temp"):
                v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
                T.reads(A[v_i0, v_i1, v_i2 - 1])
                T.writes(pad_temp[v_i0, v_i1, v_i2])
                pad_temp[v_i0, v_i1, v_i2] = T.if_then_else(1 <= v_i2 and v_i2 < 17, A[v_i0, v_i1, v_i2 - 1], T.float32(0.0))
        for nn, ff, yy, rc, ry in T.grid(1, 8, 16, 4, 3):
            with T.sblock("conv1d_ncw"):
                v_nn, v_ff, v_yy, v_rc, v_ry = T.axis.remap("SSSRR", [nn, ff, yy, rc, ry])
                T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry], W[v_ff, v_rc, v_ry])
                T.writes(conv1d_ncw[v_nn, v_ff, v_yy])
                with T.init():
                    conv1d_ncw[v_nn, v_ff, v_yy] = T.float32(0.0)
                conv1d_ncw[v_nn, v_ff, v_yy] = conv1d_ncw[v_nn, v_ff, v_yy] + pad_temp[v_nn, v_rc, v_yy + v_ry] * W[v_ff, v_rc, v_ry]