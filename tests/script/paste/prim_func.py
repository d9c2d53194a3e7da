# A lone function under the decorator's full path.
import tvm
from tvm.script import tir as T

@tvm.script.tir.prim_func
def add_one(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi] + T.float32(1)

print(add_one.script())
