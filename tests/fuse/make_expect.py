#!/usr/bin/env python3
"""Writes expect/NAME.py: what TVM's fusion (AnnotateTIROpPattern, FuseOps,
FuseTIR) makes of cases/NAME.py and of the ONNX test models imported
unfused, the functions the graph no longer calls left out. test_fuse.c
compares Loom's fusion with them. Needs apache-tvm (0.27, any virtual
environment) and a built loom:

    python make_expect.py LOOM

Shapes print as T.int64(n) in TVM's fused functions (a Relax tensor's
shape is int64); they are written as plain integers, as the cases have
them."""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import tvm
from tvm import relax

HERE = os.path.dirname(os.path.abspath(__file__))
ONNX = os.path.join(HERE, "..", "onnx", "cases")


def tirx_spelling(src):
    for a, b in [("from tvm.script import tir as T", "from tvm.script import tirx as T"),
                 ("T.block(", "T.sblock("), ("@T.prim_func\n", "@T.prim_func(s_tir=True)\n"),
                 ('"tir.noalias"', '"tirx.noalias"'), ("out_sinfo=", "out_ty=")]:
        src = src.replace(a, b)
    return src.replace("# from tvm", "from tvm")


def load(src, name):
    path = os.path.join(tempfile.mkdtemp(), name + ".py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # TVMScript reads its source back through the module
    spec.loader.exec_module(mod)
    return mod.Module


def fuse(mod):
    mod = relax.transform.AnnotateTIROpPattern()(mod)
    mod = relax.transform.FuseOps()(mod)
    mod = relax.transform.FuseTIR()(mod)
    called = set()

    def visit(e):
        if isinstance(e, relax.Call) and e.args and isinstance(e.args[0], tvm.ir.GlobalVar):
            called.add(e.args[0].name_hint)

    relax.analysis.post_order_visit(mod["main"], visit)
    keep = {}
    for gv, f in mod.functions.items():
        if gv.name_hint in called or gv.name_hint == "main":
            if f.attrs is not None and "op_pattern" in f.attrs:
                f = f.without_attr("op_pattern")
            keep[gv] = f
    return tvm.IRModule(keep)


def write(name, source, mod):
    text = re.sub(r"T\.int64\((\d+)\)", r"\1", mod.script()).replace(", elem_offset=0", "")
    with open(os.path.join(HERE, "expect", name + ".py"), "w") as f:
        f.write("# TVM's fusion of %s (tests/fuse/make_expect.py)\n%s" % (source, text))


def main():
    loom = sys.argv[1]
    for file in sorted(os.listdir(os.path.join(HERE, "cases"))):
        name = file[:-3]
        with open(os.path.join(HERE, "cases", file)) as f:
            write(name, "cases/" + file, fuse(load(tirx_spelling(f.read()), "case_" + name)))
    for model in ["convnet", "mlp", "misc"]:
        src = subprocess.run([loom, "model", "import", "--no-fuse", "--dialect", "tirx",
                              os.path.join(ONNX, model + ".onnx")],
                             check=True, capture_output=True, text=True).stdout
        write("onnx_" + model, "tests/onnx/cases/%s.onnx" % model,
              fuse(load(tirx_spelling(src), "onnx_" + model)))


if __name__ == "__main__":
    main()
