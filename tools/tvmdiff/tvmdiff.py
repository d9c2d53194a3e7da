"""Differential testing of Loom's schedule primitives against TVM.

For every operator of Loom's library (`loom op --list`, default shapes) and
every program of ../shared/corpus, candidates are drawn from Loom's design
spaces (`loom space --sample`), each a full trace with its decisions. Each
trace is applied by Loom (`loom sched`) and by TVM (the same trace as a
script, on the same program, in the tirx spelling TVM 0.25+ reads), and the two
results compared: both refuse, or both give structurally equal modules.
Agreement is reported per instruction kind (a trace counts for every kind it
holds). Differences are written to OUT (the trace, both results).

TVM is never a dependency of Loom: this tool makes its own virtual
environment with apache-tvm from PyPI (build/tvmdiff-venv) on first use.

    python3 tools/tvmdiff/tvmdiff.py [--loom build/loom] [--samples N]
                                     [--seed S] [--out DIR] [--only NAME,...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
VENV = os.path.join(ROOT, "build", "tvmdiff-venv")
# Kinds that only look things up or sample: every trace has them.
PASSIVE = {"GetBlock", "GetSBlock", "GetLoops", "GetChildBlocks", "GetProducers",
           "GetConsumers", "SamplePerfectTile", "SampleCategorical",
           "SampleComputeLocation", "EnterPostproc"}


def ensure_tvm():
    """Re-runs this script under a Python that has TVM, making the venv once."""
    try:
        import tvm  # noqa: F401
        return
    except ImportError:
        pass
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        print("tvmdiff: making %s with apache-tvm (once)" % VENV, file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([py, "-m", "pip", "install", "-q", "apache-tvm", "numpy"])
    os.execv(py, [py] + sys.argv)


def run(cmd, stdin=None):
    p = subprocess.run(cmd, capture_output=True, text=True, input=stdin)
    return p.returncode, p.stdout, p.stderr


def programs(loom, only):
    """(name, path) of every program to try, written into a temporary dir."""
    tmp = tempfile.mkdtemp(prefix="tvmdiff-")
    out = []
    rc, text, _ = run([loom, "op", "--list"])
    for line in text.splitlines():
        name = line.split()[0] if line.strip() else None
        if not name:
            continue
        rc, prog, _ = run([loom, "op", name])
        if rc == 0:
            path = os.path.join(tmp, name + ".py")
            open(path, "w").write(prog)
            out.append(("op/" + name, path))
    corpus = os.path.join(ROOT, "..", "shared", "corpus")
    if os.path.isdir(corpus):
        for f in sorted(os.listdir(corpus)):
            if f.endswith(".py") and ".sched." not in f:
                out.append(("corpus/" + f[:-3], os.path.join(corpus, f)))
    if only:
        keep = only.split(",")
        out = [p for p in out if any(k in p[0] for k in keep)]
    return out


def candidates(loom, path, samples, seed):
    """The fully decided traces `loom space --sample` prints, as JSON text."""
    rc, text, _ = run([loom, "space", path, "--sample", str(samples), "--seed", str(seed),
                       "--json"])
    if rc != 0:
        return []
    out, take = [], False
    for line in text.splitlines():
        if line.startswith("# candidate"):
            take = "dropped" not in line
        elif take and line.startswith("["):
            out.append(line)
            take = False
    return out


def kinds(trace_json):
    return {inst[0] for inst in json.loads(trace_json)[0]} - PASSIVE


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loom", default=os.path.join(ROOT, "build", "loom"))
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "tvmdiff-out"))
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    ensure_tvm()
    import tvm
    from tvm import s_tir

    os.makedirs(args.out, exist_ok=True)
    per_kind, n_traces, n_agree, n_diff = {}, 0, 0, 0
    for name, path in programs(args.loom, args.only):
        rc, tirx, err = run([args.loom, "fmt", path, "--dialect", "tirx"])
        try:
            base = tvm.script.from_source(tirx)
        except Exception as e:  # noqa: BLE001
            print("%s: TVM cannot read it: %s" % (name, str(e).strip().splitlines()[0][:120]))
            continue
        if not isinstance(base, tvm.IRModule):
            base = tvm.IRModule({"main": base})
        for k, trace in enumerate(candidates(args.loom, path, args.samples, args.seed)):
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                f.write(trace)
                classic = f.name
            # The same trace as a schedule script in TVM 0.27's spelling
            # (get_sblock), as TVM's Trace.as_python prints it: TVM runs it
            # as Python (its JSON reader and writer disagree on some kinds).
            rc, script, err = run([args.loom, "trace", path, classic, "--dialect", "tirx"])
            if rc != 0:
                print("%s #%d: loom trace: %s" % (name, k, err.strip()[:200]))
                continue
            rc_loom, loom_out, loom_err = run([args.loom, "sched", path, classic, "--dialect",
                                               "tirx"])
            tvm_mod, tvm_err = None, None
            try:
                sch = s_tir.Schedule(base)
                exec(script, {"sch": sch, "T": tvm.script.tirx})  # noqa: S102
                tvm_mod = sch.mod
            except Exception as e:  # noqa: BLE001
                tvm_err = str(e).strip().splitlines()[-1][:300] if str(e).strip() else repr(e)
            if rc_loom != 0 and tvm_mod is None:
                same, why = True, "both refuse"
            elif rc_loom != 0:
                same, why = False, "Loom refuses, TVM applies: " + loom_err.strip()[:300]
            elif tvm_mod is None:
                same, why = False, "TVM refuses, Loom applies: " + tvm_err
            else:
                try:
                    mine = tvm.script.from_source(loom_out)
                    if not isinstance(mine, tvm.IRModule):
                        mine = tvm.IRModule({"main": mine})
                    try:
                        tvm.ir.assert_structural_equal(mine, tvm_mod, map_free_vars=True)
                        same, why = True, ""
                    except ValueError as e:
                        same, why = False, "the modules differ: " + str(e).strip().splitlines()[0][:200]
                except Exception as e:  # noqa: BLE001
                    same, why = False, "TVM cannot read Loom's result: " + str(e).strip()[:200]
            n_traces += 1
            n_agree += same
            for kind in kinds(trace):
                t = per_kind.setdefault(kind, [0, 0])
                t[0] += 1
                t[1] += same
            if not same:
                n_diff += 1
                stem = os.path.join(args.out, "%s-%d" % (name.replace("/", "_"), k))
                open(stem + ".trace.py", "w").write(script)
                open(stem + ".loom.py", "w").write(loom_out if rc_loom == 0 else loom_err)
                open(stem + ".tvm.py", "w").write(tvm_mod.script() if tvm_mod else tvm_err)
                print("%s #%d: %s (%s.*)" % (name, k, why, stem))
            os.unlink(classic)
    print("\ntvmdiff: seed %d, %d traces, %d agree (%.1f%%)" %
          (args.seed, n_traces, n_agree, 100.0 * n_agree / max(n_traces, 1)))
    for kind in sorted(per_kind):
        t = per_kind[kind]
        print("  %-24s %5d traces  %5d agree  %5.1f%%" % (kind, t[0], t[1], 100.0 * t[1] / t[0]))
    return 0 if n_diff == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
