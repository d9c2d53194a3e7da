"""Checks tests/interp/golden.txt against TVM: every function the golden file
says runs ("ok") is built by TVM (target llvm) and run on the inputs the
golden test gives it (Loom's generator, seed 1, reproduced here; scalar
parameters 6), and its parameter buffers afterwards must hash to the golden
checksum (FNV-1a of their bytes), or, where rounding differs, hold the same
values as `loom interp --dump` prints, within the float tolerances of
docs/tune.md. Needs apache-tvm and a built loom; from the repository root:
    python tests/interp/golden_tvm.py build/loom
Prints one line per function and exits 1 when any differs."""
import os
import re
import subprocess
import sys

import numpy as np
import tvm

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DIRS = {"script": "tests/script/cases", "interp": "tests/interp/cases",
        "corpus": "../shared/corpus"}
M64 = (1 << 64) - 1
SCALAR = 6


class Rng:
    """Loom's generator: xoshiro256** seeded through splitmix64."""

    def __init__(self, seed):
        self.s = []
        x = seed
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & M64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
            self.s.append(z ^ (z >> 31))

    def next(self):
        s = self.s
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, n):
        limit = M64 + 1 - (M64 + 1) % n
        while True:
            x = self.next()
            if x < limit:
                return x % n

    def double(self):
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)


def fill(dtype, n, rng):
    """The values loom_interp_fill_random gives n elements of dtype."""
    if dtype in ("float16", "float32", "float64", "bfloat16"):
        vals = [rng.double() * 2.0 - 1.0 for _ in range(n)]
        if dtype == "bfloat16":
            import ml_dtypes
            return np.array(vals, dtype=np.float64).astype(ml_dtypes.bfloat16)
        return np.array(vals, dtype=np.float64).astype(dtype)
    if dtype == "bool":
        return np.array([rng.below(2) for _ in range(n)], dtype="bool")
    if dtype.startswith("uint"):
        bits = int(dtype[4:])
        return np.array([rng.below(2 if bits == 1 else 16) for _ in range(n)], dtype=dtype)
    return np.array([rng.below(16) - 8 for _ in range(n)], dtype=dtype)


def fnv(arrays):
    h = 1469598103934665603
    for a in arrays:
        for byte in a.tobytes():
            h = ((h ^ byte) * 1099511628211) & M64
    return h


def run_tvm(func):
    """Parameter arrays after running func under TVM, and the inputs."""
    rng = Rng(1)
    args, arrays = [], []
    for p in func.params:
        # TVM 0.27's parameters are variables; a buffer's has a buffer type.
        if "BufferType" not in type(p.ty).__name__:
            args.append(SCALAR)
            continue
        shape = [int(x) if isinstance(x, (int, tvm.tirx.IntImm)) else SCALAR for x in p.shape]
        n = int(np.prod(shape)) if shape else 1
        a = fill(str(p.dtype), n, rng).reshape(shape)
        arrays.append(a)
        args.append(a)
    lib = tvm.compile(tvm.IRModule({"main": func.with_attr("global_symbol", "main")}),
                      target="llvm")
    dev = tvm.cpu()
    targs = [tvm.runtime.tensor(a, dev) if isinstance(a, np.ndarray) else a for a in args]
    lib["main"](*targs)
    return [t.numpy() for t in targs if not isinstance(t, int)]


def loom_values(loom, path, func):
    """The parameter buffers after `loom interp --dump`, in order, flat: whole,
    or the first values where the dump cuts a big one short ("[...]")."""
    out = subprocess.run([loom, "interp", path, "--func", func, "--seed", "1", "--dump"],
                         capture_output=True, text=True).stdout
    arrays = []
    for line in out.splitlines():
        if line.startswith(func + ".") and " = " in line:
            text = line.split(" = ", 1)[1]
            arrays.append(np.array([float(v) for v in re.findall(
                r"[-+]?(?:inf|nan|\d+\.?\d*(?:e[-+]?\d+)?)", text)]))
    return arrays


TOL = {"float32": 1e-4, "float64": 1e-9, "float16": 1e-2, "bfloat16": 2e-2}


def close(a, b, dtype):
    a = a.astype(np.float64).ravel()
    b = b.astype(np.float64).ravel()
    if dtype not in TOL:
        return np.array_equal(a, b)
    tol = TOL[dtype] * (np.abs(b) + np.abs(b).max(initial=0))
    return bool(np.all((np.abs(a - b) <= tol) | (np.isnan(a) & np.isnan(b))))


def main():
    loom = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "loom")
    golden = open(os.path.join(ROOT, "tests", "interp", "golden.txt")).read().splitlines()
    bad = 0
    for line in golden:
        if line.startswith("#"):
            continue
        name, func, status, checksum = line.split()[:4]
        if status != "ok":
            continue
        tag, file = name.split("/", 1)
        path = os.path.join(ROOT, DIRS[tag], file)
        if not os.path.exists(path):
            print("%s %s: absent" % (name, func))
            continue
        # TVM 0.27 reads only its own spelling: loom fmt prints it.
        text = subprocess.run([loom, "fmt", path, "--dialect", "tirx"], capture_output=True,
                              text=True).stdout
        try:
            mod = tvm.script.from_source(text)
        except Exception as e:  # noqa: BLE001
            print("%s %s: TVM cannot read it: %s" % (name, func, str(e).strip().splitlines()[0]))
            continue
        if isinstance(mod, tvm.tirx.PrimFunc):
            mod = tvm.IRModule({"main": mod})
        f = mod[func]
        try:
            got = run_tvm(f)
        except Exception as e:  # noqa: BLE001
            print("%s %s: TVM cannot run it: %s" % (name, func, str(e).strip().splitlines()[-1]))
            continue
        if "%016x" % fnv(got) == checksum:
            print("%s %s: same bytes as TVM" % (name, func))
            continue
        # Rounding may differ (TVM's exp is not the C library's): compare
        # the values, within the tolerance Loom's checks use.
        mine = [] if f.params and any("BufferType" not in type(p.ty).__name__
                                      for p in f.params) else loom_values(loom, path, func)
        if len(mine) == len(got) and all(
                0 < b.size <= a.size and close(b, a.ravel()[:b.size], str(a.dtype))
                for a, b in zip(got, mine)):
            cut = sum(b.size for b in mine) < sum(a.size for a in got)
            print("%s %s: same values as TVM, within the tolerance%s" %
                  (name, func, " (the values loom interp --dump prints)" if cut else ""))
            continue
        print("%s %s: DIFFERS from TVM" % (name, func))
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
