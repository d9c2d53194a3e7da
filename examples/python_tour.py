# A tour of Loom from Python, in notebook cells (`# %%`): read a TensorIR
# program, schedule it by hand, build it and check it against NumPy, tune
# it, apply the best record and compare the timings.
#
#   make && pip install ./python
#   python examples/python_tour.py

# %%
import os
import tempfile
import time

import numpy as np

import loom

# The ML compilation course's first example, pasted as TVM users write it:
# a matmul followed by a ReLU, with an intermediate buffer Y.
MM_RELU = '''
import tvm
from tvm.script import tir as T


@tvm.script.ir_module
class MyModule:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"),
                B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), dtype="float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                vk = T.axis.reduce(128, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''

mod = loom.read(MM_RELU)
mod.show()
print(mod.signature)

# %% [markdown]
# Scheduling by hand: the primitives of Loom's schedule scripts are methods
# of `loom.Schedule`. Each returns the blocks, loops or values it makes.

# %%
sch = loom.Schedule(mod)
block_Y = sch.get_block("Y", func_name="mm_relu")
i, j, k = sch.get_loops(block_Y)
j0, j1 = sch.split(j, factors=[None, 4])
sch.reorder(j0, k, j1)
block_C = sch.get_block("C", func_name="mm_relu")
sch.reverse_compute_at(block_C, j0)
sch.decompose_reduction(block_Y, k)
sch.vectorize(j1)

sch.trace.show()
by_hand = sch.mod
by_hand.show()

# %% [markdown]
# Building for this CPU and checking against NumPy. The output buffer C may
# be left out: it is allocated and returned.

# %%
rng = np.random.default_rng(0)
a = rng.standard_normal((128, 128)).astype("float32")
b = rng.standard_normal((128, 128)).astype("float32")
expected = np.maximum(a @ b, 0)

original_exe = loom.build(mod)
by_hand_exe = loom.build(by_hand)
for exe in (original_exe, by_hand_exe):
    np.testing.assert_allclose(exe(a, b), expected, rtol=1e-4, atol=1e-4)
print("both agree with NumPy")

# %% [markdown]
# Tuning: the CPU rules' design spaces, searched for a few trials, every
# measurement recorded in a database (here in a temporary directory).

# %%
out_dir = tempfile.mkdtemp(prefix="loom-tour-")
db = os.path.join(out_dir, "loom.db")
results = loom.tune(mod, trials=32, db=db, seed=0)
for r in results:
    print("%s: %.4f ms tuned, %.4f ms as written (%.1fx), %.1f GFLOP/s"
          % (r.task, r.best_ms, r.baseline_ms, r.baseline_ms / r.best_ms, r.gflops))

# %% [markdown]
# Applying the records rewrites each function into its best schedule.

# %%
tuned = loom.apply(mod, db=db)
tuned_exe = loom.build(tuned)
np.testing.assert_allclose(tuned_exe(a, b), expected, rtol=1e-4, atol=1e-4)
print("the tuned module agrees with NumPy")

# %%
def best_time_ms(fn, *args, calls=20):
    fn(*args)  # warm up
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


c = np.empty((128, 128), dtype="float32")
for name, exe in [("as written", original_exe), ("by hand", by_hand_exe),
                  ("tuned", tuned_exe)]:
    print("%-10s %8.3f ms" % (name, best_time_ms(exe, a, b, c)))
print("%-10s %8.3f ms" % ("numpy", best_time_ms(lambda: np.maximum(a @ b, 0))))

# %% [markdown]
# The tuning curve: the best time found after each measured batch (saved
# as a PNG in the output directory when matplotlib is installed).

# %%
try:
    import matplotlib
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed: no plot")

if plt is not None:
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for r in results:
        # From the function as written, at no trials.
        trials = [0] + [h[0] for h in r.history]
        best = [r.baseline_ms] + [h[2] for h in r.history]
        ax.plot(trials, best, marker="o", label=r.task)
    ax.set_yscale("log")
    ax.set_xlabel("trials")
    ax.set_ylabel("best time (ms)")
    ax.set_title("tuning mm_relu")
    ax.legend()
    fig.tight_layout()
    png = os.path.join(out_dir, "tuning_curve.png")
    fig.savefig(png)
    print("tuning curve:", png)
