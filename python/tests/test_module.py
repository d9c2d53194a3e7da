import gc
import importlib
import os
import pathlib

import numpy as np
import pytest

import loom
from conftest import MATMUL_64, MM_RELU, RELU, TWO, VADD


def test_version_and_exports():
    assert loom.__version__ == "0.1.0"
    for name in loom.__all__:
        assert hasattr(loom, name), name
    assert os.path.isfile(loom.library_path)


def test_read_text():
    mod = loom.read(MATMUL_64)
    assert isinstance(mod, loom.Module)
    assert mod.functions == ["matmul"]
    text = mod.script()
    assert "def matmul(" in text and 'T.block("C")' in text
    assert str(mod) == text


def test_read_path_and_pathlike(tmp_path):
    path = tmp_path / "relu.py"
    path.write_text(RELU)
    by_str = loom.read(str(path))
    by_path = loom.read(path)
    assert by_str.functions == by_path.functions == ["relu"]
    assert by_str == by_path == loom.read(RELU)


def test_read_error_locates_the_text():
    bad = RELU.replace("T.max(A[vi, vj], T.float32(0))", "T.max(A[vi, vj],, T.float32(0))")
    with pytest.raises(loom.Error) as info:
        loom.read(bad)
    e = info.value
    assert e.file == "<string>"
    assert e.line == 8
    assert e.col == bad.splitlines()[7].index(",,") + 2
    assert e.message
    rendered = str(e)
    assert rendered.startswith("<string>:8:%d: error: %s" % (e.col, e.message))
    # The source line and a caret under the offending token.
    lines = rendered.splitlines()
    assert lines[1].strip() == bad.splitlines()[7].strip()
    assert lines[2].strip() == "^"


def test_read_error_names(tmp_path):
    with pytest.raises(loom.Error) as info:
        loom.read("x = 1", name="cell[3]")
    assert info.value.file == "cell[3]"
    assert info.value.line == 1 and info.value.col == 1
    assert "prim_func" in info.value.message
    assert str(info.value).startswith("cell[3]:1:1: error:")

    path = tmp_path / "broken.py"
    path.write_text("@T.prim_func\ndef f(:\n    pass\n")
    with pytest.raises(loom.Error) as info:
        loom.read(path)
    assert info.value.file == str(path)
    assert (info.value.line, info.value.col) == (2, 7)


def test_a_missing_file_is_text():
    # No newline and no such file: read as a program, which it is not.
    with pytest.raises(loom.Error) as info:
        loom.read("no_such_file.py")
    assert info.value.file == "<string>"


def test_read_rejects_other_types():
    with pytest.raises(TypeError):
        loom.read(42)


def test_signature():
    sig = loom.read(VADD).signature
    assert sig == [{"name": "vadd", "params": [
        {"name": "A", "dtype": "float32", "shape": ["n"], "written": False},
        {"name": "B", "dtype": "float32", "shape": ["n"], "written": False},
        {"name": "C", "dtype": "float32", "shape": ["n"], "written": True},
    ]}]
    assert loom.read(TWO).functions == ["add", "mul"]


def test_dialects_and_equality():
    mod = loom.read(MATMUL_64)
    tirx = mod.script("tirx")
    assert "T.sblock(" in tirx and "T.block(" not in tirx
    assert mod == loom.read(tirx)
    assert mod == loom.read(mod.script())
    assert not (mod != loom.read(tirx))
    assert mod != loom.read(RELU)
    assert mod != "not a module"
    with pytest.raises(ValueError):
        mod.script("python")
    with pytest.raises(TypeError):
        hash(mod)


def test_equality_ignores_names():
    renamed = MATMUL_64.replace("vi", "x").replace("A[", "P[").replace("A:", "P:")
    assert loom.read(renamed) == loom.read(MATMUL_64)


def test_show_and_repr(capsys):
    mod = loom.read(RELU)
    mod.show()
    assert capsys.readouterr().out == mod.script() + "\n"
    mod.show("tirx")
    assert "T.sblock" in capsys.readouterr().out
    assert repr(mod) == "<loom.Module relu>"


def test_closed_module():
    mod = loom.read(RELU)
    other = loom.read(RELU)
    mod.close()
    assert mod.closed
    assert repr(mod) == "<loom.Module (closed)>"
    for use in (mod.script, lambda: mod.functions, lambda: mod == other,
                lambda: other == mod, lambda: loom.Schedule(mod),
                lambda: loom.build(mod), lambda: loom.compile(mod)):
        with pytest.raises(ValueError, match="closed"):
            use()
    mod.close()  # twice is fine


def test_context_manager():
    with loom.read(RELU) as mod:
        assert mod.functions == ["relu"]
    assert mod.closed
    with pytest.raises(ValueError):
        mod.script()


def test_schedule_keeps_its_module_alive():
    mod = loom.read(RELU)
    sch = loom.Schedule(mod)
    mod.close()
    del mod
    gc.collect()
    i, j = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    assert "T.parallel" in sch.mod.script()
    copy = sch.copy()
    del sch
    gc.collect()
    assert "T.parallel" in copy.mod.script()


class FakeTVMModule:
    def script(self):
        return MATMUL_64


def test_from_tvm():
    assert loom.from_tvm(FakeTVMModule()) == loom.read(MATMUL_64)
    assert loom.from_tvm(RELU) == loom.read(RELU)
    with pytest.raises(TypeError):
        loom.from_tvm(42)

    class Broken:
        def script(self):
            return "@T.prim_func\ndef f(:\n"
    with pytest.raises(loom.Error) as info:
        loom.from_tvm(Broken())
    assert info.value.line == 2


def test_from_tvm_with_tvm(tmp_path, monkeypatch):
    pytest.importorskip("tvm")
    try:
        import tvm.script.tirx  # noqa: F401  TVM 0.25+: tirx, sblock, s_tir=True
        text = (MM_RELU.replace("import tir as T", "import tirx as T")
                .replace("T.block(", "T.sblock(")
                .replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n"))
    except ImportError:
        text = MM_RELU
    # TVM's parser reads the decorated source from its file.
    (tmp_path / "course_module.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    tvm_mod = importlib.import_module("course_module").MyModule

    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 128)).astype(np.float32)
    for obj in (tvm_mod, tvm_mod["mm_relu"]):
        mod = loom.from_tvm(obj)
        assert mod.functions == ["mm_relu"]
        # What TVM parsed and printed is what Loom reads from the same text.
        assert mod == loom.read(text)
        c = loom.build(mod)(a, b)
        np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_pathlib_is_not_text():
    # A Path is a file even when it does not exist.
    with pytest.raises(FileNotFoundError):
        loom.read(pathlib.Path("/nonexistent/prog.py"))
