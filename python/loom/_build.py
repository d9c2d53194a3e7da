"""Built kernels: every function of a module compiled by the C backend and
called on NumPy arrays."""

import ctypes
import numbers

import numpy as np

from ._lib import Closable, Error, Owned, diagnostic, encode, lib
from ._module import Module

# How each dtype's elements are laid out in memory, as NumPy sees them.
# bfloat16 has no NumPy type: its raw bits travel as uint16.
_NUMPY_DTYPES = {
    "bool": np.bool_,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float16": np.float16, "float32": np.float32, "float64": np.float64,
    "bfloat16": np.uint16,
}

_RETURN_CODES = {
    -1: "an assertion of the program failed",
    -2: "parameters disagree on a symbolic dimension",
    -3: "the kernel ran out of memory",
    -4: "a library the kernel calls (BLAS: libopenblas.so.0; oneDNN: libdnnl.so.2) "
        "cannot be opened",
    -5: "the library (oneDNN) refused or failed the call",
    -100: "no such function in the built module",
}


def _shape_text(shape):
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _describe(value):
    if isinstance(value, np.ndarray):
        what = "an array of shape %s and dtype %s" % (_shape_text(value.shape), value.dtype)
        if not value.flags.c_contiguous:
            what = "a non-contiguous " + what[3:]
        return what
    return "%s %r" % (type(value).__name__, value) if np.isscalar(value) else type(value).__name__


class Function:
    """One function of an Executable; call it with its parameters in order."""

    def __init__(self, exe, index, sig):
        self._exe = exe
        self._index = index
        self.name = sig["name"]
        self.params = sig["params"]

    def __repr__(self):
        parts = []
        for p in self.params:
            if p["shape"] is None:
                parts.append("%s: %s" % (p["name"], p["dtype"]))
            else:
                dims = ", ".join(str(d) for d in p["shape"])
                parts.append("%s: %s[%s]" % (p["name"], p["dtype"], dims))
        return "<loom.Function %s(%s)>" % (self.name, ", ".join(parts))

    def _dtype(self, p):
        dt = _NUMPY_DTYPES.get(p["dtype"])
        if dt is None:
            raise ValueError("parameter '%s' of %s has dtype %s, which cannot be "
                             "passed from Python" % (p["name"], self.name, p["dtype"]))
        return np.dtype(dt)

    def _expected(self, p):
        shape = _shape_text(p["shape"])
        dt = p["dtype"] + (" (as numpy.uint16 bits)" if p["dtype"] == "bfloat16" else "")
        return "a C-contiguous numpy array of shape %s and dtype %s" % (shape, dt)

    def _bad(self, p, value, why=None):
        msg = "parameter '%s' of %s: expected %s, got %s" % (
            p["name"], self.name, self._expected(p), _describe(value))
        return ValueError(msg + ("" if why is None else " (%s)" % why))

    def _scalar(self, p, value, dims):
        dtype = p["dtype"]
        if dtype.startswith("float") or dtype == "bfloat16":
            if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
                raise ValueError("parameter '%s' of %s: expected a number (%s), got %s"
                                 % (p["name"], self.name, dtype, _describe(value)))
            return ctypes.c_double(float(value))
        if not isinstance(value, (numbers.Integral, np.bool_)):
            raise ValueError("parameter '%s' of %s: expected an integer (%s), got %s"
                             % (p["name"], self.name, dtype, _describe(value)))
        v = int(value)
        np_dtype = _NUMPY_DTYPES.get(dtype)
        if np_dtype is not None and np_dtype is not np.bool_:
            info = np.iinfo(np_dtype)
            if not info.min <= v <= info.max:
                raise ValueError("parameter '%s' of %s: %d does not fit in %s"
                                 % (p["name"], self.name, v, dtype))
        # A scalar may be the size of symbolic dimensions of the buffers.
        bound = dims.setdefault(p["name"], (v, p["name"]))
        if bound[0] != v:
            raise ValueError("parameter '%s' of %s: %d, but the array '%s' has %s = %d"
                             % (p["name"], self.name, v, bound[1], p["name"], bound[0]))
        return ctypes.c_int64(v)

    def _array(self, p, value, dims):
        if not isinstance(value, np.ndarray):
            raise self._bad(p, value)
        if value.dtype != self._dtype(p) or not value.dtype.isnative:
            raise self._bad(p, value)
        if not value.flags.c_contiguous or not value.flags.aligned:
            raise self._bad(p, value)
        if p["written"] and not value.flags.writeable:
            raise self._bad(p, value, "the function writes it, and the array is read-only")
        shape = p["shape"]
        if value.ndim != len(shape):
            raise self._bad(p, value)
        for want, got in zip(shape, value.shape):
            if isinstance(want, int):
                if want != got:
                    raise self._bad(p, value)
            elif isinstance(want, str) and want.isidentifier():
                bound = dims.get(want)
                if bound is None:
                    dims[want] = (got, p["name"])
                elif bound[0] != got:
                    raise self._bad(p, value, "%s = %d from '%s'" % (want, bound[0], bound[1]))

    def _allocate(self, p, dims):
        shape = []
        for d in p["shape"]:
            if isinstance(d, int):
                shape.append(d)
            elif isinstance(d, str) and d in dims:
                shape.append(dims[d][0])
            else:
                raise ValueError("parameter '%s' of %s was left out, but its dimension "
                                 "%s is not given by an earlier argument: pass the array"
                                 % (p["name"], self.name, d))
        return np.zeros(shape, dtype=self._dtype(p))

    def __call__(self, *args):
        self._exe._ptr  # raises when closed
        owned = self._exe._owned  # held through the call, whatever closes exe
        params = self.params
        if len(args) > len(params):
            raise TypeError("%s takes %d arguments, got %d" % (self.name, len(params), len(args)))
        required = len(params)
        while required > 0 and params[required - 1]["shape"] is not None \
                and params[required - 1]["written"]:
            required -= 1
        if len(args) < required:
            raise TypeError("%s: missing argument '%s' (only trailing buffers the "
                            "function writes may be left out)"
                            % (self.name, params[len(args)]["name"]))
        n = len(params)
        dims = {}  # symbolic dimension -> (value, the parameter that set it)
        values = list(args)
        keep = []
        for p, value in zip(params, args):
            if p["shape"] is None:
                keep.append(self._scalar(p, value, dims))
            else:
                self._array(p, value, dims)
        allocated = [self._allocate(p, dims) for p in params[len(args):]]
        values += allocated

        c_args = (ctypes.c_void_p * max(n, 1))()
        c_shapes = (ctypes.POINTER(ctypes.c_int64) * max(n, 1))()
        scalars = iter(keep)
        for i, (p, value) in enumerate(zip(params, values)):
            if p["shape"] is None:
                c_args[i] = ctypes.cast(ctypes.byref(next(scalars)), ctypes.c_void_p)
            else:
                shape = (ctypes.c_int64 * max(value.ndim, 1))(*value.shape)
                keep.append(shape)
                c_args[i] = value.ctypes.data
                c_shapes[i] = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        rc = lib.loom_embed_call(owned.ptr, self._index, c_args, c_shapes)
        if rc != 0:
            why = _RETURN_CODES.get(rc, "the kernel returned %d" % rc)
            raise Error("%s: %s" % (self.name, why))
        if not allocated:
            return None
        return allocated[0] if len(allocated) == 1 else tuple(allocated)


