"""Tuning: searching each task's design space, measuring candidates on this
machine, every measurement recorded in a database."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from ._lib import Error, library_path
from ._module import Module, _is_path


@dataclass
class TuneResult:
    """What tuning found for one task (a structurally distinct function;
    weight counts the functions that share it).

    best_ms is the best candidate's time once the finalists are measured
    again, so it may differ a little from the last point of history, which
    is what the search saw. trace is that candidate's schedule script.
    """
    task: str
    weight: int
    trials: int
    failures: int
    rejected: int
    best_ms: Optional[float]
    baseline_ms: Optional[float]
    gflops: Optional[float]
    trace: str
    disqualified: int = 0
    # Trials stopped in their first call, far slower than the best so far.
    stopped: int = 0
    # (trials measured, seconds elapsed, best ms so far) after each batch:
    # the tuning curve.
    history: List[Tuple[int, float, float]] = field(default_factory=list)


def _format_ms(ms):
    if ms is None or ms != ms or ms <= 0 or ms == float("inf"):
        return "-"
    return "%.4g ms" % ms


class _Lines:
    """Progress as plain lines on stderr."""

    def __call__(self, task, trials, max_trials, failures, best_ms, elapsed_s):
        line = "[%s] trials %d/%d, best %s" % (task, trials, max_trials, _format_ms(best_ms))
        if failures:
            line += ", failures %d" % failures
        print(line, file=sys.stderr, flush=True)

    def close(self):
        pass


class _Bars:
    """Progress as one tqdm bar per task."""

    def __init__(self, tqdm):
        self._tqdm = tqdm
        self._bars = {}

    def __call__(self, task, trials, max_trials, failures, best_ms, elapsed_s):
        bar = self._bars.get(task)
        if bar is None:
            # The bar starts at the first report, after a batch: its own
            # clock would give a rate of nonsense, so the time is Loom's.
            bar = self._bars[task] = self._tqdm(
                total=max_trials, desc=task, unit="trial",
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}{postfix}")
        bar.update(max(0, min(trials, max_trials) - bar.n))
        bar.set_postfix_str("best %s, %.1f s" % (_format_ms(best_ms), elapsed_s), refresh=True)

    def close(self):
        for bar in self._bars.values():
            bar.close()


def _reporter(progress):
    if not progress:
        return None
    if callable(progress):
        return progress
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _Lines()
    return _Bars(tqdm)


def _text_or_file(source):
    if source is None:
        return None
    if _is_path(source):
        with open(source, "r", encoding="utf-8") as f:
            return f.read()
    if isinstance(source, str):
        return source
    raise TypeError("space must be a schedule script's text or its path")


def _str(s):
    return None if s is None else os.fspath(s)


def _run_worker(request, history, report):
    """Runs the tuner in a fresh process (see _tune_worker: a process that
    called a parallel kernel cannot fork measuring children safely), passing
    its progress to report; returns the JSON text of the results. An
    exception in report, or an interrupt, stops the tuning: the
    measurements made so far stay in the database."""
    read_fd, write_fd = os.pipe()
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_parent, env.get("PYTHONPATH")) if p)
    env.setdefault("LOOM_LIBRARY", library_path)
    try:
        worker = subprocess.Popen([sys.executable, "-m", "loom._tune_worker", str(write_fd)],
                                  stdin=subprocess.PIPE, pass_fds=(write_fd,), env=env)
    finally:
        os.close(write_fd)
    result = error = None
    with os.fdopen(read_fd, "r") as lines:
        try:
            worker.stdin.write(json.dumps(request).encode("utf-8"))
            worker.stdin.close()
            for line in lines:
                msg = json.loads(line)
                if "progress" in msg:
                    task, n, max_trials, failures, best_ms, elapsed_s = msg["progress"]
                    history.setdefault(task, []).append((n, elapsed_s, best_ms))
                    if report is not None:
                        report(task, n, max_trials, failures, best_ms, elapsed_s)
                result = msg.get("result", result)
                error = msg.get("error", error)
        except BaseException:
            worker.kill()
            worker.wait()
            raise
    rc = worker.wait()
    if error is not None:
        message, file, line, col, rendered = error
        raise Error(message, file, line, col, rendered)
    if result is None:
        raise Error("the tuning process ended without a result (exit code %d)" % rc)
    return result


def tune(mod, target=None, trials=64, db="loom.db", strategy="evolutionary",
         seed=0, space=None, func=None, model="xgb", progress=True):
    """Tunes every task of mod (or only the function `func`), `trials`
    measurements each, recording them in the database db. `space` is a
    schedule script (text or path) whose sample_* steps are the knobs;
    without it, the CPU rules' design spaces. `model` ranks candidates:
    "xgb" or "random". `progress`: True shows a bar per task (tqdm) or
    lines on stderr, False nothing, or a callable(task, trials, max_trials,
    failures, best_ms, elapsed_s) called after each measured batch.
    Returns a TuneResult per task. The tuner runs in a process of its own,
    so kernels this process has called do not disturb it; an exception in
    the progress callback, or Ctrl-C, stops it (what was measured stays in
    the database)."""
    if not isinstance(mod, Module):
        raise TypeError("loom.tune takes a loom.Module, not %s" % type(mod).__name__)
    if model not in ("xgb", "random"):
        raise ValueError("model must be 'xgb' or 'random', not %r" % (model,))
    if not isinstance(trials, int) or trials < 1:
        raise ValueError("trials must be a positive integer, not %r" % (trials,))
    if not isinstance(seed, int) or not 0 <= seed < 2 ** 64:
        raise ValueError("seed must be an integer in [0, 2**64), not %r" % (seed,))

    request = {
        "module": mod.script(), "target": _str(target), "db": _str(db),
        "strategy": strategy, "func": func, "space": _text_or_file(space),
        "trials": trials, "seed": seed, "model": model,
    }
    history = {}
    report = _reporter(progress)
    try:
        text = _run_worker(request, history, report)
    finally:
        if isinstance(report, (_Lines, _Bars)):
            report.close()
    results = []
    for o in json.loads(text):
        results.append(TuneResult(
            task=o.get("task"), weight=o.get("weight", 1), trials=o.get("trials", 0),
            failures=o.get("failures", 0), rejected=o.get("rejected", 0),
            best_ms=o.get("best_ms"), baseline_ms=o.get("baseline_ms"),
            gflops=o.get("gflops"), trace=o.get("trace"),
            disqualified=o.get("disqualified", 0), stopped=o.get("stopped", 0),
            history=history.get(o.get("task"), [])))
    return results
