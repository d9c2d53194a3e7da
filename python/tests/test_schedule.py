import numpy as np
import pytest

import loom
from loom import _lib
from conftest import MATMUL_64, MM_RELU, RELU, rand


def replay(mod, script):
    """Runs a whole schedule script (a trace as printed) on a fresh schedule
    through the C side, and returns the module it gives."""
    sch = loom.Schedule(mod)
    text = script.encode()
    with _lib.diagnostic() as d:
        status = _lib.lib.loom_embed_sched_run(sch._ptr, text, len(text), b"<trace>", d.ref)
        if status != 0:
            raise d.error()
    return sch.mod


def test_outputs_are_random_variables():
    sch = loom.Schedule(loom.read(MATMUL_64))
    block = sch.get_block("C")
    assert isinstance(block, loom.BlockRV) and block.name == "b0"
    loops = sch.get_loops(block)
    assert isinstance(loops, list) and len(loops) == 3
    assert all(isinstance(l, loom.LoopRV) for l in loops)
    assert [l.name for l in loops] == ["l1", "l2", "l3"]
    # A list-valued method gives a list even with one output.
    outer = sch.split(loops[0], [None, 64])
    assert isinstance(outer, list) and len(outer) == 2
    assert sch.fuse(*outer[:1]) is not None
    assert sch.parallel(loops[1]) is None
    assert repr(block) == "BlockRV(b0)"


def test_sampled_values():
    sch = loom.Schedule(loom.read(MATMUL_64), seed=7)
    i, j, k = sch.get_loops(sch.get_block("C"))
    tiles = sch.sample_perfect_tile(i, n=3, max_innermost_factor=8, decision=[2, 4, 8])
    assert all(isinstance(v, loom.ExprRV) for v in tiles)
    assert [int(v) for v in tiles] == [2, 4, 8]
    sampled = sch.sample_perfect_tile(j, n=2)
    assert int(sampled[0]) * int(sampled[1]) == 64
    # Sampled values are factors of later steps.
    i0, i1, i2 = sch.split(i, factors=tiles)
    text = sch.mod.script()
    assert "for i_0, i_1, i_2, j, k in T.grid(2, 4, 8, 64, 64):" in text
    choice = sch.sample_categorical([1, 2, 4], [0.0, 1.0, 0.0])
    # The value is the candidate drawn, not its index.
    assert isinstance(choice, loom.ExprRV) and int(choice) == 2


def test_same_seed_same_samples():
    def draw(seed):
        sch = loom.Schedule(loom.read(MATMUL_64), seed=seed)
        i, j, k = sch.get_loops(sch.get_block("C"))
        return [[int(v) for v in sch.sample_perfect_tile(l, n=3)] for l in (i, j, k)]
    assert draw(3) == draw(3)
    assert len({str(draw(s)) for s in range(6)}) > 1


def test_hand_schedule_matches_numpy(rng):
    mod = loom.read(MATMUL_64)
    sch = loom.Schedule(mod)
    block = sch.get_block(name="C", func_name="matmul")
    i, j, k = sch.get_loops(block=block)
    i0, i1 = sch.split(i, factors=[None, 16])
    j0, j1 = sch.split(j, factors=[np.int64(4), 16])
    sch.reorder(i0, j0, k, i1, j1)
    sch.parallel(i0)
    sch.vectorize(j1)
    sch.decompose_reduction(block, k)
    scheduled = sch.mod
    assert scheduled != mod
    text = scheduled.script()
    assert "T.parallel" in text and "T.vectorized" in text

    a, b = rand(rng, 64, 64), rand(rng, 64, 64)
    c = loom.build(scheduled)(a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)

    # The module prints and reads back as itself, and the trace replays.
    assert loom.read(scheduled.script()) == scheduled
    assert loom.read(scheduled.script("tirx")) == scheduled
    assert replay(mod, str(sch.trace)) == scheduled
    assert replay(mod, sch.trace.as_python("tirx")) == scheduled


