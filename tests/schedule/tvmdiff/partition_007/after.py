# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(W: T.Buffer((16, 16), "uint32"), scale: T.Buffer((16, 2), "float32"), x: T.Buffer((8, 64), "float32"), matmul: T.Buffer((8, 16), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        decode = T.sblock_alloc_buffer((16, 64))
        for i0 in range(16):
            with T.sblock("decode_i1_common"):
                T.reads()
                T.writes()
                with T.sblock("decode_i10_partition"):
                    T.reads()
                    T.writes()
                    for i10 in range(16):
                        with T.sblock("decode_i10"):
                            v_i0, v_i1 = T.axis.remap("SS", [i0, i10])
                            T.reads(W[v_i0, v_i1 // 4], scale[v_i0, v_i1 // 32])
                            T.writes(decode[0:16, 0:16])
                            decode[v_i0, v_i1] = (T.Cast("float32", W[v_i0, v_i1 // 4] >> T.Cast("uint32", v_i1 % 4) * T.uint32(8) & T.uint32(255)) - T.float32(128.0)) * scale[v_i0, v_i1 // 32]
                with T.sblock("decode_i11_partition"):
                    T.reads()
                    T.writes()
                    for i11 in range(16, 24):
                        with T.sblock("decode_i11"):
                            v_i0, v_i1 = T.axis.remap("SS", [i0, i11])
                            T.reads(W[v_i0, v_i1 // 4], scale[v_i0, v_i1 // 32])
                            T.writes(decode[0:16, 16:24])
                            decode[v_i0, v_i1] = (T.Cast("float32", W[v_i0, v_i1 // 4] >> T.Cast("uint32", v_i1 % 4) * T.uint32(8) & T.uint32(255)) - T.float32(128.0)) * scale[v_i0, v_i1 // 32]
                with T.sblock("decode_i12_partition"):
                    T.reads()
                    T.writes()
                    for i12 in range(24, 64):
                        with T.sblock("decode_i12"):
                            v_i0, v_i1 = T.axis.remap("SS", [i0, i12])
                            T.reads(W[v_i0, v_i1 // 4], scale[v_i0, v_i1 // 32])
                            T.writes(decode[0:16, 24:64])
                            decode[v_i0, v_i1] = (T.Cast("float32", W[v_i0, v_i1 // 4] >> T.Cast("uint32", v_i1 % 4) * T.uint32(8) & T.uint32(255)) - T.float32(128.0)) * scale[v_i0, v_i1 // 32]
        for i0, i1, k in T.grid(8, 16, 64):
            with T.sblock("matmul"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(x[v_i0, v_k], decode[v_i1, v_k])
                T.writes(matmul[v_i0, v_i1])
                with T.init():
                    matmul[v_i0, v_i1] = T.float32(0.0)
                matmul[v_i0, v_i1] = matmul[v_i0, v_i1] + x[v_i0, v_k] * decode[v_i1, v_k]