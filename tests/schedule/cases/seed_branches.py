# From ../shared/corpus/seed_branches.py (seeds/002), after loom normalize.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((100, 100), "float16")):
    # with T.block("root"):
    for i in range(100):
        if i % 2 == 0:
            for j in range(100):
                with T.block("block1"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    T.reads()
                    T.writes(A[v_i, v_j])
                    A[v_i, v_j] = T.float16(1.0)
        else:
            for j in range(100):
                with T.block("block2"):
                    v_i, v_j = T.axis.remap("SS", [i, j])
                    T.reads()
                    T.writes(A[v_i, v_j])
                    A[v_i, v_j] = T.float16(2.0)