def test_trace_forms(capsys):
    sch = loom.Schedule(loom.read(MATMUL_64))
    block = sch.get_sblock("C")  # TVM 0.25+ spelling
    i, j, k = sch.get_loops(block)
    sch.split(i, [None, 8])
    trace = sch.trace
    assert str(trace) == trace.as_python()
    lines = trace.as_python().splitlines()
    assert lines[0] == 'b0 = sch.get_block(name="C", func_name="matmul")'
    assert lines[1] == "l1, l2, l3 = sch.get_loops(block=b0)"
    assert lines[2].startswith("l4, l5 = sch.split(loop=l1, factors=[None, 8]")
    assert trace.as_python("tirx").startswith("b0 = sch.get_sblock(")
    record = trace.as_json()
    assert record.startswith('[[["GetBlock", [], ["C", "matmul"], ["b0"]]')
    assert '"GetSBlock"' in trace.as_json("tirx")
    trace.show()
    assert capsys.readouterr().out == trace.as_python()
    # A trace is a snapshot.
    sch.parallel(j)
    assert "parallel" not in str(trace) and "parallel" in str(sch.trace)


def test_arguments_as_literals():
    sch = loom.Schedule(loom.read(RELU))
    block = sch.get_block("B")
    sch.annotate(block, 'we"ird\\key', "line\nnext\ttab")
    sch.annotate(block_or_loop=block, ann_key="nested", ann_val={"a": 1, "b": [1.5, True, None]})
    sch.annotate(block, "small", 0.1)
    sch.annotate(block, "flag", np.bool_(False))
    sch.annotate(block, "tuple", (3,))
    lines = str(sch.trace).splitlines()
    assert lines[1] == r'sch.annotate(block_or_loop=b0, ann_key="we\"ird\\key", ann_val="line\nnext\ttab")'
    assert lines[2].endswith('ann_key="nested", ann_val={"a": 1, "b": [1.5, True, None]})')
    assert lines[3].endswith("ann_val=0.10000000000000001)") or lines[3].endswith("ann_val=0.1)")
    assert lines[4].endswith("ann_val=False)")
    assert lines[5].endswith("ann_val=[3])")
    with pytest.raises(ValueError):
        sch.annotate(block, "x", float("nan"))
    with pytest.raises(TypeError):
        sch.annotate(block, "x", object())


def test_written_calls():
    sch = loom.Schedule(loom.read(RELU))
    b = sch.get_block("B")
    line = sch._line("split", (b, [None, (1,), ()]), {"x": loom.Code("lambda i: i"), "y": -2})
    assert line == "sch.split(b0, [None, (1,), ()], x=lambda i: i, y=-2)\n"
    with pytest.raises(TypeError):
        sch.get_block(**{"name='C'), sch.parallel(l1": "x"})


def test_unknown_method():
    sch = loom.Schedule(loom.read(RELU))
    with pytest.raises(AttributeError, match="no_such_primitive"):
        sch.no_such_primitive
    with pytest.raises(AttributeError):
        sch._private


def test_refused_steps_raise_and_change_nothing():
    sch = loom.Schedule(loom.read(RELU))
    block = sch.get_block("B")
    i, j = sch.get_loops(block)
    before = str(sch.trace)

    with pytest.raises(loom.Error) as info:
        sch.split(i, factors=[3, 5])
    e = info.value
    assert e.file == "<schedule>" and e.line == 1
    assert "split" in e.message and "32" in e.message
    assert "sch.split(l1, factors=[3, 5])" in str(e)
    assert __file__ in str(e)  # where the call was made

    with pytest.raises(loom.Error, match="no block named 'nope'"):
        sch.get_block("nope")
    with pytest.raises(loom.Error, match="must be a loop"):
        sch.split(block, [None, 4])
    with pytest.raises(loom.Error) as info:
        sch.get_loops(block, bogus=1)
    assert info.value.col == len("sch.get_loops(b0, ") + 1
    assert str(sch.trace) == before
    # The schedule goes on after a refusal.
    sch.split(i, [None, 4])


