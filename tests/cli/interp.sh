#!/usr/bin/env bash
# `loom interp`: exit codes, --dump of a program with a known result, a
# runtime error reported as file:line:col: error:, and scalar parameters
# given with --arg.
#   usage: interp.sh LOOM SOURCE_ROOT
set -u
loom=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

expect() { # description expected-code command...
  local what=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if grep -Eq "Sanitizer|runtime error" "$tmp/err"; then
    fail=$((fail + 1)); echo "FAIL $what: sanitizer report"; cat "$tmp/err"
  elif [ "$got" = "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $what: exit $got, expected $want"; cat "$tmp/err"; fi
}
expect_in() { # description file regex
  if grep -Eq -- "$3" "$2"; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $1: $2 lacks /$3/:"; cat "$2"; fi
}

cat >"$tmp/ok.py" <<'PY'
# from tvm.script import tir as T
@T.prim_func
def main(A: T.Buffer((2, 3), "int32"), B: T.Buffer((2,), "float32")):
    for i, j in T.grid(2, 3):
        A[i, j] = i * 10 + j - 5
    B[0] = T.float32(1) / T.float32(3)
    B[1] = T.float32(0.5)
PY
cat >"$tmp/oob.py" <<'PY'
# from tvm.script import tir as T
@T.prim_func
def main(B: T.Buffer((100,), "float32")):
    for i in range(101):
        B[i] = T.float32(0)
PY

expect "no file" 2 "$loom" interp
expect "missing file" 2 "$loom" interp "$tmp/nope.py"
expect "unknown option" 2 "$loom" interp --bogus "$tmp/ok.py"
expect "bad seed" 2 "$loom" interp --seed x "$tmp/ok.py"
expect "--seed without value" 2 "$loom" interp "$tmp/ok.py" --seed
expect "unknown function" 1 "$loom" interp --func nope "$tmp/ok.py"

expect "run" 0 "$loom" interp "$tmp/ok.py"
expect_in "run prints ok" "$tmp/out" "^main: ok$"
expect "dump" 0 "$loom" interp "$tmp/ok.py" --dump --seed 3 --func main
expect_in "dump A" "$tmp/out" '^main\.A = \[\[-5, -4, -3\], \[5, 6, 7\]\]$'
expect_in "dump B" "$tmp/out" '^main\.B = \[0\.3333333432674408, 0\.5\]$'

expect "out of bounds" 1 "$loom" interp "$tmp/oob.py"
expect_in "oob location" "$tmp/err" "oob\.py:5:[0-9]+: error: out-of-bounds store to B\[100\] \(shape \(100,\)\)"

cat >"$tmp/scalar.py" <<'PY'
# from tvm.script import tir as T
@T.prim_func
def main(a: T.handle, n: T.int32, s: T.float32):
    A = T.match_buffer(a, (n,), "float32")
    for i in range(n):
        A[i] = T.Cast("float32", i) * s
PY

expect "scalar without --arg" 1 "$loom" interp "$tmp/scalar.py" --arg n=3
expect_in "names the parameter" "$tmp/err" "scalar parameter 's' of 'main' needs a value: pass --arg s=VALUE"
expect "scalar with --arg" 0 "$loom" interp "$tmp/scalar.py" --arg n=3 --arg s=3 --dump
expect_in "symbolic shape from --arg" "$tmp/out" '^main\.A = \[0, 3, 6\]$'
expect "unused --arg" 1 "$loom" interp "$tmp/scalar.py" --arg n=3 --arg s=1 --arg m=2
expect_in "unused --arg named" "$tmp/err" "no function run has a scalar parameter named 'm'"
expect "bad --arg" 2 "$loom" interp "$tmp/scalar.py" --arg n
expect "bad --arg value" 2 "$loom" interp "$tmp/scalar.py" --arg n=x
expect "--arg without value" 2 "$loom" interp "$tmp/scalar.py" --arg
expect "negative extent" 1 "$loom" interp "$tmp/scalar.py" --arg n=-1 --arg s=1

echo "interp.sh: $pass passed, $fail failed"
[ "$fail" = 0 ]
