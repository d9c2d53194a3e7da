# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(idx: T.Buffer((128, 128), "int32"), val: T.Buffer((128, 128), "float32"), argmax_v0: T.Buffer((128,), "int32"), argmax_v1: T.Buffer((128,), "float32")):
        T.func_attr({"global_symbol": "argmax_split"})
        # with T.sblock("root"):
        for i0 in range(128):
            with T.sblock("argmax_o"):
                i_o = T.axis.spatial(128, i0)
                k_o = T.axis.reduce(1, 0)
                T.reads(idx[i_o, 0:128], val[i_o, 0:128])
                T.writes(argmax_v0[i_o], argmax_v1[i_o])
                with T.init():
                    with T.sblock("argmax_init"):
                        T.reads()
                        T.writes(argmax_v0[i_o], argmax_v1[i_o])
                        argmax_v0[i_o] = -1
                        argmax_v1[i_o] = T.float32(-340282346638528859811704183484516925440.0)
                for i1_0, i1_1 in T.grid(4, 32):
                    with T.sblock("argmax"):
                        k_i = T.axis.reduce(128, i1_0 * 32 + i1_1)
                        T.reads(argmax_v0[i_o], argmax_v1[i_o], idx[i_o, k_i], val[i_o, k_i])
                        T.writes(argmax_v0[i_o], argmax_v1[i_o])
                        v_argmax_v0: T.let[T.int32] = T.Select(val[i_o, k_i] <= argmax_v1[i_o], argmax_v0[i_o], idx[i_o, k_i])
                        v_argmax_v1: T.let[T.float32] = T.Select(val[i_o, k_i] <= argmax_v1[i_o], argmax_v1[i_o], val[i_o, k_i])
                        argmax_v0[i_o] = v_argmax_v0
                        argmax_v1[i_o] = v_argmax_v1