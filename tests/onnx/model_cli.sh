#!/usr/bin/env bash
# `loom model import` and `loom model run`: an imported MLP and conv net
# print, read back and print the same; run compiled, they match the
# interpreter (--verify) and, given the inputs the cases were made with, the
# NumPy results make_cases.py stored; bad models and inputs are errors with
# their reasons.
#   usage: model_cli.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
cases=$root/tests/onnx/cases
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # description condition-command...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $what"; fi
}
# `loom model run` gives a model's convolutions, pools and products by
# its weights to oneDNN. Under AddressSanitizer such a run cannot end with
# a leak check: LeakSanitizer's tracer crashes on the dynamic TLS of
# oneDNN's threads (resnet_ort.sh says more), so the runs are checked for
# the other errors only.
lsan=
ldd "$loom" | grep -q libasan && lsan="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
run_model() { # MODEL-FILE args...
  env $lsan "$loom" model run "$@"
}

for m in mlp convnet math; do
  "$loom" model import "$cases/$m.onnx" >"$tmp/$m.py"
  check "$m imports" test -s "$tmp/$m.py"
  "$loom" fmt "$tmp/$m.py" >"$tmp/$m.2.py"
  check "$m prints as it reads" cmp -s "$tmp/$m.py" "$tmp/$m.2.py"
  check "$m runs and verifies" run_model "$cases/$m.onnx" --verify
  check "$m as a module runs and verifies" run_model "$tmp/$m.py" --verify
done

# The stored inputs give the stored NumPy outputs (Debian's python3-onnx
# reads the .pb files; without it this part is skipped).
py=/usr/bin/python3
if "$py" -c "from onnx import numpy_helper; import numpy" 2>/dev/null; then
  for m in mlp convnet; do
    "$py" - "$cases" "$m" "$tmp" <<'PY'
import sys, numpy as np, onnx
from onnx import numpy_helper
cases, m, tmp = sys.argv[1:]
def load(path):
    t = onnx.TensorProto()
    t.ParseFromString(open(path, "rb").read())
    return numpy_helper.to_array(t)
np.save("%s/%s_in.npy" % (tmp, m), load("%s/%s_input_0.pb" % (cases, m)))
np.save("%s/%s_want.npy" % (tmp, m), load("%s/%s_output_0.pb" % (cases, m)))

PY
    name=$("$py" -c "import onnx; print(onnx.load('$cases/$m.onnx').graph.input[0].name)")
    mkdir -p "$tmp/$m.out"
    run_model "$cases/$m.onnx" --input "$name=$tmp/${m}_in.npy" --output "$tmp/$m.out" >/dev/null
    check "$m matches NumPy" "$py" -c "
import numpy as np, sys
got, want = np.load('$tmp/$m.out/output_0.npy'), np.load('$tmp/${m}_want.npy')
sys.exit(0 if np.allclose(got, want, rtol=1e-4, atol=1e-4) else 1)"
  done
else
  echo "model_cli: python3-onnx missing: the NumPy comparison is skipped"
fi

# Tuned end to end: the imported module's tasks tuned into a database, whose
# records the model's run applies through the pipeline (the products to
# BLAS first), checked against the interpreter.
"$loom" tune "$tmp/mlp.py" --trials 4 --model random --db "$tmp/t.db" >"$tmp/tune.out" 2>/dev/null
check "the imported module tunes" grep -q "^fused_gemm_relu: best" "$tmp/tune.out"
run_model "$cases/mlp.onnx" --pipeline dispatch,apply-db,default --db "$tmp/t.db" \
  --explain --verify >"$tmp/run.out" 2>"$tmp/explain"
check "the pipeline's run verifies" grep -q "verified: 1 output" "$tmp/run.out"
check "dispatch takes the products" test "$(grep -Ec "^(gemm2|fused_gemm1?_relu1?) +dispatch" "$tmp/explain")" = 3
run_model "$cases/mlp.onnx" --db "$tmp/t.db" --explain --verify >"$tmp/run2.out" \
  2>"$tmp/explain2"
check "--db alone applies the records, then the libraries" \
  grep -Eq "^fused_gemm_relu +apply-db" "$tmp/explain2"
check "--db alone verifies" grep -q "verified: 1 output" "$tmp/run2.out"
run_model "$cases/mlp.onnx" --explain >"$tmp/fused" 2>&1
check "--explain alone lists the fused functions" \
  grep -q "^fused_gemm_relu: gemm (out-elementwise-fusable), relu (elementwise)" "$tmp/fused"
check "no --pipeline: the libraries take the products" \
  test "$(grep -Ec "^(gemm2|fused_gemm1?_relu1?) +dispatch" "$tmp/fused")" = 3
run_model "$cases/mlp.onnx" --pipeline default --explain >"$tmp/plain" 2>&1
check "--pipeline default: every function as written" \
  test "$(grep -Ec "^(gemm2|fused_gemm1?_relu1?) +default" "$tmp/plain")" = 3