def test_random_variables_of_other_schedules():
    mod = loom.read(RELU)
    first = loom.Schedule(mod)
    block = first.get_block("B")
    copy = first.copy()
    later = first.get_loops(block)
    # Made before the copy: the same block in the copy.
    i, j = copy.get_loops(block)
    copy.parallel(i)
    # Made after it, or by an unrelated schedule: refused.
    with pytest.raises(ValueError, match="another schedule"):
        copy.parallel(later[0])
    with pytest.raises(ValueError, match="another schedule"):
        loom.Schedule(mod).get_loops(block)
    assert "T.parallel" in copy.mod.script()
    assert "T.parallel" not in first.mod.script()


def test_copy_is_independent():
    sch = loom.Schedule(loom.read(RELU))
    i, j = sch.get_loops(sch.get_block("B"))
    other = sch.copy()
    sch.vectorize(j)
    assert "vectorize" in str(sch.trace)
    assert "vectorize" not in str(other.trace)
    assert str(other.trace) in str(sch.trace)


def test_bad_schedule_arguments():
    with pytest.raises(TypeError):
        loom.Schedule(RELU)
    with pytest.raises(ValueError):
        loom.Schedule(loom.read(RELU), seed=-1)


def test_index_map_from_a_lambda(rng):
    sch = loom.Schedule(loom.read(MM_RELU))
    y = sch.get_block("Y", func_name="mm_relu")
    sch.transform_layout(y, ("write", 0), lambda i, j: (i // 16, j, i % 16))
    text = sch.mod.script()
    assert "Y = T.alloc_buffer((8, 128, 16))" in text
    # Kept as its text; printed as TVM prints maps.
    assert "index_map=lambda i, j: (i // 16, j, i % 16,)" in str(sch.trace)

    # A map over several lines is written on one.
    sch2 = loom.Schedule(loom.read(MM_RELU))
    sch2.transform_layout(sch2.get_block("Y"), ("write", 0),
                          lambda i, j: (
                              j,   # columns first
                              i,
                          ))
    # Text works where the source is not at hand.
    sch3 = loom.Schedule(loom.read(MM_RELU))
    sch3.transform_layout(sch3.get_block("Y"), ("write", 0), loom.Code("lambda a, b: (b, a)"))
    assert sch2.mod == sch3.mod
    # The buffer by its name, as TVM's methods take it: recorded as its index.
    sch4 = loom.Schedule(loom.read(MM_RELU))
    sch4.transform_layout(sch4.get_block("Y"), "Y", lambda i, j: (j, i))
    assert sch4.mod == sch3.mod
    assert 'buffer=("write", 0)' in str(sch4.trace)
    with pytest.raises(loom.Error, match="block 'Y' reads no buffer named 'Q'"):
        sch4.cache_read(sch4.get_block("Y"), "Q", "global")

    a, b = rand(rng, 128, 128), rand(rng, 128, 128)
    for s in (sch, sch2):
        c = loom.build(s.mod)(a, b)
        np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_lambda_without_source():
    sch = loom.Schedule(loom.read(MM_RELU))
    y = sch.get_block("Y")
    fn = eval("lambda i, j: (j, i)")
    with pytest.raises(TypeError, match="loom.Code"):
        sch.transform_layout(y, ("write", 0), fn)

    def named(i, j):
        return (j, i)
    with pytest.raises(TypeError, match="loom.Code"):
        sch.transform_layout(y, ("write", 0), named)


def test_many_outputs():
    sch = loom.Schedule(loom.read(MATMUL_64))
    i, j, k = sch.get_loops(sch.get_block("C"))
    parts = sch.split(i, [1] * 14 + [2] * 6)
    assert len(parts) == 20 and len({p.k for p in parts}) == 20
    assert all(isinstance(p, loom.LoopRV) for p in parts)
