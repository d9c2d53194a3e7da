#!/usr/bin/env bash
# The command-line contract: exit codes, the diagnostic format, --help.
#   usage: exit_codes.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

expect() { # description expected-code command...
  local what=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  # Sanitizers keep a non-zero exit code, so their reports are looked for.
  if grep -Eq "Sanitizer|runtime error" "$tmp/err"; then
    fail=$((fail + 1)); echo "FAIL $what: sanitizer report"; cat "$tmp/err"
  elif [ "$got" = "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $what: exit $got, expected $want"; cat "$tmp/err"; fi
}
expect_err() { # description regex (on stderr of the last expect)
  if grep -Eq "$2" "$tmp/err"; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $1: stderr lacks /$2/:"; cat "$tmp/err"; fi
}

expect "no arguments" 2 "$loom"
expect "--help" 0 "$loom" --help
grep -q "fmt" "$tmp/out" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL --help lists fmt"; }
expect "unknown command" 2 "$loom" frobnicate
expect "fmt without file" 2 "$loom" fmt
expect "fmt missing file" 2 "$loom" fmt "$tmp/nope.py"
expect "fmt unknown option" 2 "$loom" fmt --bogus "$root/examples/matmul.py"
expect "fmt bad dialect" 2 "$loom" fmt --dialect tvm "$root/examples/matmul.py"
expect "fmt example" 0 "$loom" fmt "$root/examples/matmul.py"
expect "equal one file" 2 "$loom" equal "$root/examples/matmul.py"
expect "equal itself" 0 "$loom" equal "$root/examples/matmul.py" "$root/examples/matmul.py"
expect "run on a target" 0 "$loom" run "$root/examples/matmul_16.py" --target "cpu -vector-bytes=16" --repeat 1
expect "run unknown target" 2 "$loom" run "$root/examples/matmul_16.py" --target gpu
expect_err "target diagnostic" "^<target>:1:1: error: unknown target 'gpu'"
# --against: the interpreter runs the program as written, so a schedule that
# changed the meaning is caught where the scheduled program's own
# interpretation would agree with it.
sed 's/T.float32(0.0)/T.float32(1.0)/' "$root/examples/matmul_16.py" >"$tmp/changed.py"
expect "run against itself" 0 "$loom" run "$tmp/changed.py" --verify --repeat 1
expect "run against the original" 1 "$loom" run "$tmp/changed.py" --verify --repeat 1 \
  --against "$root/examples/matmul_16.py"
expect_err "against message" "wrong result: C differs from the interpreter"
expect "run against another signature" 1 "$loom" run "$tmp/changed.py" --verify --repeat 1 \
  --against "$root/examples/matmul.py"
expect_err "signature message" "takes other parameters"
expect "run on a cuda target" 1 "$loom" run "$root/examples/matmul_16.py" --target "cuda -arch=sm_80"
expect_err "no GPU" "no GPU here"
expect "space on a cuda target" 0 "$loom" space "$root/examples/matmul_16.py" --target cuda

printf '@T.prim_func\ndef main(A: T.Buffer((4,), "float32")):\n    for i in range(4):\n        A[i] = A[i] +\n' >"$tmp/bad.py"
expect "syntax error" 1 "$loom" fmt "$tmp/bad.py"
expect_err "diagnostic format" "^$tmp/bad.py:4:[0-9]+: error: "
expect_err "caret line" '^ +\^$'

printf '\x00\x01\x02garbage\xff\n' >"$tmp/bin.py"
expect "binary garbage" 1 "$loom" fmt "$tmp/bin.py"
: >"$tmp/empty.py"
expect "empty file" 1 "$loom" fmt "$tmp/empty.py"
expect_err "empty file message" "error: .*prim_func"

sed 's/T.float32(0.0)/T.float32(1.0)/' "$root/examples/matmul.py" >"$tmp/m2.py"
expect "equal different" 1 "$loom" equal "$root/examples/matmul.py" "$tmp/m2.py"
grep -q "not equal" "$tmp/out" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL equal prints the difference"; cat "$tmp/out"; }

terms=$(for i in $(seq 1 1500); do printf 'A[%d] + ' $((i % 4)); done)
printf '@T.prim_func\ndef main(A: T.Buffer((4,), "float32")):\n    A[0] = %sA[0]\n' "$terms" >"$tmp/chain.py"
expect "long operator chain" 0 "$loom" fmt "$tmp/chain.py"
terms=$(for i in $(seq 1 2100); do printf 'A[%d] + ' $((i % 4)); done)
printf '@T.prim_func\ndef main(A: T.Buffer((4,), "float32")):\n    A[0] = %sA[0]\n' "$terms" >"$tmp/chain.py"
expect "too long operator chain" 1 "$loom" fmt "$tmp/chain.py"
expect_err "chain message" "chain of operators too long \(limit is 2000 terms\)"

python_nest=$(printf 'A[%.0s' $(seq 1 5000))
printf '@T.prim_func\ndef main(A: T.Buffer((4,), "float32")):\n    A[0] = %s\n' "$python_nest" >"$tmp/deep.py"
expect "absurd nesting" 1 "$loom" fmt "$tmp/deep.py"
expect_err "nesting message" "too deep"

echo "cli: $pass passed, $fail failed"
[ $fail = 0 ]
