# dlight: Fallback
# target: cuda -arch=sm_90 -multiprocessors=1
# trace: sch.split(loop=l3, factors=[None, 4, 256], preserve_unit_iters=True, disable_predication=False)
# A transpose as large as add_vectors.py: its loads do not move one element
# with the innermost loop, so it keeps one element a thread at a time, each
# step coalesced across the block for the store.
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024, 64), "float16"), C: T.Buffer((64, 1024), "float16")):
    for i, j in T.grid(64, 1024):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vj, vi]
