#!/usr/bin/env bash
# What TVM users paste: the ML compilation course's mm_relu and its schedule,
# unchanged (@tvm.script.ir_module, imports and notebook lines around the
# module, `sch = tvm.tir.Schedule(...)` and `mod = sch.mod` around the
# schedule), read, scheduled, verified and tuned; a lone function under
# @tvm.script.tir.prim_func.
#   usage: paste_cli.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
dir=$root/tests/script/paste
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # description condition-command...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $what"; fi
}

"$loom" fmt "$dir/mm_relu.py" >"$tmp/fmt.py" 2>"$tmp/err"
check "mm_relu: reads" test $? = 0
check "mm_relu: as an IRModule" grep -q '@I.ir_module' "$tmp/fmt.py"
"$loom" sched "$dir/mm_relu.py" "$dir/mm_relu_sched.py" >"$tmp/s.py" 2>"$tmp/err"
check "mm_relu: the schedule runs" test $? = 0
check "mm_relu: split and moved" grep -q 'for i, j_0 in T.grid(128, 32)' "$tmp/s.py"
"$loom" run "$tmp/s.py" --verify --against "$dir/mm_relu.py" >"$tmp/out" 2>&1
check "mm_relu: verified" grep -q 'verify: ok against' "$tmp/out"
LOOM_CFLAGS=-O1 "$loom" tune "$dir/mm_relu.py" --trials 2 --db "$tmp/t.db" >"$tmp/out" 2>&1
check "mm_relu: tunes" grep -q 'mm_relu: best' "$tmp/out"
"$loom" fmt "$dir/prim_func.py" >"$tmp/p.py" 2>&1
check "@tvm.script.tir.prim_func: reads" grep -q 'def add_one' "$tmp/p.py"
printf 'sch = tvm.tir.Schedule(MyModule)\nsch.get_blok("Y")\n' >"$tmp/bad.py"
"$loom" sched "$dir/mm_relu.py" "$tmp/bad.py" >/dev/null 2>"$tmp/err"
check "a misspelled method after the prologue: at its line" grep -q "bad.py:2:5: error: unknown schedule method 'get_blok'" "$tmp/err"

echo "paste: $pass passed, $fail failed"
[ $fail = 0 ]
