"""The shared library and the ctypes declarations of the calls the package makes.

Only include/loom/embed.h and the diagnostics of base.h are used: the rest of
Loom's structs stay opaque behind handles.
"""

import ctypes
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_bool, c_char_p,
                    c_double, c_int, c_int32, c_int64, c_size_t, c_uint64,
                    c_void_p)

_HERE = os.path.dirname(os.path.abspath(__file__))


def _library_path():
    path = os.environ.get("LOOM_LIBRARY")
    if path:
        return path
    installed = os.path.join(_HERE, "libloom.so")
    if os.path.isfile(installed):
        return installed
    # Running from the source tree (python/loom): the build next to it.
    repo = os.path.dirname(os.path.dirname(_HERE))
    built = os.path.join(repo, "build", "libloom.so")
    if os.path.isfile(built):
        return built
    raise ImportError(
        "libloom.so was not found next to the loom package nor in %s; "
        "run `make` and `pip install ./python` in the repository, or set "
        "LOOM_LIBRARY to the library's path" % built)


class Loc(Structure):
    _fields_ = [("file", c_char_p), ("line", c_int), ("col", c_int)]


class Diag(Structure):
    _fields_ = [("has_error", c_int), ("loc", Loc), ("msg", c_char_p),
                ("notes", c_void_p), ("n_notes", c_int),
                ("source", c_void_p), ("source_len", c_size_t)]


class Buf(Structure):
    _fields_ = [("data", c_void_p), ("len", c_size_t), ("cap", c_size_t),
                ("has_failed", c_int)]


ProgressFn = CFUNCTYPE(None, c_void_p, c_char_p, c_int, c_int, c_int,
                       c_double, c_double)


class TuneOptions(Structure):
    _fields_ = [("target", c_char_p), ("db", c_char_p), ("strategy", c_char_p),
                ("func", c_char_p), ("space", c_char_p), ("trials", c_int),
                ("seed", c_uint64), ("is_random_model", c_bool),
                ("progress", ProgressFn), ("progress_ctx", c_void_p)]


_P = c_void_p  # an opaque handle
_D = POINTER(Diag)

_SIGNATURES = {
    "loom_diag_init": (None, [_D]),
    "loom_diag_free": (None, [_D]),
    "loom_diag_render": (None, [_D, POINTER(Buf)]),
    "loom_buf_init": (None, [POINTER(Buf)]),
    "loom_buf_free": (None, [POINTER(Buf)]),
    "loom_embed_free": (None, [c_void_p]),
    "loom_embed_read": (_P, [c_char_p, c_size_t, c_char_p, _D]),
    "loom_embed_module_free": (None, [_P]),
    "loom_embed_module_script": (c_void_p, [_P, c_int]),
    "loom_embed_module_signature": (c_void_p, [_P]),
    "loom_embed_module_equal": (c_bool, [_P, _P]),
    "loom_embed_sched_new": (_P, [_P, c_uint64]),
    "loom_embed_sched_copy": (_P, [_P]),
    "loom_embed_sched_free": (None, [_P]),
    "loom_embed_sched_run": (c_int, [_P, c_char_p, c_size_t, c_char_p, _D]),
    "loom_embed_sched_length": (c_int, [_P]),
    "loom_embed_sched_outputs": (c_int, [_P, c_int, POINTER(c_int), c_int]),
    "loom_embed_method_is_list": (c_int, [c_char_p]),
    "loom_embed_sched_rv_kind": (c_int, [_P, c_int]),
    "loom_embed_sched_rv_value": (c_int64, [_P, c_int]),
    "loom_embed_sched_trace": (c_void_p, [_P, c_bool, c_int]),
    "loom_embed_sched_module": (_P, [_P, _D]),
    "loom_embed_compile": (_P, [_P, c_char_p, c_char_p, c_char_p,
                                POINTER(c_void_p), _D]),
    "loom_embed_build": (_P, [_P, c_char_p, _D]),
    "loom_embed_built_free": (None, [_P]),
    "loom_embed_call": (c_int32, [_P, c_int, POINTER(c_void_p),
                                  POINTER(POINTER(c_int64))]),
    "loom_embed_tune": (c_void_p, [_P, POINTER(TuneOptions), _D]),
}


