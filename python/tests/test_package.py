"""setup.py copies the built library into the package, and says so clearly
when there is none."""

import os
import shutil
import subprocess
import sys

import loom

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_py(tmp_path, build_dir):
    """Runs setup.py build_py on a copy of the package (setuptools writes
    metadata next to setup.py) with the library taken from build_dir."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(os.path.join(PYTHON_DIR, name), src / name)
    shutil.copytree(os.path.join(PYTHON_DIR, "loom"), src / "loom",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    env = dict(os.environ, LOOM_BUILD_DIR=str(build_dir))
    return subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path / "lib")],
        cwd=src, env=env, capture_output=True, text=True)


def test_build_without_library(tmp_path):
    run = build_py(tmp_path, tmp_path / "nowhere")
    assert run.returncode != 0
    assert "libloom.so does not exist" in run.stderr
    assert "make" in run.stderr


def test_build_copies_the_library(tmp_path):
    build = tmp_path / "build"
    build.mkdir()
    real = build / "libloom.so.0"
    real.write_bytes(b"not really a library")
    (build / "libloom.so").symlink_to(real.name)
    run = build_py(tmp_path, build)
    assert run.returncode == 0, run.stderr
    lib = tmp_path / "lib"
    copied = lib / "loom" / "libloom.so"
    assert not copied.is_symlink()
    assert copied.read_bytes() == b"not really a library"
    assert (lib / "loom" / "__init__.py").exists()


def test_library_override():
    # The test run may point LOOM_LIBRARY at another build (ASan's).
    want = os.environ.get("LOOM_LIBRARY")
    if want:
        assert loom.library_path == want
    else:
        assert os.path.basename(loom.library_path) == "libloom.so"
