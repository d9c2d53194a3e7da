# expect: 12:13: error: threadIdx.x is bound here to a loop of extent other than 32 in a kernel that makes wmma calls
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((16, 16), "float32")):
    for b in T.thread_binding(1, thread="blockIdx.x"):
        with T.block("root"):
            T.reads(A[0:64])
            T.writes(A[0:64], C[0:16, 0:16])
            acc = T.alloc_buffer((16, 16), scope="wmma.accumulator")
            T.evaluate(T.tvm_fill_fragment(acc.data, 16, 16, 16, 0, T.float32(0)))
            for t in T.thread_binding(64, thread="threadIdx.x"):
                A[t] = A[t] + T.float32(1)
            T.evaluate(T.tvm_store_matrix_sync(acc.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("float32"), C.data, 0, 256, 2), 16, "row_major"))
