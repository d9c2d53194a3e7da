"""Schedules driven from Python: each method call becomes one line of Loom's
schedule script, run by the C side."""

import ast
import ctypes
import linecache
import math
import numbers
import os
import sys

import numpy as np

from ._lib import Owned, diagnostic, lib, take_string
from ._module import Module, _dialect

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class Code:
    """Text written verbatim into a schedule call, e.g. an index map:
    `sch.transform_layout(b, ("write", 0), loom.Code("lambda i, j: (j, i)"))`.
    """

    def __init__(self, text):
        if not isinstance(text, str):
            raise TypeError("loom.Code takes a str")
        self.text = text

    def __repr__(self):
        return "loom.Code(%r)" % self.text


class _RV:
    """A random variable of a schedule: the k-th output of its trace."""

    __slots__ = ("sch", "k", "_token", "_index")
    kind = "?"

    def __init__(self, sch, k, index):
        self.sch = sch
        self.k = k
        self._token = sch._token
        self._index = index  # the instruction that made it

    @property
    def name(self):
        return "%s%d" % (self.kind, self.k)

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, self.name)


class BlockRV(_RV):
    kind = "b"


class LoopRV(_RV):
    kind = "l"


class ExprRV(_RV):
    kind = "v"

    def __int__(self):
        return int(lib.loom_embed_sched_rv_value(self.sch._ptr, self.k))


_RV_CLASSES = {ord("b"): BlockRV, ord("l"): LoopRV, ord("v"): ExprRV}


def _quote(s):
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_LAMBDA_HINT = ("write the index map as text instead: "
                "loom.Code(\"lambda i, j: (j, i)\")")


def _lambda_text(fn):
    """The source text of a lambda, found again in the file that defines it."""
    code = getattr(fn, "__code__", None)
    if code is None or getattr(fn, "__name__", None) != "<lambda>":
        raise TypeError("%r: only a lambda can be passed as an index map; %s"
                        % (fn, _LAMBDA_HINT))
    names = list(code.co_varnames[:code.co_argcount])
    lines = linecache.getlines(code.co_filename, getattr(fn, "__globals__", None))
    if not lines:
        raise TypeError("the source of %r is not available (defined in %s); %s"
                        % (fn, code.co_filename, _LAMBDA_HINT))
    source = "".join(lines)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        raise TypeError("the source of %r does not parse; %s" % (fn, _LAMBDA_HINT)) from None
    texts = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
                and [a.arg for a in node.args.args] == names
                and not node.args.vararg and not node.args.kwarg
                and not node.args.kwonlyargs and not node.args.defaults):
            text = ast.get_source_segment(source, node)
            # A map spread over lines (or commented) is rewritten on one line:
            # a script call is one statement.
            if text is None or "\n" in text or "#" in text:
                text = ast.unparse(node)
            texts.add(text)
    if len(texts) != 1:
        why = "not found" if not texts else "ambiguous"
        raise TypeError("the source of %r is %s on line %d of %s; %s"
                        % (fn, why, code.co_firstlineno, code.co_filename, _LAMBDA_HINT))
    return texts.pop()


def _caller():
    """'FILE:LINE' of the first frame outside the package: the user's call."""
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if os.path.dirname(os.path.abspath(path)) != _PACKAGE_DIR:
            return "%s:%d" % (path, frame.f_lineno)
        frame = frame.f_back
    return None


class Trace:
    """The instructions a schedule applied, as they were when it was taken."""

    def __init__(self, sch):
        ptr = sch._ptr
        self._texts = {}
        for is_json in (False, True):
            for dialect in ("tir", "tirx"):
                text = take_string(lib.loom_embed_sched_trace(ptr, is_json, _dialect(dialect)))
                if text is None:
                    raise MemoryError("Loom ran out of memory printing the trace")
                self._texts[is_json, dialect] = text

    def as_python(self, dialect="tir"):
        """The trace as a schedule script: one `sch.*` call per line."""
        _dialect(dialect)
        return self._texts[False, dialect]

    def as_json(self, dialect="tir"):
        """The trace as TVM's JSON record."""
        _dialect(dialect)
        return self._texts[True, dialect]

    def show(self, dialect="tir"):
        print(self.as_python(dialect), end="")

    def __str__(self):
        return self.as_python()

    def __repr__(self):
        return "<loom.Trace of %d lines>" % self.as_python().count("\n")


