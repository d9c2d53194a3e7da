# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(x: T.Buffer((1, 3, 40, 40), "float16"), resize: T.Buffer((1, 3, 80, 80), "float16")):
        T.func_attr({"global_symbol": "bilinear_resize"})
        # with T.sblock("root"):
        for i0, i1 in T.grid(1, 3):
            with T.sblock("resize_i2_common"):
                T.reads()
                T.writes()
                with T.sblock("resize_i20_partition"):
                    T.reads()
                    T.writes()
                    for i20, i3 in T.grid(6, 80):
                        with T.sblock("resize_i20"):
                            i0_1, i1_1, i2_1, i3_1 = T.axis.remap("SSSS", [i0, i1, i20, i3])
                            T.reads(x[i0_1, i1_1, 0:40, 0:40])
                            T.writes(resize[0, 0:3, 0:6, 0:80])
                            resize[i0_1, i1_1, i2_1, i3_1] = T.Cast("float16", (T.Cast("float32", x[i0_1, i1_1, T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))), 39), 0), T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))), 39), 0)]) * (T.float32(1.0) - ((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) + T.Cast("float32", x[i0_1, i1_1, T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))), 39), 0), T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))) + 1, 39), 0)]) * ((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) * (T.float32(1.0) - ((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) + (T.Cast("float32", x[i0_1, i1_1, T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))) + 1, 39), 0), T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))), 39), 0)]) * (T.float32(1.0) - ((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) + T.Cast("float32", x[i0_1, i1_1, T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))) + 1, 39), 0), T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))) + 1, 39), 0)]) * ((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) * ((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))))))
                with T.sblock("resize_i21_partition"):
                    T.reads()
                    T.writes()
                    for i21 in range(6, 80):
                        for i3_0, i3_1 in T.grid(2, 40):
                            with T.sblock("resize_i21"):
                                i0_1, i1_1 = T.axis.remap("SS", [i0, i1])
                                i2_1 = T.axis.spatial((6, 80), i21 - 6 + 6)
                                i3_1_1 = T.axis.spatial(80, i3_0 * 40 + i3_1)
                                T.reads(x[i0_1, i1_1, 0:40, 0:40])
                                T.writes(resize[0, 0:3, 6:80, 0:80])
                                resize[i0_1, i1_1, i2_1, i3_1_1] = T.Cast("float16", (T.Cast("float32", x[i0_1, i1_1, T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))), 39), 0), T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))), 39), 0)]) * (T.float32(1.0) - ((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) + T.Cast("float32", x[i0_1, i1_1, T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))), 39), 0), T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))) + 1, 39), 0)]) * ((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) * (T.float32(1.0) - ((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) + (T.Cast("float32", x[i0_1, i1_1, T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))) + 1, 39), 0), T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))), 39), 0)]) * (T.float32(1.0) - ((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) + T.Cast("float32", x[i0_1, i1_1, T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))) + 1, 39), 0), T.max(T.min(T.Cast("int32", T.floor((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))) + 1, 39), 0)]) * ((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i3_1_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5)))))) * ((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5) - T.Cast("float32", T.Cast("int32", T.floor((T.Cast("float32", i2_1) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5))))))