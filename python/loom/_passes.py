"""Module passes: library dispatch, tuning records, dlight and the default
lowering, in the order a pipeline names them."""

import ctypes
import json
import os

from ._lib import Owned, diagnostic, encode, lib, take_string
from ._module import Module


def compile(mod, target=None, pipeline="dispatch,apply-db,default", db=None):
    """Runs mod through a module pipeline ("dispatch,apply-db,default": each
    function taken by the first pass that handles it) for target (textual,
    None: this machine), reading the tuning database at db (None: loom.db
    in the working directory when the pipeline has apply-db). Returns the new
    module and the explanation, a list of {"func", "pass", "why"}."""
    if not isinstance(mod, Module):
        raise TypeError("loom.compile takes a loom.Module, not %s" % type(mod).__name__)
    explain = ctypes.c_void_p()
    with diagnostic() as d:
        ptr = lib.loom_embed_compile(mod._ptr, encode(target), encode(pipeline),
                                     encode(db), ctypes.byref(explain), d.ref)
        text = take_string(explain.value)
        if not ptr:
            raise d.error()
    result = Module(Owned(ptr, lib.loom_embed_module_free))
    return result, json.loads(text) if text else []


def apply(mod, db="loom.db", target=None):
    """mod with each function that matches a workload tuned on target rewritten
    into its best schedule in the database db."""
    if not os.path.exists(db):
        raise FileNotFoundError("no tuning database at %s" % os.fspath(db))
    return compile(mod, target=target, pipeline="apply-db", db=db)[0]


def dlight(mod, target="cuda"):
    """mod with dlight's GPU schedules (rules, no tuning) for a cuda target."""
    return compile(mod, target=target, pipeline="dlight")[0]
