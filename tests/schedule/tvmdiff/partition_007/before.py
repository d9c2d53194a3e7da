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
        for i0, i1 in T.grid(16, 64):
            with T.sblock("decode"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(W[v_i0, v_i1 // 4], scale[v_i0, v_i1 // 32])
                T.writes(decode[v_i0, v_i1])
                decode[v_i0, v_i1] = (T.Cast("float32", W[v_i0, v_i1 // 4] >> T.Cast("uint32", v_i1 % 4) * T.uint32(8) & T.uint32(255)) - T.float32(128.0)) * scale[v_i0, v_i1 // 32]
        for i0, i1, k in T.grid(8, 16, 64):
            with T.sblock("matmul"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(x[v_i0, v_k], decode[v_i1, v_k])
                T.writes(matmul[v_i0, v_i1])
                with T.init():
                    matmul[v_i0, v_i1] = T.float32(0.0)
                matmul[v_i0, v_i1] = matmul[v_i0, v_i1] + x[v_i0, v_k] * decode[v_i1, v_k]