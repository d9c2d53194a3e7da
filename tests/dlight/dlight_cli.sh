#!/usr/bin/env bash
# `loom dlight` from the command line: the module comes out scheduled and
# reads back; --explain names the rule that took each function and why the
# earlier ones did not; a scheduled module is left as it is; a CPU target,
# a missing FILE and an unknown option are usage errors; a bad program is
# reported at its line.
#   usage: dlight_cli.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
cases=$root/tests/dlight/cases
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

check() { # description condition-command...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $what"; fi
}

"$loom" dlight "$cases/gemv.py" --target "cuda -arch=sm_80" --explain >"$tmp/gemv.py" 2>"$tmp/why"
check "gemv: exit 0" test $? = 0
check "gemv: the row across threads" grep -q 'thread_binding(256, thread="threadIdx.x")' "$tmp/gemv.py"
check "gemv: a block per row" grep -q 'thread_binding(128, thread="blockIdx.x")' "$tmp/gemv.py"
check "gemv: explained" grep -q '^Reduction: schedules it' "$tmp/why"
"$loom" fmt "$tmp/gemv.py" >/dev/null
check "gemv: the output reads back" test $? = 0

"$loom" dlight "$tmp/gemv.py" --explain >"$tmp/again.py" 2>"$tmp/why2"
check "scheduled already: left alone" grep -q 'scheduled already' "$tmp/why2"
check "scheduled already: the same module" "$loom" equal "$tmp/gemv.py" "$tmp/again.py"

"$loom" dlight "$cases/colsum.py" --explain >/dev/null 2>"$tmp/why"
check "colsum: Reduction says why not" grep -q "^Reduction: does not apply: block 'B' has no input indexed by all its iters" "$tmp/why"
check "colsum: Fallback takes it" grep -q '^Fallback: schedules it' "$tmp/why"

"$loom" dlight "$cases/sum_all.py" --explain >"$tmp/sum.py" 2>"$tmp/why"
check "sum_all: exit 0" test $? = 0
check "sum_all: no rule" grep -q '^no rule takes it' "$tmp/why"
check "sum_all: unchanged" "$loom" equal "$cases/sum_all.py" "$tmp/sum.py"

"$loom" build "$cases/softmax.py" --emit cuda >"$tmp/softmax.cu"
check "softmax: one kernel" test "$(grep -c '__global__' "$tmp/softmax.cu")" = 1
check "softmax: the row's maximum in shared memory" grep -q '__shared__ float mx_shared\[1\]' "$tmp/softmax.cu"
check "softmax: the row's sum in shared memory" grep -q '__shared__ float s_shared\[1\]' "$tmp/softmax.cu"
check "softmax: neither a kernel parameter" bash -c "! grep -Eq 'float \\*(mx|s),' '$tmp/softmax.cu'"

"$loom" dlight "$cases/add.py" --dialect tirx >"$tmp/add.py"
check "tirx spelling" grep -q 'T.sblock("C")' "$tmp/add.py"

"$loom" dlight "$cases/add.py" --target cpu >/dev/null 2>"$tmp/err"
check "cpu target: exit 2" test $? = 2
check "cpu target: said" grep -q "cuda target" "$tmp/err"
"$loom" dlight >/dev/null 2>&1
check "no FILE: exit 2" test $? = 2
"$loom" dlight "$cases/add.py" --frobnicate >/dev/null 2>&1
check "unknown option: exit 2" test $? = 2
printf 'from tvm.script import tir as T\n\n@T.prim_func\ndef main(A: T.Buffer((4,), "float32")):\n    for i in range(4):\n        A[i] = B[i]\n' >"$tmp/bad.py"
"$loom" dlight "$tmp/bad.py" >/dev/null 2>"$tmp/err"
check "bad program: exit 1" test $? = 1
check "bad program: located" grep -q 'bad.py:6:' "$tmp/err"

# Fast tuning: the policy's tilings, and `loom tune --strategy fast`.
"$loom" dlight "$cases/matmul.py" --configs 5 >"$tmp/configs" 2>&1
check "configs: exit 0" test $? = 0
check "configs: five tilings" test "$(grep -cE '^  [0-9]+x[0-9]+  [0-9]+x[0-9]+  [0-9]+  [0-9.]+$' "$tmp/configs")" = 5
"$loom" dlight "$cases/add.py" --configs 5 >"$tmp/configs" 2>&1
check "configs: no matmul said" grep -q "no matmul" "$tmp/configs"
"$loom" dlight "$cases/add.py" --configs 0 >/dev/null 2>&1
check "configs 0: exit 2" test $? = 2
"$loom" tune "$cases/matmul.py" --strategy fast --target cpu --topk 3 --model random \
  --db "$tmp/c.db" >"$tmp/out" 2>"$tmp/err"
check "fast on a cpu: exit 0" test $? = 0
check "fast on a cpu: the search's first three" grep -q "3 trials" "$tmp/out"
"$loom" tune "$cases/matmul.py" --strategy fast --target cuda --space "$cases/add.py" >/dev/null 2>"$tmp/err"
check "fast with a space: exit 2" test $? = 2
"$loom" tune "$cases/matmul.py" --strategy fast --target cuda --topk 4 --db "$tmp/f.db" \
  >"$tmp/out" 2>"$tmp/err"
check "fast: exit 0" test $? = 0
check "fast: four trials" grep -q "4 trials" "$tmp/out"
check "fast: four records" test "$("$loom" db export --db "$tmp/f.db" | grep -c '"trace"')" = 4

echo "dlight_cli: $pass passed, $fail failed"
[ $fail = 0 ]
