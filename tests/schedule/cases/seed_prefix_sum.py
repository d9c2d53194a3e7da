# From ../shared/corpus/seed_prefix_sum.py (seeds/002), after loom normalize.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((100,), "float16"), B: T.Buffer((100,), "float16")):
    # with T.block("root"):
    with T.block("store_B"):
        T.reads()
        T.writes(B[0])
        B[0] = T.float16(0.0)
    for i_ in range(99):
        with T.block("block"):
            i = T.axis.reduce(99, i_)
            T.reads(B[i], A[i + 1])
            T.writes(B[i + 1])
            B[i + 1] = B[i] + A[i + 1]
