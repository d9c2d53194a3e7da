"""The process loom.tune runs the tuner in: a fresh interpreter, started by
tune() with `python -m loom._tune_worker FD`.

The tuner measures each candidate in a forked child. A process that has
called a parallel kernel (loom.build's) holds a started OpenMP thread pool,
and a child forked from it hangs in its first parallel loop: tuning from
such a process would see every parallel candidate stopped. A fresh process
has no pool. The request comes as JSON on stdin; progress and the result go
back as JSON lines on FD.
"""

import ctypes
import json
import os
import sys

from ._lib import ProgressFn, TuneOptions, diagnostic, encode, lib, take_string


def main():
    out = os.fdopen(int(sys.argv[1]), "w", buffering=1)
    req = json.load(sys.stdin)

    def send(**msg):
        out.write(json.dumps(msg) + "\n")

    def on_progress(ctx, task, n, max_trials, failures, best_ms, elapsed_s):
        send(progress=[task.decode("utf-8", "replace") if task else "", n, max_trials,
                       failures, best_ms, elapsed_s])

    text = req["module"].encode("utf-8")
    with diagnostic() as d:
        mod = lib.loom_embed_read(text, len(text), b"<module>", d.ref)
        if not mod:
            e = d.error()
            send(error=[e.message, e.file, e.line, e.col, e.rendered])
            return
    callback = ProgressFn(on_progress)
    space = req["space"]
    opts = TuneOptions(target=encode(req["target"]), db=encode(req["db"]),
                       strategy=encode(req["strategy"]), func=encode(req["func"]),
                       space=space.encode("utf-8") if space is not None else None,
                       trials=req["trials"], seed=req["seed"],
                       is_random_model=req["model"] == "random", progress=callback,
                       progress_ctx=None)
    with diagnostic() as d:
        result = take_string(lib.loom_embed_tune(mod, ctypes.byref(opts), d.ref))
        if result is None:
            e = d.error()
            send(error=[e.message, e.file, e.line, e.col, e.rendered])
        else:
            send(result=result)
    lib.loom_embed_module_free(mod)


if __name__ == "__main__":
    main()
