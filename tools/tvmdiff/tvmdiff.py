"""Differential testing of Loom's schedule primitives against TVM.

Each trace is applied by Loom (`loom sched`) and by TVM 0.27, on the same
program, and the two results compared: both refuse, or both give
structurally equal modules. Traces come from three sources (--source):

  spaces  candidates drawn from Loom's design spaces (`loom space --sample`)
          for every operator of Loom's library and every corpus program;
  random  random traces of random primitives with plausible arguments,
          drawn step by step on TVM's own schedule (randtrace.py), on those
          programs and on every program of the conformance cases;
  cases   schedule cases made from TVM's own test files (capture.py's
          output, --cases DIR; ../shared/conformance by default).

Agreement is reported per instruction kind (a trace counts for every kind it
holds). Differences are written to OUT (the trace, both results).

TVM is never a dependency of Loom: this tool makes its own virtual
environment with apache-tvm from PyPI (build/tvmdiff-venv) on first use.

    python3 tools/tvmdiff/tvmdiff.py [--loom build/loom] [--source random]
        [--traces N] [--samples N] [--seed S] [--jobs J] [--out DIR]
        [--only NAME,...] [--cases DIR]
"""
import argparse
import concurrent.futures as cf
import json
import multiprocessing
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED = os.path.join(ROOT, "..", "shared")
VENV = os.path.join(ROOT, "build", "tvmdiff-venv")
# Methods that only look things up or sample: most traces have them.
PASSIVE = {"get_sblock", "get_block", "get_loops", "get_child_blocks", "get_producers",
           "get_consumers", "get_output_blocks", "sample_perfect_tile",
           "sample_categorical", "sample_compute_location", "enter_postproc"}
METHOD = re.compile(r"sch\.(\w+)\(")


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


def kinds(script):
    """The schedule methods a trace's script calls, lookups left out."""
    return set(METHOD.findall(script)) - PASSIVE


# --- programs ---------------------------------------------------------------

def programs(loom, tmp, with_cases):
    """(name, path) of every program: the operator library, the corpus and,
    with_cases, the conformance cases' starting programs."""
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
    corpus = os.path.join(SHARED, "corpus")
    if os.path.isdir(corpus):
        for f in sorted(os.listdir(corpus)):
            if f.endswith(".py") and ".sched." not in f:
                out.append(("corpus/" + f[:-3], os.path.join(corpus, f)))
    if with_cases:
        for name, d in case_dirs(with_cases):
            out.append(("case/" + name, os.path.join(d, "before.py")))
    return out


def case_dirs(root):
    if not root or not os.path.isdir(root):
        return []
    return [(f, os.path.join(root, f)) for f in sorted(os.listdir(root))
            if os.path.exists(os.path.join(root, f, "trace.py"))]


def parse(text, check=True):
    import tvm
    mod = tvm.script.from_source(text, check_well_formed=check)
    return mod if isinstance(mod, tvm.IRModule) else tvm.IRModule({"main": mod})


