#!/usr/bin/python3
"""Whole networks on the CPU: `loom model run` against onnxruntime, the two
taking turns in one run. Never part of the tests.

  usage: bench/bench_net.py [--loom build/loom] [--repeat N] [--short-repeat M]
                            [--db PATH] [--only NAME,...] [--no-default] [--out DIR]

The networks: ResNet-18 (tests/onnx/resnet.py: torchvision's, random weights,
BatchNormalization kept) at 224x224, batch 1 and 16; the MLP of
tests/onnx/cases (batch 4, 16-32-24-10); a bigger MLP built the same way
(Gemm transB=1 and Relu; batch 128, 784-1024-1024-10). Each runs in Loom,
read as `loom model run` reads a model (batch norms folded, activations
NHWC), under the pipelines `default` (the functions as written: the C
backend's loops), `dispatch,default` (products to BLAS, convolutions and
max pools to oneDNN) and,
with --db, `dispatch,apply-db,default` (then the tuned records), and right
after each in onnxruntime (intra_op_num_threads=2), on the same random
input. Both are timed alike: --repeat runs (default 5; --short-repeat, 30,
where Loom's median of those is under 100 ms, so that the first runs, which
page the memory in and start the thread pools, weigh less), each timed
alone, none before, the median; Loom's figure is what `loom model run
--repeat N` prints (`run X ms (median of N)`: the graph's kernels, building excluded),
onnxruntime's is InferenceSession.run's in a process of its own, so
neither's threads spin while the other runs. The ratio is onnxruntime ms /
Loom ms: Loom's speed relative to onnxruntime's (above 1: Loom is faster).
`rel diff` is the largest difference of the outputs over the largest
|onnxruntime output|; `Loom wall s` is the whole `loom model run`
(import, building the kernels, the runs).

OpenBLAS, which the dispatched products call, is started as bench/
openblas_env.h starts it: without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE,
and, where its own detection takes the CPU for an older core, with the
core the CPU matches. onnxruntime and NumPy come from PyPI into a virtual
environment beside the loom binary (ort-venv, as tests/onnx/resnet_ort.sh
makes it); the models are written with Debian's python3-onnx, so run this
with /usr/bin/python3."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OLD_CORES = {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom", "katmai",
             "coppermine", "northwood", "banias", "generic"}


# ---- the onnxruntime side: run in the virtual environment's python ----------

def ort_time(model, inputs, repeat, threads, loom_out):
    """Prints `MS REL_DIFF`: the median of `repeat` runs, and the largest
    difference from Loom's output over the largest |onnxruntime output|."""
    import numpy as np
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    feed = {name: np.load(path) for name, path in (i.split("=", 1) for i in inputs)}
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = sess.run(None, feed)[0]
        times.append((time.perf_counter() - t) * 1e3)
    rel = float("nan")
    if loom_out and os.path.exists(loom_out):
        got = np.load(loom_out)
        if got.shape == out.shape:
            rel = float(np.abs(got.astype(np.float64) - out).max() / np.abs(out).max())
    print("%.6f %.3g" % (statistics.median(times), rel))


# ---- the models -------------------------------------------------------------

def write_mlp(path, batch, sizes, seed=784):
    """An MLP as make_cases.py builds one: Gemm (transB=1, bias) and Relu."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits, x = [], [], "x"
    for i in range(len(sizes) - 1):
        w = rng.standard_normal((sizes[i + 1], sizes[i])) * np.sqrt(2.0 / sizes[i])
        b = rng.uniform(-0.1, 0.1, sizes[i + 1])
        inits += [numpy_helper.from_array(w.astype(np.float32), "fc%d.weight" % i),
                  numpy_helper.from_array(b.astype(np.float32), "fc%d.bias" % i)]
        y = "y" if i == len(sizes) - 2 else "gemm%d" % i
        nodes.append(helper.make_node("Gemm", [x, "fc%d.weight" % i, "fc%d.bias" % i], [y],
                                      name="fc%d" % i, transB=1))
        x = y
        if y != "y":
            nodes.append(helper.make_node("Relu", [y], ["relu%d" % i], name="relu%d" % i))
            x = "relu%d" % i
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, sizes[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, sizes[-1]])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="bench_net.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def input_of(path):
    """The model's (one) input: its name and static shape."""
    import onnx
    g = onnx.load(path, load_external_data=False).graph
    inits = {t.name for t in g.initializer}
    (i,) = [v for v in g.input if v.name not in inits]
    return i.name, [d.dim_value for d in i.type.tensor_type.shape.dim]


def networks(out):
    """(name, batch, make): make() writes the model and returns its path."""
    def resnet(batch):
        def make():
            path = os.path.join(out, "resnet18_b%d.onnx" % batch)
            if not os.path.exists(path):
                subprocess.run([sys.executable, os.path.join(ROOT, "tests/onnx/resnet.py"),
                                "--batch", str(batch), "--size", "224", "-o", path], check=True)
            return path
        return make

    def big_mlp():
        path = os.path.join(out, "mlp_784.onnx")
        if not os.path.exists(path):
            write_mlp(path, 128, [784, 1024, 1024, 10])
        return path

    return [("resnet18", 1, resnet(1)), ("resnet18", 16, resnet(16)),
            ("mlp", 4, lambda: os.path.join(ROOT, "tests/onnx/cases/mlp.onnx")),
            ("mlp-784-1024-1024-10", 128, big_mlp)]


# ---- the environment --------------------------------------------------------

