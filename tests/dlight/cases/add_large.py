# dlight: Fallback
# trace: sch.split(loop=l3, factors=[None, 4, 256], preserve_unit_iters=True, disable_predication=False)
# trace: sch.unroll(loop=l5)
# An elementwise nest large enough to fill the GPU with blocks of 256 threads,
# four unrolled steps each (sm_90 has 132 multiprocessors: 540,672 elements
# or more).
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024, 640), "float16"), B: T.Buffer((1024, 640), "float16"),
         C: T.Buffer((1024, 640), "float16")):
    for i, j in T.grid(1024, 640):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * B[vi, vj]