def bindings_in_domains(mod):
    """Whether every block without a predicate binds each iter inside its
    constant domain, over the constant ranges of the loops and iters around
    it: TVM's IR requires it, and its verifiers do not check it."""
    import tvm
    from tvm import s_tir, tirx
    big = 1 << 62

    def fits(value, dom, scope):
        # Only where every variable of the binding ranges over constants:
        # bounds through symbolic or dependent ranges lose precision.
        def is_const(rng):
            return isinstance(rng.min, tirx.IntImm) and isinstance(rng.extent, tirx.IntImm)
        ranges = []
        for v in tirx.analysis.undefined_vars(value, []):
            found = [rng for var, rng in scope if var.same_as(v)]
            if not found or not is_const(found[-1]):
                return True
            ranges.append((v, found[-1]))
        if not is_const(dom):
            return True
        ana = tvm.sym.Analyzer()
        for var, rng in ranges:
            ana.bind(var, rng)
        b = ana.const_int_bound(value)
        if b.min_value <= -big or b.max_value >= big:
            return True
        lo, hi = dom.min.value, dom.min.value + dom.extent.value - 1
        return lo <= b.min_value and b.max_value <= hi

    def walk(stmt, scope):
        if stmt is None:
            return True
        if isinstance(stmt, tirx.For):
            rng = tvm.ir.Range.from_min_extent(stmt.min, stmt.extent)
            return walk(stmt.body, scope + [(stmt.loop_var, rng)])
        if isinstance(stmt, tirx.SeqStmt):
            return all(walk(x, scope) for x in stmt.seq)
        if isinstance(stmt, tirx.IfThenElse):
            return walk(stmt.then_case, scope) and walk(stmt.else_case, scope)
        if isinstance(stmt, (tirx.LetStmt, tirx.AttrStmt)):
            return walk(stmt.body, scope)
        if isinstance(stmt, s_tir.SBlockRealize):
            block = stmt.block
            pred = stmt.predicate
            if isinstance(pred, tirx.IntImm) and pred.value:
                for iv, value in zip(block.iter_vars, stmt.iter_values):
                    if not fits(value, iv.dom, scope):
                        return False
            inner = scope + [(iv.var, iv.dom) for iv in block.iter_vars]
            return walk(block.init, inner) and walk(block.body, inner)
        return True

    try:
        return all(walk(f.body, []) for f in mod.functions.values()
                   if isinstance(f, tirx.PrimFunc))
    except Exception:  # noqa: BLE001
        return True  # a form this check does not know: not its to judge


def well_formed(mod):
    """Whether TVM's parser takes mod's own printing with its well-formedness
    check on (TVM's analysis verifier does not know s_tir blocks), and its
    blocks bind their iters inside their domains."""
    try:
        parse(mod.script(), check=True)
    except Exception:  # noqa: BLE001
        return False
    return bindings_in_domains(mod)


def tvm_schedule(mod, script):
    """TVM's schedule of mod after running script (a Trace.as_python text)."""
    import tvm
    from tvm import s_tir
    sch = s_tir.Schedule(mod)
    exec(script, {"sch": sch, "T": tvm.script.tirx})  # noqa: S102
    return sch


# --- comparing ----------------------------------------------------------------

def printed(text):
    """A module's text without comments and blank lines."""
    return [l.rstrip() for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]


def verdict(rc_loom, loom_out, loom_err, tvm_mod, tvm_err, tvm_failed=False):
    """(same, why) for Loom's result against TVM's (tvm_mod None: refused).
    same is None where TVM failed with an error other than a refusal: there
    is nothing to compare with."""
    import tvm
    if tvm_failed:
        return None, "TVM fails (%s), Loom %s" % (tvm_err, "refuses" if rc_loom else "applies")
    if rc_loom != 0 and tvm_mod is None:
        return True, "both refuse"
    if rc_loom != 0:
        return False, "Loom refuses, TVM applies: " + loom_err.strip()[:300]
    if tvm_mod is None:
        return False, "TVM refuses, Loom applies: " + tvm_err
    try:
        mine = parse(loom_out)
    except Exception as e:  # noqa: BLE001
        # TVM may not read back what it printed itself (a block that uses
        # the loops around its scope block): the same text is agreement.
        if printed(loom_out) == printed(tvm_mod.script()):
            return True, ""
        if not well_formed(tvm_mod):
            return None, "TVM's result is not well formed"
        return False, "TVM cannot read Loom's result: " + str(e).strip()[:200]
    try:
        tvm.ir.assert_structural_equal(mine, tvm_mod, map_free_vars=True)
        return True, ""
    except ValueError as e:
        if not well_formed(tvm_mod):
            return None, "TVM's result is not well formed"
        try:
            # TVM may share one variable between blocks (loop_partition's
            # copies); compared as printed, each block defines its own.
            tvm.ir.assert_structural_equal(mine, parse(tvm_mod.script()),
                                           map_free_vars=True)
            return True, ""
        except ValueError:
            pass
        return False, "the modules differ: " + str(e).strip().splitlines()[0][:200]


