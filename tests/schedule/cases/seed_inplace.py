# From ../shared/corpus/seed_inplace.py (seeds/002), after loom normalize.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((100,), "float16"), B: T.Buffer((100,), "float16")):
    # with T.block("root"):
    for i_ in range(100):
        with T.block("block"):
            i = T.axis.spatial(100, i_)
            T.reads(B[i], A[i])
            T.writes(B[i])
            B[i] = B[i] + A[i]