"$loom" import "$cases/mlp.onnx" >"$tmp/imported.py"
check "loom import is loom model import" cmp -s "$tmp/imported.py" "$tmp/mlp.py"

# Fusion: on by default (each Gemm takes its ReLU, each convolution its
# batch norm, ReLU and residual add); --no-fuse keeps an operator a call.
check "the fused MLP has no ReLU of its own" test "$(grep -c 'def relu' "$tmp/mlp.py")" = 0
"$loom" model import --no-fuse "$cases/mlp.onnx" >"$tmp/mlp_unfused.py"
check "--no-fuse keeps the ReLUs" test "$(grep -c 'def relu' "$tmp/mlp_unfused.py")" = 2
as_read="--layout NCHW --fold-bn off"
run_model "$cases/convnet.onnx" $as_read --verify >"$tmp/fused.out"
run_model "$cases/convnet.onnx" $as_read --no-fuse --verify >"$tmp/unfused.out"
check "the conv net fused is 7 calls" grep -q "^7 calls of 7 functions" "$tmp/fused.out"
check "the conv net unfused is 14 calls" grep -q "^14 calls of 11 functions" "$tmp/unfused.out"

# Run on a CPU, a model is read to be fast: each batch norm folded into its
# convolution, the activations NHWC between a transpose in and one out.
run_model "$cases/convnet.onnx" --verify --explain >"$tmp/fast.out" 2>&1
check "read to be fast, the conv net is 8 calls" grep -q "^8 calls of 8 functions" "$tmp/fast.out"
check "its convolutions take no batch norm" \
  test "$(grep -Ec '^fused_conv2d1?(_add)?_relu1? +dispatch' "$tmp/fast.out")" = 3
check "it verifies" grep -q "verified: 1 output" "$tmp/fast.out"
"$loom" model import "$cases/convnet.onnx" --layout NHWC --fold-bn on --no-fuse >"$tmp/nhwc.py"
check "import --layout NHWC: HWIO weights, folded" grep -q "c1_w_folded_hwio" "$tmp/nhwc.py"
check "import --layout NHWC: the result back in NCHW" \
  grep -q "R.call_tir(cls.transpose1, (lv9,), out_sinfo=R.Tensor((1, 8, 1, 1)" "$tmp/nhwc.py"
"$loom" model import "$cases/convnet.onnx" --layout NCWH >/dev/null 2>"$tmp/err"
check "an unknown layout is a usage error" test $? = 2
check "it names the layouts" grep -q "unknown layout 'NCWH' (NCHW or NHWC)" "$tmp/err"
check "the weights are marked constant" \
  grep -q '"layout_free_buffers": \[1, 2, 3, 4, 5, 6\]' "$tmp/convnet.py"
"$loom" build "$tmp/convnet.py" --emit c --pipeline dispatch >"$tmp/convnet.c"
check "oneDNN keeps the constant weights reordered" \
  test "$(grep -c 'loom_dnnl_conv_run(&c, x, w, y, b, src1, 1)' "$tmp/convnet.c")" = 3
check "fused and unfused outputs agree" \
  test "$(grep '^output' "$tmp/fused.out")" = "$(grep '^output' "$tmp/unfused.out")"

# loom model tune: one budget across the network's tasks, equal workloads
# once (unfused, the conv net's second and third convolutions are one task
# of two calls), the records applied by the run.
"$loom" model tune "$cases/mlp.onnx" --trials 24 --batch 8 --model random \
  --db "$tmp/m.db" >"$tmp/mtune.out" 2>/dev/null
check "model tune tunes the MLP" grep -q "^3 tasks of 3 calls, 2[0-4] trials" "$tmp/mtune.out"
check "model tune reports each task" \
  grep -Eq "^fused_gemm1_relu1: 1 call, [0-9]+ trials in [0-9]+ rounds, best" "$tmp/mtune.out"
run_model "$cases/mlp.onnx" --pipeline apply-db,default --db "$tmp/m.db" --explain \
  --verify >"$tmp/mrun.out" 2>"$tmp/mexplain"
check "the tuned network verifies" grep -q "verified: 1 output" "$tmp/mrun.out"
check "its records apply" test "$(grep -Ec '^[a-z0-9_]+ +apply-db' "$tmp/mexplain")" = 3
"$loom" model tune "$cases/convnet.onnx" $as_read --no-fuse --trials 12 --batch 2 --model random --json \
  --db "$tmp/c.db" >"$tmp/ctune.out" 2>/dev/null
check "a workload called twice is one task of weight 2" \
  grep -q '"task": "conv2d1", "calls": 2' "$tmp/ctune.out"
check "the budget holds" test "$(grep -o '"trials": [0-9]*' "$tmp/ctune.out" |
  awk '{s += $2} END {print s}')" -le 12
