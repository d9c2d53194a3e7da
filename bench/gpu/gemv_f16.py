# y = W x, W 16384 x 16384 float16 laid out along the reduction, the sum in
# float32: bound by reading W once (512 MiB).
from tvm.script import tir as T

@T.prim_func
def main(W: T.Buffer((16384, 16384), "float16"), x: T.Buffer((16384,), "float16"),
         y: T.Buffer((16384,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, k in T.grid(16384, 16384):
        with T.block("y"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                y[vi] = T.float32(0)
            y[vi] = y[vi] + T.Cast("float32", W[vi, vk]) * T.Cast("float32", x[vk])
