#!/usr/bin/env bash
# topi calls in TE scripts: each topi function the operator library has a
# counterpart for, called on placeholders, gives TensorIR structurally equal
# to `loom op` of that operator with the same shapes, and agrees between the
# C backend and the interpreter (loom run --verify); a script mixing
# te.compute stages and topi calls runs; unknown functions and bad arguments
# are reported at FILE:LINE:COL with exit 1.
#   usage: topi.sh LOOM SOURCE_ROOT
set -u
loom=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# Each case: loom op arguments | placeholders NAME=SHAPE[:DTYPE] | the call.
n=0
while IFS='|' read -r op inputs call; do
  [ -z "$op" ] && continue
  n=$((n + 1))
  f=$tmp/case$n.py
  {
    echo "from tvm import te, topi"
    names=""
    for p in $inputs; do
      name=${p%%=*} rest=${p#*=}
      shape=${rest%%:*} dtype=float32
      case $rest in *:*) dtype=${rest#*:} ;; esac
      echo "$name = te.placeholder(($shape,), name=\"$name\", dtype=\"$dtype\")"
      names="$names$name, "
    done
    echo "Y = $call"
    echo "te.create_prim_func([${names}Y])"
  } >"$f"
  # shellcheck disable=SC2086
  if ! "$loom" op $op >"$tmp/op.py" 2>"$tmp/err"; then
    bad "op $op: $(cat "$tmp/err")"; continue; fi
  if ! "$loom" te "$f" >"$tmp/te.py" 2>"$tmp/err"; then
    bad "te $call: $(cat "$tmp/err")"; continue; fi
  "$loom" equal "$tmp/te.py" "$tmp/op.py" >"$tmp/eq" 2>&1 && ok ||
    bad "$call differs from op $op: $(cat "$tmp/eq")"
  "$loom" run "$tmp/te.py" --repeat 1 --verify >"$tmp/run" 2>"$tmp/err" &&
    grep -q "verify: ok" "$tmp/run" && ok ||
    bad "run --verify $call: $(cat "$tmp/run" "$tmp/err")"
done <<'CASES'
relu shape=2,8,6|A=2,8,6|topi.nn.relu(A)
sigmoid shape=3,5|A=3,5|topi.sigmoid(A)
tanh shape=3,5|A=3,5|topi.tanh(A)
exp shape=3,5|A=3,5|topi.exp(A)
cast shape=8,8 out_dtype=float16|A=8,8|topi.cast(A, "float16")
add a_shape=4,1,16 b_shape=8,16|A=4,1,16 B=8,16|topi.add(A, B)
subtract a_shape=3,5 b_shape=5|A=3,5 B=5|topi.subtract(A, B)
multiply a_shape=3,5 b_shape=3,5|A=3,5 B=3,5|topi.multiply(A, B)
divide a_shape=3,5 b_shape=3,1|A=3,5 B=3,1|topi.divide(A, B)
maximum a_shape=2,3 b_shape=2,3|A=2,3 B=2,3|topi.maximum(A, B)
minimum a_shape=2,3 b_shape=2,3|A=2,3 B=2,3|topi.minimum(A, B)
matmul M=6 N=5 K=7 layout=NT|A=6,7 B=5,7|topi.nn.matmul(A, B, transpose_b=True)
matmul M=6 N=5 K=7 layout=TN bias=1|A=7,6 B=7,5 bias=5|topi.nn.matmul(A, B, bias=bias, transpose_a=True)
dense M=4 N=6 K=8|A=4,8 W=6,8|topi.nn.dense(A, W)
batch_matmul B=2 M=3 N=4 K=5|A=2,3,5 B=2,4,5|topi.nn.batch_matmul(A, B)
conv1d C=3 H=11 K=4 R=3 stride=2 pad=1|A=1,3,11 W=4,3,3|topi.nn.conv1d_ncw(A, W, 2, 1, 1)
conv1d C=3 H=11 K=4 R=3 stride=2 pad=1 layout=NWC|A=1,11,3 W=3,3,4|topi.nn.conv1d_nwc(A, W, 2, 1, 1)
conv2d C=4 H=9 W=7 K=6 R=3,2 stride=2,1 pad=1,0,1,1 dilation=1,2 groups=2|A=1,4,9,7 W=6,2,3,2|topi.nn.group_conv2d_nchw(A, W, (2, 1), (1, 0, 1, 1), (1, 2), 2)
conv2d C=3 H=8 K=5 R=3 layout=NHWC|A=1,8,8,3 W=3,3,3,5|topi.nn.conv2d_nhwc(A, W, 1, 1, 1)
conv2d N=2 C=3 H=7 W=6 K=4 R=3 pad=0|A=2,3,7,6 W=4,3,3,3|topi.nn.conv2d(A, W, 1, 0, 1, data_layout="NCHW")
conv2d C=3 H=8 K=4 R=3 dtype=float16 out_dtype=float32|A=1,3,8,8:float16 W=4,3,3,3:float16|topi.nn.conv2d_nchw(A, W, 1, 1, 1, out_dtype="float32")
conv3d C=3 D=4 H=6 W=5 K=4 R=3,2,3 stride=1,2,1 pad=1,0,1,1,1,0 layout=NDHWC|A=1,4,6,5,3 W=3,2,3,3,4|topi.nn.conv3d_ndhwc(A, W, (1, 2, 1), (1, 0, 1, 1, 1, 0), 1)
conv3d C=2 D=5 H=4 W=6 K=3 R=2 dilation=2,1,1 pad=1|A=1,2,5,4,6 W=3,2,2,2,2|topi.nn.conv3d_ncdhw(A, W, 1, 1, (2, 1, 1))
depthwise_conv2d C=8 H=10 R=3 layout=NHWC|A=1,10,10,8 W=3,3,8,1|topi.nn.depthwise_conv2d_nhwc(A, W, 1, 1, 1)
depthwise_conv2d C=6 H=9 W=7 R=3 stride=2 layout=NCHW|A=1,6,9,7 W=6,1,3,3|topi.nn.depthwise_conv2d_nchw(A, W, 2, 1, 1)
conv2d_transpose C=4 H=6 K=4 R=4 stride=2 pad=1|A=1,4,6,6 W=4,4,4,4|topi.nn.conv2d_transpose_nchw(A, W, (2, 2), (1, 1), "float32", (0, 0))
max_pool2d shape=1,4,10,10 kernel=3 stride=2 pad=1|A=1,4,10,10|topi.nn.pool2d(A, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
avg_pool2d shape=1,4,9,9 kernel=2 stride=2 pad=0|A=1,4,9,9|topi.nn.pool2d(A, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "avg")
global_avg_pool2d shape=1,8,7,7|A=1,8,7,7|topi.nn.global_pool(A, "avg")
sum shape=8,32 axis=1|A=8,32|topi.sum(A, axis=1)
sum shape=5,6 axis=all|A=5,6|topi.sum(A)
max shape=5,6 axis=0|A=5,6|topi.max(A, axis=[0])
min shape=5,6 axis=-1|A=5,6|topi.min(A, axis=-1)
prod shape=3,4 axis=-1 dtype=int32|A=3,4:int32|topi.prod(A, axis=-1)
argmax shape=8,31 axis=-1|A=8,31|topi.argmax(A, axis=-1)
argmin shape=7,33 axis=0 keepdims=1|A=7,33|topi.argmin(A, axis=0, keepdims=True)
softmax shape=8,32 axis=-1|A=8,32|topi.nn.softmax(A)
log_softmax shape=6,9 axis=0|A=6,9|topi.nn.log_softmax(A, axis=0)
layer_norm shape=4,8,32|A=4,8,32 gamma=32 beta=32|topi.nn.layer_norm(A, gamma, beta, axis=[-1], epsilon=1e-5)
rms_norm shape=3,16 eps=1e-6|A=3,16 gamma=16|topi.nn.rms_norm(A, gamma, [1], 1e-6)
transpose shape=2,3,4 axes=2,0,1|A=2,3,4|topi.transpose(A, (2, 0, 1))
reshape shape=4,6,8 new_shape=24,8|A=4,6,8|topi.reshape(A, (24, 8))
concatenate a_shape=4,8 b_shape=4,5 axis=1|A=4,8 B=4,5|topi.concatenate((A, B), axis=1)
pad shape=1,3,8,8 pad=0,0,1,1|A=1,3,8,8|topi.nn.pad(A, (0, 0, 1, 1), (0, 0, 1, 1), 0.0)
CASES

# A script mixing stages: the library's blocks and te.compute's, in order.
cat >"$tmp/mix.py" <<'PY'
from tvm import te, topi
A = te.placeholder((1, 3, 9, 9), name="A")
W = te.placeholder((4, 3, 3, 3), name="W")
C = topi.nn.conv2d_nchw(A, W, stride=2, padding=1, dilation=1)
B = te.compute(C.shape, lambda n, c, h, w: C[n, c, h, w] * 2.0, name="B")
S = topi.nn.softmax(topi.nn.relu(B), axis=1)
M = topi.argmax(S, axis=1, keepdims=True)
te.create_prim_func([A, W, M])
PY
if "$loom" te "$tmp/mix.py" >"$tmp/mix.tir" 2>"$tmp/err"; then
  blocks=$(grep -o 'T.block("[A-Za-z_0-9]*")' "$tmp/mix.tir" | tr '\n' ' ')
  want='T.block("root") T.block("pad_temp") T.block("conv2d_nchw") T.block("B") T.block("compute") T.block("T_softmax_maxelem") T.block("T_softmax_exp") T.block("T_softmax_expsum") T.block("T_softmax_norm") T.block("T_softmax_norm_red_temp") T.block("T_softmax_norm_red") '
  [ "$blocks" = "$want" ] && ok || bad "mixed script blocks: $blocks"
  "$loom" run "$tmp/mix.tir" --repeat 1 --verify >"$tmp/run" 2>"$tmp/err" &&
    grep -q "verify: ok" "$tmp/run" && ok || bad "mixed script: $(cat "$tmp/run" "$tmp/err")"
else
  bad "mixed script: $(cat "$tmp/err")"
fi

expect_error() { # description expected-location-regex message-regex script
  printf '%s\n' "$4" >"$tmp/bad.py"
  "$loom" te "$tmp/bad.py" >/dev/null 2>"$tmp/err"; local got=$?
  if [ "$got" != 1 ]; then bad "$1: exit $got, expected 1"; return; fi
  grep -Eq "bad.py:$2: error: .*$3" "$tmp/err" && ok || bad "$1: $(cat "$tmp/err")"
}
expect_error "unknown function" "3:5" "known here are: nn.relu, .*nn.conv2d_nhwc" 'from tvm import te, topi
A = te.placeholder((4, 4), name="A")
B = topi.nn.gelu(A)'
expect_error "inner sizes" "4:5" "do not multiply" 'from tvm import te, topi
A = te.placeholder((4, 5), name="A")
B = te.placeholder((4, 5), name="B")
C = topi.matmul(A, B)'
expect_error "symbolic" "4:5" "symbolic extent" 'from tvm import te, topi
n = te.var("n")
A = te.placeholder((n, 5), name="A")
B = topi.nn.relu(A)'
expect_error "keyword" "3:5" "no parameter axes=" 'from tvm import te, topi
A = te.placeholder((4, 5), name="A")
B = topi.nn.softmax(A, axes=1)'
expect_error "out_dtype" "4:5" "out_dtype=float16 differs" 'from tvm import te, topi
A = te.placeholder((2, 8), name="A")
W = te.placeholder((4, 8), name="W")
B = topi.nn.dense(A, W, out_dtype="float16")'
expect_error "library check" "3:5" "topi.nn.pool2d: max_pool2d: " 'from tvm import te, topi
A = te.placeholder((1, 3, 8, 8), name="A")
B = topi.nn.pool2d(A, (3, 3), (1, 1), (1, 1), (3, 3, 3, 3), "max")'

echo "topi.sh: $pass passed, $fail failed ($n cases)"
[ "$fail" = 0 ]
