# From ../shared/corpus/seed_loop_from_one.py (seeds/002), after loom normalize.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((100,), "float16"), B: T.Buffer((100,), "float16")):
    # with T.block("root"):
    for i_ in range(99):
        with T.block("block"):
            i = T.axis.spatial((1, 100), i_ + 1)
            T.reads(A[i])
            T.writes(B[i])
            B[i] = A[i] + T.float16(1.0)