def loom_sched(loom, prog, script, tmp):
    """Loom applies a script (.py text) to the program at prog."""
    path = os.path.join(tmp, "trace.py")
    open(path, "w").write(script + "\n")
    return run([loom, "sched", prog, path, "--dialect", "tirx"])


def record(name, script, same, why, loom_res, tvm_res):
    return {"name": name, "script": script, "kinds": sorted(kinds(script)),
            "same": same, "why": why, "loom": loom_res, "tvm": tvm_res}


def check(loom, name, prog, script, tvm_mod, tvm_err, tmp, tvm_failed=False):
    rc, out, err = loom_sched(loom, prog, script, tmp)
    same, why = verdict(rc, out, err, tvm_mod, tvm_err, tvm_failed)
    if rc == 0 and not same:
        try:
            out = parse(out).script()  # TVM's printing, to diff with TVM's
        except Exception:  # noqa: BLE001
            pass
    return record(name, script, same, why, out if rc == 0 else err,
                  "" if same else (tvm_mod.script() if tvm_mod is not None else tvm_err))


# --- the sources -------------------------------------------------------------

def renumber(script):
    """The script with its outputs numbered as Trace.as_python numbers them:
    b<k>, l<k>, v<k>, k counting every output in order."""
    names, k, out = {}, 0, []
    for line in script.split("\n"):
        line = re.sub(r"\b[blv]\d+\b", lambda m: names.get(m.group(0), m.group(0)), line)
        if " = sch." in line:
            lhs, rhs = line.split(" = sch.", 1)
            outs = []
            for old in re.findall(r"\b[blv]\d+\b", lhs):
                names[old] = "%s%d" % (old[0], k)
                outs.append(names[old])
                k += 1
            line = "%s%s = sch.%s" % (", ".join(outs), "," if lhs.rstrip().endswith(",")
                                      else "", rhs)
        out.append(line)
    return "\n".join(out)


def keep_case(root, r, before, refused):
    """Writes a difference as a case in ../shared/conformance's form:
    before.py, trace.py and after.py (TVM's result, its trace as TVM prints
    it) or error.txt (the last line of trace.py is refused)."""
    d = os.path.join(root, re.sub(r"\W+", "_", r["name"]) + "_%d" % (hash(r["script"]) % 10000))
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "before.py"), "w").write(before.script())
    script = renumber(r["script"])
    if refused:
        open(os.path.join(d, "trace.py"), "w").write(script + "  # REFUSED\n")
        open(os.path.join(d, "error.txt"), "w").write(r["tvm"] + "\n")
        return
    sch = tvm_schedule(before, script)
    open(os.path.join(d, "trace.py"), "w").write("\n".join(sch.trace.as_python()) + "\n")
    open(os.path.join(d, "after.py"), "w").write(sch.mod.script())


def job_random(loom, name, prog, tirx, seed, keep, progress=None, avoid=()):
    """The cases of one random trace on one program."""
    import tvm
    import randtrace
    tmp = tempfile.mkdtemp(prefix="tvmdiff-")
    try:
        out = []
        label = "%s seed %d" % (name, seed)
        base = parse(tirx)
        for script, outcome, res in randtrace.draw(base, seed, tvm.script.tirx,
                                                   progress, avoid):
            applied = outcome == "applied"
            r = check(loom, label, prog, script, res if applied else None,
                      None if applied else res, tmp, outcome == "failed")
            if applied and r["same"] is False:
                r = first_difference(loom, label, prog, base, script, tmp) or r
            if keep and r["same"] is False:
                keep_case(keep, r, base, outcome == "refused")
            out.append(r)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def first_difference(loom, label, prog, base, script, tmp):
    """The shortest prefix of an applied trace on which Loom and TVM differ,
    so that a difference is reported at the step that makes it."""
    lines = script.split("\n")
    for i in range(len(lines) - 1):
        if not kinds(lines[i]):
            continue
        prefix = "\n".join(lines[:i + 1])
        r = check(loom, label, prog, prefix, tvm_schedule(base, prefix).mod, None, tmp)
        if r["same"] is False:
            return r
    return None


