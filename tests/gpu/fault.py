# A kernel that writes 8 GB past the end of its buffer: on a GPU it faults,
# and `loom run --target cuda` must report that and exit 1, not crash. Both
# thread axes are bound, so that tuning's postprocessors keep it as written.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for b in T.thread_binding(4, thread="blockIdx.x"):
        for t in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("A"):
                vi = T.axis.spatial(1024, b * 256 + t)
                A[vi + 2000000000] = T.float32(1)