class Executable(Closable):
    """Every function of a module built for the CPU. `exe.NAME` or
    `exe["NAME"]` is a Function; `exe(...)` calls the only one."""

    _what = "loom.Executable"

    def __init__(self, owned, signature):
        self._owned = owned
        # Functions are made on each access: one held by the executable
        # would make a cycle, and the library would wait for the collector.
        self._signature = signature

    @property
    def functions(self):
        return [f["name"] for f in self._signature]

    def __getitem__(self, name):
        self._ptr
        for i, sig in enumerate(self._signature):
            if sig["name"] == name:
                return Function(self, i, sig)
        raise KeyError("no function %r; the executable has %s" % (name, ", ".join(self.functions)))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self.functions:
            raise AttributeError("loom.Executable has no function %r" % name)
        return self[name]

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.functions))

    def __call__(self, *args):
        self._ptr
        if len(self._signature) != 1:
            raise TypeError("the executable has %d functions (%s): call one by name"
                            % (len(self._signature), ", ".join(self.functions)))
        return Function(self, 0, self._signature[0])(*args)

    def __repr__(self):
        if self.closed:
            return "<loom.Executable (closed)>"
        return "<loom.Executable %s>" % ", ".join(self.functions)


def build(mod, target=None):
    """Builds every function of mod with the C backend for a CPU target
    (its textual form, e.g. "cpu"; None: this machine)."""
    if not isinstance(mod, Module):
        raise TypeError("loom.build takes a loom.Module, not %s" % type(mod).__name__)
    signature = mod.signature
    with diagnostic() as d:
        ptr = lib.loom_embed_build(mod._ptr, encode(target), d.ref)
        if not ptr:
            raise d.error()
    return Executable(Owned(ptr, lib.loom_embed_built_free, keep=mod._owned), signature)
