"""Modules: TensorIR programs read from TVMScript."""

import json
import os

from ._lib import Closable, Owned, diagnostic, encode, lib, take_string

_DIALECTS = {"tir": 0, "tirx": 1}


def _dialect(dialect):
    try:
        return _DIALECTS[dialect]
    except KeyError:
        raise ValueError("dialect must be 'tir' or 'tirx', not %r" % (dialect,)) from None


class Module(Closable):
    """An IRModule: one or more TensorIR functions.

    Modules are immutable; scheduling and compiling make new ones. `close()`
    releases it early (schedules and executables made from it keep working),
    as does leaving a `with` block.
    """

    _what = "loom.Module"

    def __init__(self, owned):
        # Made by loom.read and the functions that return modules.
        self._owned = owned
        self._signature = None

    def script(self, dialect="tir"):
        """The module as canonical TVMScript, in the classic spelling ("tir")
        or TVM 0.25+'s ("tirx")."""
        text = take_string(lib.loom_embed_module_script(self._ptr, _dialect(dialect)))
        if text is None:
            raise MemoryError("Loom ran out of memory printing the module")
        return text

    def show(self, dialect="tir"):
        print(self.script(dialect))

    def __str__(self):
        return self.script()

    def __repr__(self):
        if self.closed:
            return "<loom.Module (closed)>"
        return "<loom.Module %s>" % ", ".join(self.functions)

    @property
    def signature(self):
        """The functions and their parameters: a list of
        {"name", "params": [{"name", "dtype", "shape", "written"}, ...]};
        a shape lists ints and names of symbolic dimensions, None for a
        scalar."""
        ptr = self._ptr
        if self._signature is None:
            text = take_string(lib.loom_embed_module_signature(ptr))
            if text is None:
                raise MemoryError("Loom ran out of memory describing the module")
            self._signature = json.loads(text)
        return self._signature

    @property
    def functions(self):
        return [f["name"] for f in self.signature]

    def __eq__(self, other):
        """Structural equality: the same programs up to the names of variables
        and buffers."""
        if not isinstance(other, Module):
            return NotImplemented
        return bool(lib.loom_embed_module_equal(self._ptr, other._ptr))

    # Equal modules may print differently, so no hash agrees with ==.
    __hash__ = None


def _is_path(source):
    if isinstance(source, os.PathLike):
        return True
    return isinstance(source, str) and "\n" not in source and os.path.isfile(source)


def read(source, name=None):
    """Reads a module from TVMScript: program text, or the path of a file
    holding it. A str is a path when it has no newline and names an existing
    file. `name` names the text in error messages (default "<string>", or
    the path)."""
    if _is_path(source):
        path = os.fspath(source)
        with open(path, "rb") as f:
            data = f.read()
        if name is None:
            name = path
    elif isinstance(source, str):
        data = source.encode("utf-8")
    elif isinstance(source, bytes):
        data = source
    else:
        raise TypeError("loom.read takes program text or a path, not %s"
                        % type(source).__name__)
    file = encode(name if name is not None else "<string>")
    with diagnostic() as d:
        ptr = lib.loom_embed_read(data, len(data), file, d.ref)
        if not ptr:
            raise d.error()
    return Module(Owned(ptr, lib.loom_embed_module_free))


def from_tvm(obj):
    """A Loom module from a TVM IRModule or PrimFunc (anything with a
    `.script()` method), through its TVMScript. A str is read as loom.read
    does."""
    if isinstance(obj, (str, os.PathLike)):
        return read(obj)
    script = getattr(obj, "script", None)
    if not callable(script):
        raise TypeError("loom.from_tvm takes a TVM IRModule or PrimFunc (an "
                        "object with a .script() method) or TVMScript text, "
                        "not %s" % type(obj).__name__)
    text = script()
    if not isinstance(text, str):
        raise TypeError("%s.script() returned %s, not TVMScript text"
                        % (type(obj).__name__, type(text).__name__))
    return read(text, name="<%s>" % type(obj).__name__)
