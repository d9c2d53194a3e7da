#!/usr/bin/env python3
"""Capture schedule-primitive conformance cases from TVM's own schedule tests.

    build/tvmdiff-venv/bin/python tools/tvmdiff/capture.py \
        --tvm-git PATH/TO/tvm.git --out build/tvmdiff-cases [--only compute_at,...]

Runs apache/tvm's tests/python/s_tir/schedule/test_tir_schedule_*.py under the installed TVM
(0.27) and records every schedule a test checks (ok cases) and every primitive call TVM
refuses with a ScheduleError (refused cases), in the format of ../shared/conformance
(see its README.md). The tests are extracted from the git repository (a clone of apache/tvm) into a temporary folder at
run time. Each test file runs in its own pytest subprocess (TVM segfaults at times: a crash
skips only the crashing test); then every case is replayed from its printed text in another
subprocess, and only the cases that replay are kept.
"""
import argparse, inspect, json, os, re, shutil, subprocess, sys, tempfile, time

TESTS = "tests/python/s_tir/schedule"
SKIP = re.compile(r"test_tir_schedule_tensorize")  # TVM 0.27 segfaults in tensorize
# Trace kinds holding an IndexMap: TVM 0.27 segfaults serialising them to JSON.
INDEX_MAP_KINDS = {"TransformLayout", "TransformBlockLayout", "AnnotateBufferAccess",
                   "ReindexCacheRead", "ReindexCacheWrite", "DecomposePadding"}
# Public Schedule methods that are no traced primitives (or are handled apart).
NOT_WRAPPED = {"copy", "get", "get_sref", "remove_rv", "seed", "fork_seed", "show",
               "work_on", "enter_postproc", "can_decompose_padding"}
# Methods returning a list of RVs (prefix, how many); TVM prints "l1, = ..." for one.
LIST_OUT = {"split": ("l", "factors"), "loop_partition": ("l", "factors"), "cache_inplace": ("b", 2),
            "sample_perfect_tile": ("v", "n"), "sample_partitioned_tile": ("v", "n")}


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f]


def plain(x):
    """as_json() output (TVM objects inside) -> plain data for json.dumps."""
    import tvm
    if x is None or isinstance(x, (bool, int, float, str)):
        return str(x) if isinstance(x, str) else x
    if isinstance(x, (tvm.tirx.IntImm, tvm.tirx.FloatImm)):
        return bool(x.value) if str(x.ty) == "bool" else x.value
    if hasattr(x, "items"):
        return {str(k): plain(v) for k, v in x.items()}
    return [plain(y) for y in x]


def error_text(msg):
    """error.txt: the first line of a ScheduleError and its 'Error message:' part."""
    at = msg.find("Error message:")
    return msg.strip().splitlines()[0] + ("\n" + msg[at:].rstrip() if at >= 0 else "") + "\n"


