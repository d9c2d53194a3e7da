"""Small programs the tests read, as TVMScript text."""

import numpy as np
import pytest

MATMUL_64 = '''\
from tvm.script import tir as T

@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
           C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

# Small enough that tuning it for 8 trials takes a second or two.
MATMUL_16 = MATMUL_64.replace("64", "16")

RELU = '''\
from tvm.script import tir as T

@T.prim_func
def relu(A: T.Buffer((32, 48), "float32"), B: T.Buffer((32, 48), "float32")):
    for i, j in T.grid(32, 48):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(A[vi, vj], T.float32(0))
'''

# A symbolic length n, taken from the arrays.
VADD = '''\
from tvm.script import tir as T

@T.prim_func
def vadd(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = A[vi] + B[vi]
'''

# Scalar parameters between buffers.
AXPY = '''\
from tvm.script import tir as T

@T.prim_func
def axpy(alpha: T.float32, X: T.Buffer((10,), "float32"), shift: T.int32,
         Y: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("Y"):
            vi = T.axis.spatial(10, i)
            Y[vi] = alpha * X[vi] + T.Cast("float32", shift)
'''

HALF = '''\
from tvm.script import tir as T

@T.prim_func
def hadd(A: T.Buffer((8, 8), "float16"), B: T.Buffer((8, 8), "float16"),
         C: T.Buffer((8, 8), "float16")):
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
'''

# Two functions: calls by name.
TWO = '''\
from tvm.script import ir as I
from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"),
            C: T.Buffer((4,), "int32")):
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                C[vi] = A[vi] + B[vi]

    @T.prim_func
    def mul(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"),
            C: T.Buffer((4,), "int32")):
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                C[vi] = A[vi] * B[vi]
'''

# An assertion on a scalar parameter.
CHECKED = '''\
from tvm.script import tir as T

@T.prim_func
def fill(A: T.Buffer((4,), "int32"), x: T.int32):
    assert x > 0, "x must be positive"
    for i in range(4):
        with T.block("A"):
            vi = T.axis.spatial(4, i)
            A[vi] = x
'''

# The ML compilation course's example, as TVM users write it.
MM_RELU = '''\
import tvm
from tvm.script import tir as T


@tvm.script.ir_module
class MyModule:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"),
                B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), dtype="float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                vk = T.axis.reduce(128, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def rand(rng, *shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)
