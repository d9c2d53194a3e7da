"""Writes tests/arith/conformance_affine.txt: for every block (with block
iters) of every program of ../shared/conformance, whether TVM's schedule
state marks its binding affine. test_conformance compares Loom's iterator
map detection with these answers. Needs apache-tvm; run from the
repository root:  python tests/arith/conformance_affine.py > tests/arith/conformance_affine.txt
"""
import os
import sys

import tvm
from tvm import s_tir

root = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "conformance")


def blocks(node, out):
    """The names of the blocks under node that have block iters, in
    pre-order (a block, its init, then its body), as Loom walks them."""
    kind = type(node).__name__
    if kind == "SBlockRealize":
        blocks(node.block, out)
    elif kind == "SBlock":
        if len(node.iter_vars) > 0:
            out.append(node.name_hint)
        if node.init is not None:
            blocks(node.init, out)
        blocks(node.body, out)
    elif kind == "SeqStmt":
        for s in node.seq:
            blocks(s, out)
    elif kind == "IfThenElse":
        blocks(node.then_case, out)
        if node.else_case is not None:
            blocks(node.else_case, out)
    elif hasattr(node, "body"):
        blocks(node.body, out)


print("# file function block affine|not -- TVM %s, ScheduleState CachedFlags.affine_binding"
      % tvm.__version__)
for case in sorted(os.listdir(root)):
    for part in ("before.py", "after.py"):
        path = os.path.join(root, case, part)
        if not os.path.exists(path):
            continue
        try:
            mod = tvm.script.from_source(open(path).read())
        except Exception as e:  # noqa: BLE001
            print("# %s/%s: TVM cannot read it: %s" % (case, part, str(e).splitlines()[0]),
                  file=sys.stderr)
            continue
        if isinstance(mod, tvm.tirx.PrimFunc):
            mod = tvm.IRModule({"main": mod})
        for gv, func in mod.functions.items():
            if not isinstance(func, tvm.tirx.PrimFunc):
                continue
            names = []
            blocks(func.body, names)
            sch = s_tir.Schedule(tvm.IRModule({gv.name_hint: func}))
            for name in names:
                try:
                    sref = sch.get_sref(sch.get_sblock(name, func_name=gv.name_hint))
                    flags = sch.state._get_cached_flags(sref)
                    answer = "affine" if flags.affine_binding else "not"
                except Exception as e:  # noqa: BLE001
                    print("# %s/%s %s: %s" % (case, part, name, str(e).splitlines()[0]),
                          file=sys.stderr)
                    continue
                print("%s/%s %s %s %s" % (case, part, gv.name_hint, name, answer))