# ---------------------------------------------------------------- inside the test process
class Recorder:
    """Instruments tvm.s_tir.Schedule and TVM's check helpers; also the pytest plugin."""

    def __init__(self, out_path, skip):
        self.out, self.skip = open(out_path, "a"), skip
        self.live = []      # (schedule, before.py text) for the schedules of the current test
        self.test = ""
        self.quiet = 0      # >0 inside a check or a primitive: nothing is recorded there
        self.last_ffi = ()  # arguments of the last FFI call: index maps arrive there normalized

    def emit(self, **rec):
        self.out.write(json.dumps(dict(rec, test=self.test)) + "\n")
        self.out.flush()  # keep what we have if TVM crashes later

    def before_of(self, sch):
        return next((before for s, before in self.live if s.same_as(sch)), None)

    def record_ok(self, sch):
        if self.before_of(sch) is None:
            return
        try:  # a trace holding decompose_padding cannot print under 0.27
            trace = sch.trace
            rec = dict(kind="ok", before=self.before_of(sch), trace=list(trace.as_python()),
                       after=sch.mod.script())
        except Exception:
            return
        try:  # trace.json is optional
            if not {i.kind.name for i in trace.insts} & INDEX_MAP_KINDS:
                rec["json"] = json.dumps(plain(trace.as_json()))
        except Exception:
            pass
        self.emit(**rec)

    def record_checked(self, *objs):
        """Record the live schedule whose module, or one of its functions, is checked."""
        for x in objs:
            for s, _ in reversed(self.live):
                if s.mod.same_as(x) or any(f.same_as(x) for f in s.mod.functions.values()):
                    self.record_ok(s)
                    break

    def render(self, sch, method, sig, args, kwargs, n0, maps):
        """The failing call as Trace.as_python would print it; None if we cannot."""
        import tvm
        from tvm.s_tir.schedule import Instruction, InstructionKind, LoopRV, SBlockRV, Trace
        from tvm.tirx.function import IndexMap
        insts = list(sch.trace.insts)
        names = []  # as_python numbers every output across the whole trace: b<k>, l<k>, v<k>
        for out in (o for inst in insts for o in inst.outputs):
            kind = "b" if isinstance(out, SBlockRV) else "l" if isinstance(out, LoopRV) else "v"
            names.append((out, f"{kind}{len(names)}"))
        # A block passed by name was looked up by a get_sblock inside this very call.
        looked_up = [(str(i.attrs[0]), i.outputs[0]) for i in insts[n0:] if i.kind.name == "GetSBlock"]
        maps = [m for m in maps if isinstance(m, IndexMap)]

        def rv(x):  # the RV that get_sblock gave for a block name
            if not isinstance(x, str):
                return x
            return looked_up.pop(next(i for i, (n, _) in enumerate(looked_up) if n == x))[1]

        def print_map(m, ranges):  # let TVM print an index map, in a throwaway two-step trace
            b, kind = SBlockRV(), InstructionKind.get
            inst = (Instruction(kind("AnnotateBufferAccess"), [b, 0, 0, m], [], []) if ranges
                    else Instruction(kind("TransformBlockLayout"), [b], [m], []))
            line = Trace([Instruction(kind("GetSBlock"), [], ["x", "main"], [b]), inst], {}).as_python()[1]
            return line.split("gen_new_ranges=" if ranges else "index_map=", 1)[1][:-1]

        def fmt(v):
            if isinstance(v, tvm.tirx.IntImm):
                return str(v.value)  # a split factor T.int64(16) prints as 16
            if isinstance(v, (SBlockRV, LoopRV, tvm.ir.Expr)):
                name = next((n for o, n in names if o.same_as(v)), None)
                if name is None and isinstance(v, (SBlockRV, LoopRV)):
                    raise KeyError("random variable not in the trace")
                return name or str(v)
            if isinstance(v, str):
                return '"' + v + '"'  # TVM does not escape either
            if isinstance(v, dict):
                return "{" + ", ".join(f"{fmt(a)}: {fmt(b)}" for a, b in v.items()) + "}"
            if isinstance(v, (list, tuple)) or type(v).__name__ == "Array":
                inner = ", ".join(fmt(x) for x in v)
                return f"({inner})" if isinstance(v, tuple) else f"[{inner}]"
            if v is None or isinstance(v, (bool, int, float)):
                return repr(v)
            raise TypeError(type(v).__name__)

        ba = sig.bind(sch, *args, **kwargs)
        ba.apply_defaults()
        a, parts = ba.arguments, []
        # Block names in the order the methods look them up (cache_* do consumer_blocks first).
        for name in sorted((n for n in a if "block" in n or n == "target"), key=lambda n: n != "consumer_blocks"):
            a[name] = [rv(x) for x in a[name]] if isinstance(a[name], list) else rv(a[name])
        block = a.get("block")
        for name, p in list(sig.parameters.items())[1:]:
            v = a[name]
            if p.kind == p.VAR_POSITIONAL:  # reorder(l1, l2), fuse(l1, l2, ...), merge(...)
                parts += [fmt(x) for x in v]
                continue
            if name == "consumer_blocks" and not v:
                continue  # TVM prints consumer_blocks only when given
            if name == "buffer":  # a name or Buffer is printed as ("read"|"write", index)
                v = tuple(sch._normalize_buffer_arg(block, v)[:2])
            elif name.endswith("buffer_index") and not isinstance(v, int):
                v = sch._normalize_buffer_arg(block, v)[1]
            elif name in ("index_map", "pad_value", "gen_new_ranges") and v is not None:
                # the map as the method converted it (from a lambda, a scalar pad value)
                parts.append(f"{name}={print_map(maps.pop(0), name == 'gen_new_ranges')}")
                continue
            elif name == "func_name" and v is None:  # TVM prints the function worked on
                v = sch.func_working_on.name_hint if sch.func_working_on else "main"
            parts.append(f"{name}={fmt(v)}")
        ret, k = sig.return_annotation, len(names)  # name the outputs the call would define
        if method in LIST_OUT:
            kind, n = LIST_OUT[method]
            n = n if isinstance(n, int) else a[n] if isinstance(a[n], int) else len(a[n])
            outs = ", ".join(f"{kind}{k + i}" for i in range(n)) + ("," if n == 1 else "")
        elif ret in (SBlockRV, LoopRV) or method == "sample_categorical":
            outs = f"{'b' if ret is SBlockRV else 'l' if ret is LoopRV else 'v'}{k}"
        elif ret in (None, inspect.Signature.empty):
            outs = ""
        else:
            return None  # a list of RVs of unknown length (get_loops, cache_index, ...)
        return (f"{outs} = " if outs else "") + f"sch.{method}({', '.join(parts)})"

    def record_refused(self, sch, method, sig, args, kwargs, n0, err):
        try:
            line = self.render(sch, method, sig, args, kwargs, n0, self.last_ffi)
            lines = list(sch.trace.as_python())
        except Exception:
            return
        if line is not None:
            self.emit(kind="refused", before=self.before_of(sch),
                      trace=lines + [line + "  # REFUSED"], error=error_text(str(err)))

    def install(self):
        import tvm
        import tvm.s_tir.schedule.testing as testing
        from tvm import s_tir
        from tvm.s_tir.schedule import _ffi_api
        from tvm.tirx.function import IndexMap
        rec, S = self, s_tir.Schedule
        orig_init, orig_copy = S.__init__, S.copy

        def __init__(self, *a, **k):
            orig_init(self, *a, **k)
            if not rec.quiet:  # print now: TVM may later modify the input module in place
                rec.live.append((self, self.mod.script()))

        def copy(self):
            new = orig_copy(self)
            if rec.before_of(self) is not None:
                rec.live.append((new, rec.before_of(self)))
            return new
        S.__init__, S.copy = __init__, copy

        def wrap(method, fn):
            sig = inspect.signature(fn)

            def primitive(self, *a, **k):
                if rec.quiet or rec.before_of(self) is None:
                    return fn(self, *a, **k)
                n0, rec.last_ffi = len(self.trace.insts), ()
                rec.quiet += 1  # nested calls (get_sblock for a block name) are no cases
                try:
                    return fn(self, *a, **k)
                except s_tir.ScheduleError as e:
                    rec.record_refused(self, method, sig, a, k, n0, e)
                    raise
                finally:
                    rec.quiet -= 1
            primitive.__name__, primitive.__doc__, primitive.__signature__ = method, fn.__doc__, sig
            return primitive

        for name, fn in list(vars(S).items()):
            if not name.startswith("_") and callable(fn) and name not in NOT_WRAPPED:
                setattr(S, name, wrap(name, fn))
        for name in dir(_ffi_api):  # (ScheduleState is a constructor: it must stay an FFI function)
            if name.startswith("Schedule") and not name.startswith("ScheduleState"):
                def ffi(*a, _f=getattr(_ffi_api, name)):
                    if any(isinstance(x, IndexMap) for x in a):
                        rec.last_ffi = a
                    return _f(*a)
                setattr(_ffi_api, name, ffi)

        def checker(orig, record):  # record what a check looks at, then check quietly
            def check(*a, **k):
                if not rec.quiet:
                    record(*a, **k)
                rec.quiet += 1
                try:
                    return orig(*a, **k)
                finally:
                    rec.quiet -= 1
            return check

        def vtr(sch, mod, _orig=testing.verify_trace_roundtrip, **k):
            if {i.kind.name for i in sch.trace.insts} & INDEX_MAP_KINDS:
                k["text_format"] = "python"  # the JSON half segfaults on index maps
            return _orig(sch, mod, **k)
        checked = lambda a, b, *r, **k: rec.record_checked(a, b)
        # Patched before the test modules are imported, so `from ... import` gets these.
        testing.verify_trace_roundtrip = checker(vtr, lambda sch, mod, **k: rec.record_ok(sch))
        testing.assert_structural_equal_ignore_global_symbol = checker(
            testing.assert_structural_equal_ignore_global_symbol, checked)
        tvm.ir.assert_structural_equal = checker(tvm.ir.assert_structural_equal, checked)

    # pytest hooks
    def pytest_collection_modifyitems(self, items):
        items[:] = [it for it in items if it.nodeid not in self.skip]  # run before a crash

    def pytest_runtest_setup(self, item):
        self.live.clear()
        self.test = item.nodeid
        self.emit(kind="start")

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.emit(kind="failed", test_id=report.nodeid)
    pytest_collectreport = pytest_runtest_logreport


