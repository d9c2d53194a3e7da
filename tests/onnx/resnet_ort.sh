#!/usr/bin/env bash
# ResNet-18 (tests/onnx/resnet.py: torchvision's network, random weights,
# BatchNormalization kept) at batch 2 and 64x64, run by `loom model run`
# on a random input three ways: fused and as written (the C backend's
# loops, --pipeline default), fused with the products and convolutions
# dispatched to BLAS and oneDNN (what it does by default), and unfused
# (--no-fuse, dispatched too); each output is compared with
# onnxruntime's on the same input: the largest difference,
# relative to the largest |onnxruntime|, must be under 1e-4 (float32 sums
# in another order differ by ~1e-6 here); and the network in float16,
# against onnxruntime's float32 output. onnxruntime and NumPy come from
# PyPI into a virtual environment in the build folder (ort-venv, made once
# and reused); without them (no network) the test is skipped. The model is
# written by Debian's python3-onnx; without it, skipped too.
#   usage: resnet_ort.sh LOOM SOURCE_ROOT
set -u
loom=$(realpath "$1") root=$(realpath "$2")
build=$(dirname "$loom")
venv=$build/ort-venv
tol=1e-4
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
skip() { echo "SKIP resnet_ort: $*"; exit 77; }

"$py" -c "from onnx import helper, numpy_helper; import numpy" 2>/dev/null ||
  skip "python3-onnx or python3-numpy missing from $py (run scripts/setup.sh)"
if ! "$venv/bin/python" -c "import onnxruntime, numpy" 2>/dev/null; then
  echo "resnet_ort: installing onnxruntime and numpy from PyPI into $venv"
  { "$py" -m venv "$venv" &&
    "$venv/bin/pip" install -q --retries 1 --timeout 20 onnxruntime numpy; } >&2 ||
    skip "onnxruntime and numpy could not be installed from PyPI into $venv"
fi

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$py" "$root/tests/onnx/resnet.py" --batch 2 --size 64 -o "$tmp/resnet18.onnx" || {
  echo "FAIL resnet.py did not write the model"; exit 1; }
"$venv/bin/python" -c "
import numpy as np
x = np.random.default_rng(1).standard_normal((2, 3, 64, 64)).astype(np.float32)
np.save('$tmp/input.npy', x)"

pass=0 fail=0
# check HOW MS GOT.npy TOL [MODEL INPUT]: Loom's output against
# onnxruntime's on the float32 model (its float32 input).
check() {
  if "$venv/bin/python" - "$tmp/resnet18.onnx" "$tmp/input.npy" "$3" "$1" "$4" "$2" <<'PY'
import sys

import numpy as np
import onnxruntime as ort

model, x, got, how, tol, ms = sys.argv[1:]
opts = ort.SessionOptions()
opts.intra_op_num_threads = 2
sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
want = sess.run(None, {"input": np.load(x)})[0]
got = np.load(got)
if got.shape != want.shape:
    print("FAIL %s: Loom's output is %s %s, onnxruntime's %s %s"
          % (how, got.dtype, got.shape, want.dtype, want.shape))
    sys.exit(1)
scale = float(np.abs(want).max())
diff = np.abs(got.astype(np.float64) - want)
worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape))
rel = float(diff.max()) / scale
ok = rel <= float(tol) and np.isfinite(got).all()
print("%s %s: largest difference %.3g at %s (Loom %.7g, onnxruntime %.7g), "
      "%.3g of max |onnxruntime| %.4g (tolerance %s); loom model run %.1f s"
      % ("ok  " if ok else "FAIL", how, diff.max(), worst, got[worst], want[worst],
         rel, scale, tol, int(ms) / 1e3))
sys.exit(0 if ok else 1)
PY
  then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

k=0
for how in "--pipeline default" "" "--no-fuse"; do
  k=$((k + 1))
  out=$tmp/out$k
  mkdir -p "$out"
  args=(--input "input=$tmp/input.npy" --output "$out" --repeat 1 $how)
  # Under AddressSanitizer, a run whose convolutions oneDNN computed cannot
  # end with a leak check: LeakSanitizer's tracer crashes on the dynamic TLS
  # of oneDNN's threads, and oneDNN's primitives, which the kernels keep in
  # static variables, are reported as leaks. Such a run is checked for the
  # other errors only.
  lsan=
  if [ "$how" != "--pipeline default" ] && ldd "$loom" | grep libasan >/dev/null; then
    lsan="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  fi
  start=$(date +%s%N)
  if ! env $lsan "$loom" model run "$tmp/resnet18.onnx" "${args[@]}" >"$tmp/run.out" 2>&1; then
    cat "$tmp/run.out"
    echo "FAIL loom model run ${how:-(fused, the libraries by default)}"
    fail=$((fail + 1))
    continue
  fi
  ms=$((($(date +%s%N) - start) / 1000000))
  check "${how:-(fused, the libraries by default)}" "$ms" "$out/output_0.npy" "$tol"
done

# The same network in float16, its products summed in float32, against
# onnxruntime's float32 output: within 3e-3 (onnxruntime's own float16 run
# is 8e-4 off; summed in float16, 5e-3), written in float16 (every tensor,
# as model.half() exports it) and converted at import (--dtype float16).
"$py" "$root/tests/onnx/resnet.py" --batch 2 --size 64 --dtype float16 \
  -o "$tmp/resnet18_f16.onnx" || { echo "FAIL resnet.py --dtype float16"; exit 1; }
"$venv/bin/python" -c "
import numpy as np
np.save('$tmp/input_f16.npy', np.load('$tmp/input.npy').astype(np.float16))"
for how in "resnet18_f16.onnx" "resnet18.onnx --dtype float16"; do
  mkdir -p "$tmp/out_f16"
  start=$(date +%s%N)
  # shellcheck disable=SC2086
  if "$loom" model run "$tmp/"$how --input "input=$tmp/input_f16.npy" \
       --output "$tmp/out_f16" --repeat 1 >"$tmp/run.out" 2>&1; then
    check "float16 ($how)" "$((($(date +%s%N) - start) / 1000000))" \
      "$tmp/out_f16/output_0.npy" 3e-3
  else
    cat "$tmp/run.out"; echo "FAIL loom model run $how"; fail=$((fail + 1))
  fi
done

echo "resnet_ort: $pass passed, $fail failed"
[ $fail = 0 ]
