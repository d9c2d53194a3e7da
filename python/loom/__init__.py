"""Loom from Python: read TensorIR programs written in TVMScript, schedule
them by hand, tune them, and build and call them on NumPy arrays.

    import loom, numpy as np
    mod = loom.read("matmul.py")
    sch = loom.Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    f = loom.build(sch.mod)
    c = f(a, b)            # the output buffer, allocated
"""

from ._lib import Error, library_path
from ._build import Executable, Function, build
from ._module import Module, from_tvm, read
from ._passes import apply, compile, dlight
from ._schedule import BlockRV, Code, ExprRV, LoopRV, Schedule, Trace
from ._tune import TuneResult, tune

__version__ = "0.1.0"

# Tracebacks and reprs name the public classes as users import them.
for _cls in (Error, Module, Schedule, Trace, Code, BlockRV, LoopRV, ExprRV,
             Executable, Function, TuneResult):
    _cls.__module__ = __name__
del _cls

__all__ = [
    "Error", "Module", "read", "from_tvm", "Schedule", "Trace", "Code",
    "BlockRV", "LoopRV", "ExprRV", "build", "Executable", "Function",
    "compile", "apply", "dlight", "tune", "TuneResult", "library_path",
    "__version__",
]