def run_tests(test_file, out_path, skip_path):
    import pytest
    import tvm.testing  # noqa: F401  (some test files use tvm.testing without importing it)
    with open(skip_path) as f:
        rec = Recorder(out_path, set(f.read().splitlines()))
    rec.install()
    pytest.main([test_file, "-q", "-p", "no:cacheprovider", "--tb=no", "-W", "ignore",
                 "--rootdir", os.path.dirname(test_file)], plugins=[rec])
    rec.emit(kind="end")


# ---------------------------------------------------------------- replay process
def replay(rec):
    """None if the case replays from its printed text in a fresh Schedule, else why not."""
    import tvm, tvm.script
    from tvm import s_tir
    from tvm.script import tirx as T
    env, lines = {"T": T, "sch": s_tir.Schedule(tvm.script.from_source(rec["before"]))}, rec["trace"]
    for i, line in enumerate(lines[:-1] if rec["kind"] == "refused" else lines):
        try:
            exec(line, env)
        except Exception as e:
            return f"line {i + 1} fails: {type(e).__name__}: {(str(e) or ' ').splitlines()[0][:90]}"
    if rec["kind"] == "ok":
        try:
            after = tvm.script.from_source(rec["after"])
            tvm.ir.assert_structural_equal(env["sch"].mod, after, map_free_vars=True)
            return None
        except Exception as e:
            return f"result differs: {type(e).__name__}"
    try:
        exec(lines[-1], env)
    except s_tir.ScheduleError as e:
        if str(e).splitlines()[0] != rec["error"].splitlines()[0]:
            return "another ScheduleError: " + str(e).splitlines()[0]
        rec["error"] = error_text(str(e))
        return None
    except Exception as e:
        return f"last line raises {type(e).__name__}, not ScheduleError"
    return "last line does not fail"


