import gc

import numpy as np
import pytest

import loom
from conftest import AXPY, CHECKED, HALF, MATMUL_64, RELU, TWO, VADD, rand

IOTA = '''\
from tvm.script import tir as T

@T.prim_func
def iota(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "int32")
    for i in range(n):
        with T.block("A"):
            vi = T.axis.spatial(n, i)
            A[vi] = vi
'''


@pytest.fixture(scope="module")
def matmul():
    return loom.build(loom.read(MATMUL_64))


def test_matmul(matmul, rng):
    assert matmul.functions == ["matmul"]
    a, b = rand(rng, 64, 64), rand(rng, 64, 64)
    c = matmul(a, b)
    assert c.shape == (64, 64) and c.dtype == np.float32
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    # The same through the function, with the output passed in.
    out = np.full((64, 64), np.nan, dtype=np.float32)
    assert matmul.matmul(a, b, out) is None
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)
    assert matmul["matmul"].name == matmul.matmul.name == "matmul"


def test_relu(rng):
    relu = loom.build(loom.read(RELU), target="cpu")
    a = rand(rng, 32, 48)
    np.testing.assert_array_equal(relu(a), np.maximum(a, 0))


def test_symbolic_dimension(rng):
    vadd = loom.build(loom.read(VADD))
    for n in (1, 7, 1000):
        a, b = rand(rng, n), rand(rng, n)
        np.testing.assert_array_equal(vadd(a, b), a + b)
    with pytest.raises(ValueError, match=r"'B'.*\(n,\).*shape \(6,\).*n = 5 from 'A'"):
        vadd(rand(rng, 5), rand(rng, 6))
    with pytest.raises(ValueError, match="'C'"):
        vadd(rand(rng, 5), rand(rng, 5), np.zeros(4, np.float32))


def test_output_of_unknown_size():
    iota = loom.build(loom.read(IOTA))
    with pytest.raises(ValueError, match=r"'A'.*dimension n"):
        iota()
    a = np.full(6, -1, dtype=np.int32)
    assert iota(a) is None
    np.testing.assert_array_equal(a, np.arange(6))


def test_scalar_parameters():
    axpy = loom.build(loom.read(AXPY))
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_allclose(axpy(2.5, x, 3), 2.5 * x + 3)
    np.testing.assert_allclose(axpy(np.float32(-1), x, np.int64(0)), -x)
    np.testing.assert_allclose(axpy(2, x, True), 2 * x + 1)
    with pytest.raises(ValueError, match="'alpha'.*number"):
        axpy("2", x, 3)
    with pytest.raises(ValueError, match="'shift'.*integer"):
        axpy(1.0, x, 3.5)
    with pytest.raises(ValueError, match="'shift'.*does not fit in int32"):
        axpy(1.0, x, 2 ** 40)


def test_float16(rng):
    hadd = loom.build(loom.read(HALF))
    a, b = rand(rng, 8, 8, dtype=np.float16), rand(rng, 8, 8, dtype=np.float16)
    c = hadd(a, b)
    assert c.dtype == np.float16
    np.testing.assert_allclose(c.astype(np.float32), (a + b).astype(np.float32), rtol=1e-2, atol=1e-2)


def test_several_functions():
    exe = loom.build(loom.read(TWO))
    assert exe.functions == ["add", "mul"]
    assert {"add", "mul"} <= set(dir(exe))
    a = np.arange(4, dtype=np.int32)
    b = np.array([5, -1, 2, 3], dtype=np.int32)
    np.testing.assert_array_equal(exe.add(a, b), a + b)
    np.testing.assert_array_equal(exe["mul"](a, b), a * b)
    with pytest.raises(TypeError, match="2 functions"):
        exe(a, b)
    with pytest.raises(KeyError):
        exe["div"]
    with pytest.raises(AttributeError):
        exe.div
    assert repr(exe.add) == "<loom.Function add(A: int32[4], B: int32[4], C: int32[4])>"


def test_assertion_failure():
    fill = loom.build(loom.read(CHECKED))
    a = np.zeros(4, dtype=np.int32)
    assert fill(a, 9) is None
    np.testing.assert_array_equal(a, 9)
    with pytest.raises(loom.Error, match="assertion"):
        fill(a, -1)
    # The written buffer comes first, so it cannot be left out.
    with pytest.raises(TypeError, match="'A'"):
        fill()


@pytest.mark.parametrize("bad, what", [
    (np.zeros((64, 32), np.float32), r"shape \(64, 32\)"),
    (np.zeros((64, 64, 1), np.float32), r"shape \(64, 64, 1\)"),
    (np.zeros((64, 64), np.float64), "dtype float64"),
    (np.zeros((64, 64), np.int32), "dtype int32"),
    (np.zeros((64, 128), np.float32)[:, ::2], "non-contiguous"),
    (np.zeros((64, 64), np.float32).T[:, :].astype(np.float32, order="F"), "non-contiguous"),
    (np.zeros((64, 64), np.float32).tolist(), "got list"),
    (3.0, "got float"),
])
def test_bad_arrays(matmul, bad, what):
    good = np.zeros((64, 64), np.float32)
    with pytest.raises(ValueError, match="parameter 'B' of matmul") as info:
        matmul(good, bad)
    message = str(info.value)
    assert "shape (64, 64) and dtype float32" in message
    assert __import__("re").search(what, message), message


def test_bad_output_and_counts(matmul):
    a = np.zeros((64, 64), np.float32)
    readonly = np.zeros((64, 64), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="parameter 'C'.*read-only"):
        matmul(a, a, readonly)
    # Inputs may be read-only.
    matmul(readonly, readonly)
    with pytest.raises(TypeError, match="missing argument 'B'"):
        matmul(a)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        matmul(a, a, a, a)


def test_closed_executable(rng):
    exe = loom.build(loom.read(RELU))
    f = exe.relu
    exe.close()
    assert exe.closed and repr(exe) == "<loom.Executable (closed)>"
    a = rand(rng, 32, 48)
    for use in (lambda: exe(a), lambda: f(a), lambda: exe["relu"], lambda: exe.relu):
        with pytest.raises(ValueError, match="closed"):
            use()
    with loom.build(loom.read(RELU)) as exe2:
        np.testing.assert_array_equal(exe2(a), np.maximum(a, 0))
    assert exe2.closed


def test_executable_outlives_its_module(rng):
    mod = loom.read(RELU)
    exe = loom.build(mod)
    mod.close()
    del mod
    gc.collect()
    a = rand(rng, 32, 48)
    np.testing.assert_array_equal(exe(a), np.maximum(a, 0))


def test_build_errors():
    with pytest.raises(loom.Error) as info:
        loom.build(loom.read(RELU), target="tpu")
    assert info.value.file == "<target>"
    assert "unknown target" in info.value.message
    with pytest.raises(loom.Error, match="cuda"):
        loom.build(loom.read(RELU), target="cuda")
    with pytest.raises(TypeError):
        loom.build(RELU)