def job_case(loom, name, d):
    """A captured case: before.py, trace.py, after.py or error.txt."""
    tmp = tempfile.mkdtemp(prefix="tvmdiff-")
    try:
        script = "\n".join(l.split("  # REFUSED")[0]
                           for l in open(os.path.join(d, "trace.py")).read().splitlines())
        after = os.path.join(d, "after.py")
        if os.path.exists(after):
            tvm_mod, tvm_err = parse(open(after).read(), check=False), None
        else:
            tvm_mod, tvm_err = None, open(os.path.join(d, "error.txt")).read().strip()[:300]
        return [check(loom, "case " + name, os.path.join(d, "before.py"), script, tvm_mod,
                      tvm_err, tmp)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def job_spaces(loom, name, prog, tirx, samples, seed):
    """Candidates of Loom's design spaces, each run as TVM's script form."""
    base = parse(tirx)
    rc, text, _ = run([loom, "space", prog, "--sample", str(samples), "--seed", str(seed),
                       "--json"])
    traces, take = [], False
    for line in text.splitlines() if rc == 0 else []:
        if line.startswith("# candidate"):
            take = "dropped" not in line
        elif take and line.startswith("["):
            traces.append(line)
            take = False
    tmp = tempfile.mkdtemp(prefix="tvmdiff-")
    out = []
    try:
        for k, trace in enumerate(traces):
            path = os.path.join(tmp, "trace.json")
            open(path, "w").write(trace)
            # The script form in TVM 0.27's spelling, as Trace.as_python
            # prints it: TVM's JSON reader and writer disagree on some kinds.
            rc, script, err = run([loom, "trace", prog, path, "--dialect", "tirx"])
            if rc != 0:
                continue
            tvm_mod, tvm_err = None, None
            try:
                tvm_mod = tvm_schedule(base, script).mod
            except Exception as e:  # noqa: BLE001
                tvm_err = str(e).strip().splitlines()[-1][:300] if str(e).strip() else repr(e)
            out.append(check(loom, "%s #%d" % (name, k), prog, script.strip(), tvm_mod,
                             tvm_err, tmp))
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def jobs_for(args, progs):
    """(function, args) of every job, in a fixed order."""
    out = []
    if "cases" in args.source:
        for name, d in case_dirs(args.cases):
            out.append((job_case, (args.loom, name, d)))
    if "spaces" in args.source:
        for name, prog, tirx in progs:
            if not name.startswith("case/"):
                out.append((job_spaces, (args.loom, name, prog, tirx, args.samples, args.seed)))
    if "random" in args.source and progs:
        for k in range(args.traces):
            name, prog, tirx = progs[k % len(progs)]
            out.append((job_random, (args.loom, name, prog, tirx, args.seed * 1000003 + k,
                                     args.keep)))
    return out


def in_child(fn, fargs, kw):
    """fn(*fargs, **kw) in a forked child: its result, or None when TVM
    crashed the child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            data = pickle.dumps(("ok", fn(*fargs, **kw)))
        except Exception as e:  # noqa: BLE001
            data = pickle.dumps(("error", str(e)))
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    if not data:
        return None
    kind, value = pickle.loads(data)
    if kind == "error":
        raise RuntimeError(value)
    return value


def call(fn, fargs):
    """Runs a job in a child of the worker. Where TVM crashes the child in a
    random trace, the crash is recorded and the trace drawn again without
    the method that crashed."""
    progress = tempfile.mktemp(prefix="tvmdiff-progress-")
    avoid, out = [], []
    try:
        for _ in range(4):
            kw = {"progress": progress, "avoid": tuple(avoid)} if fn is job_random else {}
            res = in_child(fn, fargs, kw)
            if res is not None:
                return out + res
            script = open(progress).read() if os.path.exists(progress) else ""
            method = (METHOD.findall(script) or ["?"])[-1]
            out.append(record("%s %s" % (fargs[1], fargs[4] if fn is job_random else ""),
                              script, None, "TVM crashes in %s" % method, "", ""))
            if fn is not job_random:
                break
            avoid.append(method)
        return out
    finally:
        if os.path.exists(progress):
            os.unlink(progress)


def run_jobs(jobs, n_workers):
    """Runs the jobs on n_workers processes, each job in a child of its own."""
    results = []
    ctx = multiprocessing.get_context("fork")
    with cf.ProcessPoolExecutor(n_workers, mp_context=ctx) as pool:
        futs = {pool.submit(call, fn, fa): (fn, fa) for fn, fa in jobs}
        for f in cf.as_completed(futs):
            try:
                results.extend(f.result())
            except Exception as e:  # noqa: BLE001
                print("tvmdiff: %s %s: %s" % (futs[f][0].__name__, futs[f][1][1], e),
                      file=sys.stderr)
    return results


def deliberate_rules():
    """(method, compiled pattern, docs row) of deliberate.tsv."""
    rules = []
    for line in open(os.path.join(HERE, "deliberate.tsv")):
        if line.strip() and not line.startswith("#"):
            method, pattern, row = line.rstrip("\n").split("\t")
            rules.append((method, re.compile(pattern, re.S), row))
    return rules


def deliberate(r, rules):
    """The docs row that lists a difference as deliberate, or None."""
    steps = [m for m in METHOD.findall(r["script"]) if m not in PASSIVE]
    last = steps[-1] if steps else ""
    for method, pattern, row in rules:
        if method == last and pattern.search(r["why"]):
            return row
    return None


def group(r):
    """A difference's family: the last step's method and how they differ,
    with names and numbers left out of the messages."""
    steps = [m for m in METHOD.findall(r["script"]) if m not in PASSIVE]
    why = r["why"]
    if why.startswith("the modules differ"):
        m = re.search(r"caused by lhs at <root>(\S*)", why)
        path = re.sub(r"\[[^\]]*\]", "", m.group(1) if m else "").strip(":").split(".")
        why = "the modules differ at ..." + ".".join(path[-3:])
    else:
        detail = re.search(r"Error message: (.*)", why)
        head = why.splitlines()[0].split(":")[0]
        why = head + ": " + detail.group(1) if detail else why.splitlines()[0]
        why = re.sub(r"\S+:\d+:\d+: error: ", "", why)
        why = re.sub(r"'[^']*'|\"[^\"]*\"|\b\d+\b|#\d+|0x[0-9a-f]+", "_", why)
    return "%s: %s" % (steps[-1] if steps else "?", why)


def report(results, args, elapsed):
    os.makedirs(args.out, exist_ok=True)
    per_kind, n_agree, n_cmp, fails = {}, 0, 0, {}
    for k, r in enumerate(results):
        if r["same"] is None:
            why = re.sub(r"\(.*\)", "(...)", r["why"])
            fails[why] = fails.get(why, 0) + 1
        else:
            n_cmp += 1
            n_agree += r["same"]
            for kind in r["kinds"] or ["(lookups only)"]:
                t = per_kind.setdefault(kind, [0, 0])
                t[0] += 1
                t[1] += r["same"]
        if not r["same"]:
            stem = os.path.join(args.out, "%05d-%s" % (k, re.sub(r"\W+", "_", r["name"])))
            open(stem + ".trace.py", "w").write(r["script"] + "\n")
            open(stem + ".loom.py", "w").write(r["loom"])
            open(stem + ".tvm.py", "w").write(r["tvm"])
            if r["same"] is False:
                print("%s: %s (%s.*)" % (r["name"], r["why"], stem))
    groups, rows, rules = {}, {}, deliberate_rules()
    for r in results:
        r["class"] = ""
        if r["same"] is False:
            row = deliberate(r, rules)
            if row:
                rows[row] = rows.get(row, 0) + 1
                r["class"] = "deliberate: " + row
            else:
                g = group(r)
                groups[g] = groups.get(g, 0) + 1
                r["class"] = g
    with open(os.path.join(args.out, "results.jsonl"), "w") as f:
        for r in results:
            keys = ("name", "kinds", "same", "why", "class", "script")
            f.write(json.dumps({k: r[k] for k in keys}) + "\n")
    print("\ntvmdiff: source %s, seed %d, %d traces compared, %d agree (%.2f%%), %.0f s" %
          (args.source, args.seed, n_cmp, n_agree, 100.0 * n_agree / max(n_cmp, 1), elapsed))
    for kind in sorted(per_kind):
        t = per_kind[kind]
        print("  %-26s %6d traces  %6d agree  %6.2f%%" % (kind, t[0], t[1],
                                                          100.0 * t[1] / t[0]))
    n_delib = sum(rows.values())
    print("  deliberate differences (tools/tvmdiff/deliberate.tsv): %d; agree or deliberate: "
          "%.2f%%" % (n_delib, 100.0 * (n_agree + n_delib) / max(n_cmp, 1)))
    for row, n in sorted(rows.items(), key=lambda x: -x[1]):
        print("  %5d  %s" % (n, row))
    if groups:
        print("other differences, by the step that makes them:")
        for g, n in sorted(groups.items(), key=lambda x: -x[1]):
            print("  %5d  %s" % (n, g[:150]))
    if fails:
        print("not compared: TVM failed otherwise than by refusing (%d traces)" %
              sum(fails.values()))
        for why, n in sorted(fails.items(), key=lambda x: -x[1]):
            print("  %5d  %s" % (n, why[:150]))
    return n_agree == n_cmp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loom", default=os.path.join(ROOT, "build", "loom"))
    ap.add_argument("--source", default="random",
                    help="comma-separated: random, spaces, cases")
    ap.add_argument("--traces", type=int, default=2000, help="random traces to draw")
    ap.add_argument("--samples", type=int, default=4, help="candidates per design space")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "tvmdiff-out"))
    ap.add_argument("--only", default="", help="programs whose name holds one of these")
    ap.add_argument("--keep", default=None,
                    help="write each difference of a random trace here as a case")
    ap.add_argument("--cases", default=os.path.join(SHARED, "conformance"),
                    help="a folder of cases in ../shared/conformance's form")
    args = ap.parse_args()
    ensure_tvm()
    sys.path.insert(0, HERE)
    args.loom = os.path.abspath(args.loom)
    start = time.time()
    tmp = tempfile.mkdtemp(prefix="tvmdiff-progs-")
    progs = []
    for name, path in programs(args.loom, tmp, args.cases if "random" in args.source else None):
        if args.only and not any(k in name for k in args.only.split(",")):
            continue
        rc, tirx, err = run([args.loom, "fmt", path, "--dialect", "tirx"])
        try:
            parse(tirx)
        except Exception as e:  # noqa: BLE001
            print("%s: left out, TVM cannot read it: %s" %
                  (name, str(e).strip().splitlines()[0][:120] if str(e).strip() else repr(e)))
            continue
        progs.append((name, path, tirx))
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    results = run_jobs(jobs_for(args, progs), args.jobs)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if report(results, args, time.time() - start) else 1


if __name__ == "__main__":
    sys.exit(main())
