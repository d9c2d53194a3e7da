#!/usr/bin/env bash
# The operator library through the command line: the list has at least 30
# entries; every operator's default program reads back, runs under the
# interpreter, and agrees between the C backend and the interpreter
# (loom run --verify); usage errors exit 2; and operators built with the
# shapes of TVM's own programs (../shared/conformance) are structurally
# equal to them.
#   usage: ops.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

"$loom" op --list >"$tmp/list" || bad "op --list exits $?"
n=$(wc -l <"$tmp/list")
[ "$n" -ge 30 ] && ok || bad "op --list has $n entries, fewer than 30"

while read -r name _; do
  if ! "$loom" op "$name" >"$tmp/$name.py" 2>"$tmp/err"; then
    bad "op $name: $(cat "$tmp/err")"; continue; fi
  "$loom" fmt "$tmp/$name.py" >"$tmp/$name.fmt" 2>"$tmp/err" && ok ||
    bad "fmt $name: $(cat "$tmp/err")"
  "$loom" equal "$tmp/$name.py" "$tmp/$name.fmt" >/dev/null 2>&1 && ok ||
    bad "op $name does not read back equal"
  "$loom" interp "$tmp/$name.py" >/dev/null 2>"$tmp/err" && ok ||
    bad "interp $name: $(cat "$tmp/err")"
  "$loom" run "$tmp/$name.py" --repeat 1 --verify >"$tmp/run" 2>"$tmp/err" &&
    grep -q "verify: ok" "$tmp/run" && ok ||
    bad "run --verify $name: $(cat "$tmp/run" "$tmp/err")"
done <"$tmp/list"

expect_exit() { # want command...
  local want=$1; shift
  "$@" >/dev/null 2>"$tmp/err"; local got=$?
  [ "$got" = "$want" ] && ok || bad "$* exits $got, expected $want"
}
expect_exit 2 "$loom" op no_such_op
grep -q "loom op --list" "$tmp/err" && ok || bad "unknown operator message"
expect_exit 2 "$loom" op matmul Q=3
grep -q "its keys are: M, N, K" "$tmp/err" && ok || bad "unknown key message"
expect_exit 2 "$loom" op matmul M=abc
expect_exit 2 "$loom" op matmul M=0
expect_exit 2 "$loom" op matmul layout=XY
expect_exit 2 "$loom" op conv2d groups=3
expect_exit 2 "$loom" op conv3d stride=1,2
grep -q "stride takes 1 or 3 values" "$tmp/err" && ok || bad "per-dimension key message"
expect_exit 2 "$loom" op conv2d pad=1,2,3
expect_exit 2 "$loom" op conv3d D=2 R=3,3,3 pad=0
expect_exit 2 "$loom" op conv2d W=x
expect_exit 2 "$loom" op matmul dtype=float32x4
expect_exit 2 "$loom" op reshape new_shape=5,5
expect_exit 2 "$loom" op add a_shape=3,4 b_shape=5,4
expect_exit 2 "$loom" op pad value=300 dtype=uint8
expect_exit 2 "$loom" op
expect_exit 2 "$loom" op matmul M

# Conformance: the operator, with the shapes of TVM's program, against it.
conf=$root/../shared/conformance/programs
matched=0 total=0
if [ -d "$conf" ]; then
  while read -r file args; do
    [ -z "$file" ] && continue
    total=$((total + 1))
    # shellcheck disable=SC2086
    if "$loom" op $args >"$tmp/c.py" 2>"$tmp/err" &&
       "$loom" equal "$tmp/c.py" "$conf/$file.py" >"$tmp/eq" 2>&1; then
      matched=$((matched + 1)); ok
    else bad "conformance $file: $(cat "$tmp/err" "$tmp/eq")"; fi
  done <<'LIST'
dense dense M=64 N=128 K=256
batch_matmul batch_matmul B=4 M=64 N=48 K=32
conv1d_ncw conv1d N=1 C=16 H=64 K=32 R=3
conv2d_nchw conv2d N=1 C=64 H=28 K=64 R=3
conv2d_nchw_dilated conv2d N=1 C=16 H=32 K=32 R=3 pad=0 dilation=2
depthwise_conv2d_nhwc depthwise_conv2d N=1 C=32 H=28 R=3 stride=2 pad=1
max_pool2d max_pool2d shape=1,32,28,28
global_avg_pool2d global_avg_pool2d shape=1,64,7,7
log_softmax log_softmax shape=16,100
layer_norm layer_norm shape=4,32,64
relu relu shape=1,64,14,14
tanh tanh shape=32,32
cast cast shape=64,64
add_broadcast add a_shape=32,1,16 b_shape=8,16
pad pad shape=1,3,16,16
conv2d_transpose_nchw conv2d_transpose C=16 H=14 K=8 R=4 stride=2 pad=1
max_all max shape=16,32 axis=all
prod_int32 prod shape=8,16
argmin_keepdims argmin shape=50,20 axis=0 keepdims=1
conv3d_ndhwc conv3d N=1 C=8 D=8 H=16 W=16 K=16 R=3 pad=1 layout=NDHWC
LIST
  echo "conformance: $matched of $total operators equal to TVM's programs"
fi

echo "ops.sh: $pass passed, $fail failed"
[ "$fail" = 0 ]
