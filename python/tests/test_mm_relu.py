"""The ML compilation course's first example, end to end."""

import numpy as np

import loom
from conftest import MM_RELU, rand


def test_mm_relu_by_hand(rng):
    mod = loom.read(MM_RELU)
    assert mod.functions == ["mm_relu"]

    sch = loom.Schedule(mod)
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    a, b = rand(rng, 128, 128), rand(rng, 128, 128)
    expected = np.maximum(a @ b, 0)
    np.testing.assert_allclose(loom.build(sch.mod)(a, b), expected, rtol=1e-4, atol=1e-4)

    block_C = sch.get_block("C", "mm_relu")
    sch.reverse_compute_at(block_C, j0)
    sch.decompose_reduction(block_Y, k)

    scheduled = sch.mod
    text = scheduled.script()
    assert "for i, j_0 in T.grid(128, 32):" in text
    assert "Y_init" in text
    assert loom.read(text) == scheduled

    for m in (mod, scheduled):
        c = loom.build(m)(a, b)
        np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)