class Schedule:
    """A schedule of a module: call any schedule primitive of Loom's scripts
    as a method (`sch.get_block("C")`, `sch.split(loop, [None, 4])`).

    Calls return the instruction's outputs: None, a BlockRV / LoopRV / ExprRV,
    or a list of them. A step Loom refuses raises loom.Error and leaves the
    schedule as it was.
    """

    def __init__(self, mod, seed=0):
        if not isinstance(mod, Module):
            raise TypeError("loom.Schedule takes a loom.Module, not %s" % type(mod).__name__)
        if not isinstance(seed, numbers.Integral) or not 0 <= seed < 2 ** 64:
            raise ValueError("seed must be an integer in [0, 2**64), not %r" % (seed,))
        ptr = lib.loom_embed_sched_new(mod._ptr, int(seed))
        if not ptr:
            raise MemoryError("Loom ran out of memory making a schedule")
        # The C schedule borrows the module: its handle keeps the module's.
        self._init(Owned(ptr, lib.loom_embed_sched_free, keep=mod._owned), {})

    def _init(self, owned, ancestry):
        self._owned = owned
        self._token = object()
        # RVs of the schedules this one was copied from, by their token: valid
        # here when made by an instruction before the copy.
        self._ancestry = ancestry

    @property
    def _ptr(self):
        return self._owned.ptr

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        is_list = lib.loom_embed_method_is_list(name.encode("utf-8"))
        if is_list < 0:
            raise AttributeError("loom.Schedule has no schedule method %r" % name)

        def method(*args, **kwargs):
            return self._call(name, is_list, args, kwargs)
        method.__name__ = name
        method.__qualname__ = "Schedule." + name
        return method

    def __repr__(self):
        return "<loom.Schedule of %d instructions>" % lib.loom_embed_sched_length(self._ptr)

    # ---- writing a call as a script line -------------------------------------

    def _write(self, v):
        if isinstance(v, _RV):
            if not (v._token is self._token or
                    v._index < self._ancestry.get(v._token, -1)):
                raise ValueError("%r belongs to another schedule" % (v,))
            return v.name
        if isinstance(v, Code):
            return v.text
        if v is None or isinstance(v, (bool, np.bool_)):
            return repr(v if v is None else bool(v))
        if isinstance(v, numbers.Integral):
            return str(int(v))
        if isinstance(v, numbers.Real):
            f = float(v)
            if not math.isfinite(f):
                raise ValueError("%r cannot be written in a schedule script" % (v,))
            return repr(f)
        if isinstance(v, str):
            return _quote(v)
        if isinstance(v, list):
            return "[" + ", ".join(self._write(x) for x in v) + "]"
        if isinstance(v, tuple):
            if len(v) == 1:
                return "(" + self._write(v[0]) + ",)"
            return "(" + ", ".join(self._write(x) for x in v) + ")"
        if isinstance(v, dict):
            return "{" + ", ".join("%s: %s" % (self._write(k), self._write(x))
                                   for k, x in v.items()) + "}"
        if callable(v):
            return _lambda_text(v)
        raise TypeError("%s cannot be passed to a schedule method" % type(v).__name__)

    def _line(self, name, args, kwargs):
        parts = [self._write(a) for a in args]
        for key, value in kwargs.items():
            if not key.isidentifier():
                raise TypeError("%r is not a keyword argument name" % (key,))
            parts.append("%s=%s" % (key, self._write(value)))
        return "sch.%s(%s)\n" % (name, ", ".join(parts))

    def _call(self, name, is_list, args, kwargs):
        ptr = self._ptr
        text = self._line(name, args, kwargs).encode("utf-8")
        before = lib.loom_embed_sched_length(ptr)
        with diagnostic() as d:
            if lib.loom_embed_sched_run(ptr, text, len(text), b"<schedule>", d.ref) != 0:
                where = _caller()
                raise d.error("  called from " + where if where else None)
        n = lib.loom_embed_sched_length(ptr)
        if n == before:
            return None
        outs = self._outputs(n - 1)
        if is_list:
            return outs
        return outs[0] if outs else None

    def _outputs(self, i):
        ptr = self._ptr
        cap = 16
        while True:
            ids = (ctypes.c_int * cap)()
            count = lib.loom_embed_sched_outputs(ptr, i, ids, cap)
            if count <= cap:
                break
            cap = count
        outs = []
        for k in ids[:count]:
            kind = lib.loom_embed_sched_rv_kind(ptr, k) if k >= 0 else 0
            cls = _RV_CLASSES.get(kind)
            outs.append(cls(self, k, i) if cls else None)
        return outs

    # ---- the rest ---------------------------------------------------------------

    @property
    def mod(self):
        """The module as scheduled so far (a new Module)."""
        with diagnostic() as d:
            ptr = lib.loom_embed_sched_module(self._ptr, d.ref)
            if not ptr:
                raise d.error()
        return Module(Owned(ptr, lib.loom_embed_module_free))

    @property
    def trace(self):
        return Trace(self)

    def copy(self):
        """An independent schedule with the same steps so far; RVs of this
        one made before the copy name the same things in it."""
        ptr = lib.loom_embed_sched_copy(self._ptr)
        if not ptr:
            raise MemoryError("Loom ran out of memory copying a schedule")
        new = Schedule.__new__(Schedule)
        ancestry = dict(self._ancestry)
        ancestry[self._token] = lib.loom_embed_sched_length(self._ptr)
        new._init(Owned(ptr, lib.loom_embed_sched_free, keep=self._owned.keep), ancestry)
        return new