"$loom" model tune "$cases/convnet.onnx" $as_read --skip-dispatched --trials 6 --batch 2 --model random \
  --db "$tmp/s.db" >"$tmp/stune.out" 2>/dev/null
check "--skip-dispatched leaves the convolutions, the pool and the classifier to oneDNN" \
  test "$(grep -c 'taken by dispatch (1 loop nest(s) computed by oneDNN), not tuned' "$tmp/stune.out")" = 5
check "--skip-dispatched tunes the rest" grep -q "^2 tasks of 2 calls" "$tmp/stune.out"
"$loom" model tune "$cases/mlp.onnx" --strategy fast --topk 4 --model random \
  --db "$tmp/f.db" >"$tmp/ftune.out" 2>/dev/null
check "fast model tuning on a CPU: each task's first four" \
  grep -q "^3 tasks of 3 calls, 12 trials" "$tmp/ftune.out"

# A symbolic dimension given its value on the command line.
"$loom" model run "$cases/dynamic_shape.onnx" --dim batch=6 --verify >"$tmp/dim.out" 2>&1
check "--dim: the model runs at the batch given" grep -q "float32(6, 3)" "$tmp/dim.out"
check "--dim: and verifies" grep -q "verified: 1 output" "$tmp/dim.out"
"$loom" model run "$cases/dynamic_shape.onnx" >/dev/null 2>"$tmp/err"
check "no --dim: exit 1" test $? = 1
check "no --dim: the option named" grep -q "give it a value (loom model: --dim batch=N)" "$tmp/err"
"$loom" model run "$cases/dynamic_shape.onnx" --dim batch=x >/dev/null 2>"$tmp/err"
check "--dim without a number: exit 2" test $? = 2

# Half precision: --dtype float16 reads a float32 model's tensors as
# float16; run, its products sum in float32 (one rounding after the bias),
# imported, in float16 as TVM's frontend builds them unless asked.
run_model "$cases/convnet.onnx" --dtype float16 --verify >"$tmp/f16.out" 2>&1
check "--dtype float16: the conv net runs in float16" grep -q "^output 0: float16(" "$tmp/f16.out"
check "--dtype float16: and verifies" grep -q "verified: 1 output" "$tmp/f16.out"
check "--dtype float16: the products of misc (1-D, batched, broadcast) verify" \
  run_model "$cases/misc.onnx" --dtype float16 --verify
"$loom" model import "$cases/convnet.onnx" --dtype float16 --no-fuse >"$tmp/f16.py"
check "import --dtype float16: the weights are float16" \
  grep -q 'c1_w: R.Tensor((8, 3, 3, 3), dtype="float16")' "$tmp/f16.py"
check "import --dtype float16: the convolutions sum in float16" \
  test "$(grep -c 'T.Cast("float32"' "$tmp/f16.py")" = 0
"$loom" model import "$cases/convnet.onnx" --dtype bfloat16 --accumulate float32 --no-fuse >"$tmp/bf16.py"
check "import --accumulate float32: the convolutions and the classifier sum in float32" \
  test "$(grep -c '= T.Cast("bfloat16", T_add\[' "$tmp/bf16.py")" = 3
"$loom" model run "$cases/convnet.onnx" --dtype float64 >/dev/null 2>"$tmp/err"
check "--dtype float64: a usage error" test $? = 2
check "--dtype names what it takes" grep -q "\-\-dtype takes float16 or bfloat16, not 'float64'" "$tmp/err"
"$loom" model run "$cases/convnet.onnx" --accumulate half >/dev/null 2>"$tmp/err"
check "--accumulate half: a usage error" test $? = 2

# Errors: exit 1 with the reason.
"$loom" model import "$cases/unsupported_op.onnx" >/dev/null 2>"$tmp/err"
check "unsupported operator exits 1" test $? = 1
check "unsupported operator named" grep -q "operator not supported" "$tmp/err"
"$loom" model run "$cases/mlp.onnx" --input nope=/dev/null >/dev/null 2>"$tmp/err"
check "unknown input exits 1" test $? = 1
check "unknown input named" grep -q "no parameter of that name" "$tmp/err"
printf 'not a model' >"$tmp/bad.onnx"
"$loom" model run "$tmp/bad.onnx" >/dev/null 2>"$tmp/err"
check "a file that is not a model exits 1" test $? = 1
"$loom" model run "$cases/mlp.onnx" --input "x=$tmp/bad.onnx" >/dev/null 2>"$tmp/err"
check "a bad .npy exits 1" test $? = 1
check "a bad .npy named" grep -q "not a .npy file" "$tmp/err"
"$loom" model run "$root/examples/matmul_16.py" >/dev/null 2>"$tmp/err"
check "a module without a graph exits 1" test $? = 1
check "a module without a graph said" grep -q "no graph function" "$tmp/err"
"$loom" model frobnicate >/dev/null 2>&1
check "unknown action exits 2" test $? = 2

echo "model_cli: $pass passed, $fail failed"
[ $fail = 0 ]