def openblas_env():
    """The environment bench/openblas_env.h gives OpenBLAS, and a line saying
    which core it runs as."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    probe = ("import ctypes; l = ctypes.CDLL('libopenblas.so.0'); "
             "l.openblas_get_corename.restype = ctypes.c_char_p; "
             "print(l.openblas_get_corename().decode())")
    r = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    core = r.stdout.strip()
    if r.returncode != 0 or not core:
        return env, "OpenBLAS: libopenblas.so.0 not found (the dispatched products fall back)"
    if core.lower() not in OLD_CORES:
        return env, "OpenBLAS: %s, as it detects" % core
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    better = None
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        better = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        better = "Haswell"
    if not better:
        return env, "OpenBLAS: %s, as it detects" % core
    env["OPENBLAS_CORETYPE"] = better
    return env, "OpenBLAS: detects %s, run as %s" % (core, better)


def ort_python(loom):
    """The virtual environment's python with onnxruntime, made when missing."""
    venv = os.path.join(os.path.dirname(os.path.abspath(loom)), "ort-venv")
    py = os.path.join(venv, "bin", "python")
    has = lambda: os.path.exists(py) and subprocess.run(
        [py, "-c", "import onnxruntime, numpy"], capture_output=True).returncode == 0
    if not has():
        print("bench_net: installing onnxruntime and numpy from PyPI into %s" % venv,
              file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "onnxruntime",
                        "numpy"], check=True)
    version = subprocess.run([py, "-c", "import onnxruntime; print(onnxruntime.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    return py, version


# ---- the run ----------------------------------------------------------------

def run_loom(args, env, model, feed, pipeline, outdir, repeat):
    cmd = [args.loom, "model", "run", model, "--repeat", str(repeat), "--output", outdir]
    for f in feed:
        cmd += ["--input", f]
    cmd += ["--pipeline", pipeline]
    if "apply-db" in pipeline:
        cmd += ["--db", args.db]
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    m = re.search(r"run ([0-9.]+) ms \(median of", r.stdout)
    if r.returncode != 0 or not m:
        sys.stderr.write("bench_net: %s failed (exit %d):\n%s%s" % (
            " ".join(cmd), r.returncode, r.stdout[-2000:], r.stderr[-2000:]))
        return None, wall
    return float(m.group(1)), wall


def ms(t):
    return "%.3f" % t if t >= 1 else "%.3g" % t


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--loom", default=os.path.join(ROOT, "build", "loom"))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--short-repeat", type=int, default=30,
                   help="runs where --repeat runs take under 100 ms each")
    p.add_argument("--threads", type=int, default=2, help="onnxruntime's intra_op_num_threads")
    p.add_argument("--db", help="a tuning database: adds the pipeline dispatch,apply-db,default")
    p.add_argument("--only", help="comma-separated names: resnet18, resnet18/16, mlp, ...")
    p.add_argument("--no-default", action="store_true",
                   help="leave out the pipeline default (the loops as written: minutes on ResNet-18)")
    p.add_argument("--out", help="where the models are written (kept); default a temporary folder")
    p.add_argument("--ort-time", nargs="+", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.ort_time:  # the onnxruntime side, in the virtual environment
        model, loom_out, *inputs = a.ort_time
        return ort_time(model, inputs, a.repeat, a.threads, loom_out)

    import numpy as np

    pipelines = ([] if a.no_default else ["default"]) + ["dispatch,default"] + (
        ["dispatch,apply-db,default"] if a.db else [])
    env, blas = openblas_env()
    py, version = ort_python(a.loom)
    tmp = tempfile.TemporaryDirectory()
    out = a.out or tmp.name
    os.makedirs(out, exist_ok=True)
    only = set(a.only.split(",")) if a.only else None
    print("# %s; onnxruntime %s, intra_op_num_threads=%d; %d CPUs; %s; "
          "median of %d runs (%d under 100 ms)"
          % (os.path.abspath(a.loom), version, a.threads, os.cpu_count(), blas, a.repeat,
             a.short_repeat))
    print()
    print("| model | batch | Loom pipeline | Loom ms | onnxruntime ms | ratio | rel diff "
          "| Loom wall s |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    start = time.perf_counter()
    rng = np.random.default_rng(1)
    for name, batch, make in networks(out):
        if only and name not in only and "%s/%d" % (name, batch) not in only:
            continue
        model = make()
        iname, shape = input_of(model)
        x = os.path.join(out, "%s_b%d_input.npy" % (name, batch))
        np.save(x, rng.standard_normal(shape).astype(np.float32))
        feed = ["%s=%s" % (iname, x)]
        for pipeline in pipelines:
            loom_dir = os.path.join(out, "loom_out")
            os.makedirs(loom_dir, exist_ok=True)
            loom_out = os.path.join(loom_dir, "output_0.npy")
            if os.path.exists(loom_out):
                os.remove(loom_out)
            repeat = a.repeat
            loom_ms, wall = run_loom(a, env, model, feed, pipeline, loom_dir, repeat)
            if loom_ms is not None and loom_ms < 100 and a.short_repeat > repeat:
                repeat = a.short_repeat
                loom_ms, wall = run_loom(a, env, model, feed, pipeline, loom_dir, repeat)
            r = subprocess.run([py, os.path.abspath(__file__), "--repeat", str(repeat),
                                "--threads", str(a.threads), "--ort-time", model,
                                loom_out] + feed, capture_output=True, text=True)
            if r.returncode != 0:
                sys.stderr.write("bench_net: onnxruntime failed on %s:\n%s" % (model, r.stderr))
                return 1
            ort_ms, rel = (float(v) for v in r.stdout.split())
            lm = ms(loom_ms) if loom_ms is not None else "failed"
            ratio = "%.3g" % (ort_ms / loom_ms) if loom_ms else "-"
            print("| %s | %d | %s | %s | %s | %s | %.2g | %.1f |"
                  % (name, batch, pipeline, lm, ms(ort_ms), ratio, rel, wall), flush=True)
    print()
    print("# wall time %.1f s" % (time.perf_counter() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