def run_replay(cases_path, out_path, start):
    with open(out_path, "a") as out:
        for rec in read_jsonl(cases_path)[int(start):]:
            try:
                rec["dropped"] = replay(rec)
            except Exception as e:
                rec["dropped"] = f"replay error: {type(e).__name__}"
            out.write(json.dumps(rec) + "\n")
            out.flush()


# ---------------------------------------------------------------- driver
def sub(args, timeout):
    try:
        return subprocess.run([sys.executable, os.path.abspath(__file__)] + args, timeout=timeout,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        return "timeout"


def append(path, rec):
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def capture_file(test_file, work, timeout):
    """Run one test file, replay its cases: (kept, dropped, failed tests, problems)."""
    raw, skip, cases, done = (os.path.join(work, n) for n in ("raw", "skip", "cases", "done"))
    for p in (raw, cases, done):
        open(p, "w").close()
    problems = []
    while True:  # after a crash, go on with the tests not started yet
        started = [r["test"] for r in read_jsonl(raw) if r["kind"] == "start"]
        with open(skip, "w") as f:
            f.writelines(t + "\n" for t in started)
        rc = sub(["--run-tests", test_file, raw, skip], timeout)
        recs = read_jsonl(raw)
        now = [r["test"] for r in recs if r["kind"] == "start"]
        if recs and recs[-1]["kind"] == "end" or len(now) == len(started):
            problems += [] if recs and recs[-1]["kind"] == "end" else [f"pytest crashed ({rc})"]
            break
        problems.append(f"{now[-1]} crashed ({rc})")
        append(raw, dict(kind="failed", test_id=now[-1]))
    for r in recs:
        if r["kind"] in ("ok", "refused"):
            append(cases, r)
    n, m = len(read_jsonl(cases)), 0
    while m < n:  # a replay that crashes loses the case it was on, not the rest
        rc = sub(["--replay", cases, done, str(m)], timeout)
        m = len(read_jsonl(done))
        if m < n:
            append(done, dict(read_jsonl(cases)[m], dropped=f"replay crashed ({rc})"))
            m += 1
    out = read_jsonl(done)
    failed = sorted({r["test_id"] for r in read_jsonl(raw) if r["kind"] == "failed"})
    return [r for r in out if not r["dropped"]], [r for r in out if r["dropped"]], failed, problems


def write_case(folder, rec):
    os.makedirs(folder)
    files = {"before.py": rec["before"], "trace.py": "\n".join(rec["trace"]),
             "after.py": rec.get("after"), "trace.json": rec.get("json"), "error.txt": rec.get("error")}
    for name, text in files.items():
        if text is not None:
            with open(os.path.join(folder, name), "w") as f:
                f.write(text if text.endswith("\n") else text + "\n")


def write_index(out):
    rows = ["case\tkind\tprimitives\ttrace_lines"]
    for case in sorted(d for d in os.listdir(out) if os.path.isfile(os.path.join(out, d, "trace.py"))):
        with open(os.path.join(out, case, "trace.py")) as f:
            lines = f.read().splitlines()
        prims = dict.fromkeys(m for l in lines for m in re.findall(r"sch\.(\w+)\(", l))
        kind = "refused" if os.path.exists(os.path.join(out, case, "error.txt")) else "ok"
        rows.append(f"{case}\t{kind}\t{','.join(prims)}\t{len(lines)}")
    with open(os.path.join(out, "index.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tvm-git", required=True, help="git dir of an apache/tvm clone or mirror")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", help="comma-separated topics (compute_at,split_fuse,...)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per test file")
    # The shared set numbers a topic's cases from 000; its half holds the odd ones.
    ap.add_argument("--first", type=int, default=0, help="number of a topic's first case")
    opts = ap.parse_args()
    t0, topic = time.time(), lambda f: os.path.basename(f)[len("test_tir_schedule_"):-len(".py")]
    only = set(opts.only.split(",")) if opts.only else None
    seen, totals, failed_all, dropped_all = set(), {"ok": 0, "refused": 0}, [], []
    os.makedirs(opts.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tvmdiff-capture-") as tmp:
        archive = subprocess.run(["git", "--git-dir", opts.tvm_git, "archive", opts.rev, TESTS],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        test_dir = os.path.join(tmp, TESTS)
        for f in sorted(os.listdir(test_dir)):
            if not f.startswith("test_tir_schedule_") or SKIP.match(f) or only and topic(f) not in only:
                continue
            kept, dropped, failed, problems = capture_file(os.path.join(test_dir, f), tmp, opts.timeout)
            for d in os.listdir(opts.out):  # regenerate this topic from scratch
                if re.fullmatch(re.escape(topic(f)) + r"_\d{3}", d):
                    shutil.rmtree(os.path.join(opts.out, d))
            counts = {"ok": 0, "refused": 0}
            for rec in kept:
                if (rec["before"], tuple(rec["trace"])) not in seen:  # checked twice, or twice alike
                    seen.add((rec["before"], tuple(rec["trace"])))
                    number = opts.first + sum(counts.values())
                    write_case(os.path.join(opts.out, f"{topic(f)}_{number:03d}"), rec)
                    counts[rec["kind"]] += 1
                    totals[rec["kind"]] += 1
            failed_all += failed
            dropped_all += [f"{r['kind']} case of {r['test']}: {r['dropped']}" for r in dropped]
            print(f"{topic(f):34s} ok {counts['ok']:3d}  refused {counts['refused']:3d}  dropped "
                  f"{len(dropped):2d}  failed tests {len(failed):2d}  {'; '.join(problems)}", flush=True)
    write_index(opts.out)
    import tvm
    print(f"\ntotal: {sum(totals.values())} cases ({totals['ok']} ok, {totals['refused']} refused)"
          f" in {opts.out}\ntests failed, errored or crashed under TVM {tvm.__version__}: "
          f"{len(failed_all)}\n" + "".join(f"  failed: {t}\n" for t in failed_all)
          + "".join(f"  dropped {d}\n" for d in dropped_all) + f"elapsed: {time.time() - t0:.0f} s")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run-tests"]:
        run_tests(*sys.argv[2:5])
    elif sys.argv[1:2] == ["--replay"]:
        run_replay(*sys.argv[2:5])
    else:
        main()