def _load():
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError("cannot load %s: %s" % (path, e)) from None
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ImportError(
                "%s lacks %s: it is not libloom, or a build older than the "
                "embedding API (rebuild it with `make`)" % (path, name)) from None
        fn.restype = restype
        fn.argtypes = argtypes
    return lib, path


lib, library_path = _load()

OK = 0


def take_string(ptr):
    """Copies a `char *` the library gave us and frees it; None for NULL."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        lib.loom_embed_free(ptr)


def encode(s):
    """A Python string (or path) as the NUL-terminated bytes C expects; None
    stays NULL."""
    if s is None:
        return None
    s = os.fspath(s)
    return s.encode("utf-8") if isinstance(s, str) else bytes(s)


class Error(Exception):
    """An error Loom reported: a program it cannot read, a schedule step it
    refuses, a kernel that failed.

    `file`, `line` and `col` locate it (in the program or schedule text; None
    and 0 when there is no place), `message` is the bare message and str()
    the diagnostic as Loom renders it, with the source line and a caret.
    """

    def __init__(self, message, file=None, line=0, col=0, rendered=None):
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.rendered = rendered if rendered is not None else message
        super().__init__(self.rendered)

    def __str__(self):
        return self.rendered


def _decode(b):
    return b.decode("utf-8", "replace") if b is not None else None


def error_from(d, context=None):
    """The Error that diagnostic d describes, rendered now: d's locations point
    into text the caller still holds."""
    if not d.has_error:
        return MemoryError("Loom ran out of memory")
    buf = Buf()
    lib.loom_buf_init(byref(buf))
    try:
        lib.loom_diag_render(byref(d), byref(buf))
        rendered = (ctypes.string_at(buf.data, buf.len).decode("utf-8", "replace")
                    if buf.data else "")
    finally:
        lib.loom_buf_free(byref(buf))
    message = _decode(d.msg) or "error"
    rendered = rendered.rstrip("\n") or message
    if context:
        rendered += "\n" + context
    return Error(message, _decode(d.loc.file), d.loc.line, d.loc.col, rendered)


class diagnostic:
    """A loom_diag for one call, freed on leaving the `with`:

        with diagnostic() as d:
            h = lib.loom_embed_read(text, len(text), name, d.ref)
            if not h:
                raise d.error()
    """

    def __enter__(self):
        self.diag = Diag()
        self.ref = byref(self.diag)
        lib.loom_diag_init(self.ref)
        return self

    def __exit__(self, *exc):
        lib.loom_diag_free(self.ref)
        return False

    def error(self, context=None):
        return error_from(self.diag, context)


class Owned:
    """A C handle freed once nothing refers to it any more.

    Python wrappers hold an Owned; a handle that borrows another (a schedule
    borrows its module) holds that one's Owned in `keep`, so the borrowed
    handle outlives it whatever order the wrappers go in.
    """

    __slots__ = ("ptr", "_free", "keep")

    def __init__(self, ptr, free, keep=None):
        self.ptr = ptr
        self._free = free
        self.keep = keep

    def __del__(self):
        ptr, self.ptr = self.ptr, None
        if ptr:
            self._free(ptr)


class Closable:
    """A wrapper over an Owned handle that can be closed: using it afterwards
    raises ValueError, as a closed file does. What was made from it keeps
    its own reference to the handle, and goes on working."""

    _what = "object"

    @property
    def _ptr(self):
        if self._owned is None:
            raise ValueError("operation on a closed %s" % self._what)
        return self._owned.ptr

    @property
    def closed(self):
        return self._owned is None

    def close(self):
        self._owned = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
