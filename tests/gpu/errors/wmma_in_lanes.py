# expect: 11:13: error: the GPU lowering does not support a wmma call inside the loop 't' bound to threadIdx.x
from tvm.script import tir as T

@T.prim_func
def main(C: T.Buffer((16, 16), "float32")):
    for b in T.thread_binding(1, thread="blockIdx.x"):
        with T.block("root"):
            T.reads()
            T.writes(C[0:16, 0:16])
            acc = T.alloc_buffer((16, 16), scope="wmma.accumulator")
            for t in T.thread_binding(32, thread="threadIdx.x"):
                T.evaluate(T.tvm_fill_fragment(acc.data, 16, 16, 16, 0, T.float32(0)))
            T.evaluate(T.tvm_store_matrix_sync(acc.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float32"), C.data, 0, 256, 2), 16, "row_major"))
