# error: 6:23: a tuple assignment declares symbolic variables: each value must be T.<dtype>()
# from tvm.script import tir as T

@T.prim_func
def main(a: T.handle):
    N, M = T.int32(), 4
    A = T.match_buffer(a, (N, M))
