"""Packages loom with the libloom.so that `make` built, so that an installed
`import loom` needs neither the source tree nor an environment variable.

Metadata is in pyproject.toml; this file only copies the library.
"""

import os

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from setuptools.errors import SetupError

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def built_library():
    build_dir = os.environ.get("LOOM_BUILD_DIR") or os.path.join(REPO, "build")
    path = os.path.join(build_dir, "libloom.so")
    if not os.path.exists(path):
        raise SetupError(
            "%s does not exist: build Loom first (`make` in %s), or point "
            "LOOM_BUILD_DIR at the build directory that holds libloom.so"
            % (path, REPO))
    # The build may hold a symlink to a versioned file: ship the file itself.
    return os.path.realpath(path)


class build_py_with_library(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "loom")
        self.mkpath(target)
        self.copy_file(built_library(), os.path.join(target, "libloom.so"))

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [
            os.path.join(self.build_lib, "loom", "libloom.so")]


class BinaryDistribution(Distribution):
    # The package carries a native library: its wheel is for this platform.
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": build_py_with_library}, distclass=BinaryDistribution)
