# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((128,), "float32"), B: T.Buffer((), "float32")):
        T.func_attr({"global_symbol": "rowsum_zero_dim"})
        # with T.sblock("root"):
        B_rf = T.sblock_alloc_buffer((6,), elem_offset=T.int64(0))
        for k0_0_0, k0_0_1, k0_1, k0_2 in T.grid(1, 6, 8, 4):
            with T.sblock("B_rf"):
                vk0_0_1, vk0_0_0, vk0_1, vk0_2 = T.axis.remap("SRRR", [k0_0_1, k0_0_0, k0_1, k0_2])
                T.where(k0_0_0 * 6 + k0_0_1 < 4)
                T.reads(A[(vk0_0_0 * 6 + vk0_0_1) * 32 + vk0_1 * 4 + vk0_2])
                T.writes(B_rf[vk0_0_1])
                with T.init():
                    B_rf[vk0_0_1] = T.float32(0.0)
                B_rf[vk0_0_1] = B_rf[vk0_0_1] + A[(vk0_0_0 * 6 + vk0_0_1) * 32 + vk0_1 * 4 + vk0_2]
        for k0_0_1 in range(6):
            with T.sblock("B"):
                vk0_0_1 = T.axis.reduce(6, k0_0_1)
                T.reads(B_rf[vk0_0_1])
                T.writes(B[()])
                with T.init():
                    B[()] = T.float32(0.0)
                B[()] = B[()] + B_rf[vk0_0_1]