# from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer((1, 6, 6, 4), "float32"), W: T.Buffer((3, 3, 4, 4), "float32"), Y: T.Buffer((1, 6, 6, 4), "float32")):
    T.func_attr({"tir.noalias": True})
    pad = T.alloc_buffer((1, 8, 8, 4))
    for n, h, w, c in T.grid(1, 8, 8, 4):
        with T.block("pad"):
            vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
            pad[vn, vh, vw, vc] = T.if_then_else(1 <= vh and vh < 7 and 1 <= vw and vw < 7, X[vn, vh - 1, vw - 1, vc], T.float32(0.0))
    for n, h, w, co, rh, rw, ci in T.grid(1, 6, 6, 4, 3, 3, 4):
        with T.block("conv"):
            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
            with T.init():
                Y[vn, vh, vw, vco] = T.float32(0.0)
            Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + pad[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]
