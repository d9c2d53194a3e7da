#!/usr/bin/env bash
# `loom sched` and `loom trace`: refusal diagnostics at the script line for
# every case in tests/schedule/errors (each file says what it expects in its
# first line), print -> read -> print fixpoints of traces in both forms, and
# the manual matmul schedule: on matmul_1024.py it must apply, and the same
# schedule scaled to 64x64 must compute what the unscheduled program does.
#   usage: sched_cli.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
here=$root/tests/schedule
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

check() { # description condition-command...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $what"; fi
}

for f in "$here"/errors/*.py; do
  want=$(sed -n '1s/^# expect: //p' "$f")
  "$loom" sched "$here/cases/matmul.py" "$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc = 1 ] && grep -Eq -- "$(basename "$f"):$want" "$tmp/err" &&
     ! grep -Eq "Sanitizer|runtime error" "$tmp/err"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $(basename "$f"): exit $rc, expected /$want/:"; cat "$tmp/err"
  fi
done

# Traces print, read back and print the same, as scripts and as JSON.
script=$here/cases/matmul_64.sched.py
"$loom" trace "$here/cases/matmul_64.py" "$script" >"$tmp/t1.py"
"$loom" trace "$here/cases/matmul_64.py" "$tmp/t1.py" >"$tmp/t2.py"
check "script trace fixpoint" cmp -s "$tmp/t1.py" "$tmp/t2.py"
"$loom" trace "$here/cases/matmul_64.py" "$script" --json >"$tmp/t1.json"
"$loom" trace "$here/cases/matmul_64.py" "$tmp/t1.json" --json >"$tmp/t2.json"
check "JSON trace fixpoint" cmp -s "$tmp/t1.json" "$tmp/t2.json"
"$loom" trace "$here/cases/matmul_64.py" "$tmp/t1.json" --dialect tirx >"$tmp/t3.py"
check "tirx spelling" grep -q 'sch.get_sblock(name="matmul", func_name="main")' "$tmp/t3.py"

# The scheduled 64x64 matmul computes the same as the plain one.
"$loom" sched "$here/cases/matmul_64.py" "$script" >"$tmp/s64.py"
check "matmul_64 schedules" test -s "$tmp/s64.py"
check "matmul_64 is vectorized" grep -q 'T.vectorized' "$tmp/s64.py"
"$loom" interp "$here/cases/matmul_64.py" --seed 3 --dump >"$tmp/a.txt"
"$loom" interp "$tmp/s64.py" --seed 3 --dump >"$tmp/b.txt"
check "matmul_64 same result" cmp -s "$tmp/a.txt" "$tmp/b.txt"
# JSON replay gives the same program.
"$loom" sched "$here/cases/matmul_64.py" "$tmp/t1.json" >"$tmp/s64j.py"
check "JSON replay same module" "$loom" equal "$tmp/s64.py" "$tmp/s64j.py"

corpus=$root/../shared/corpus
if [ -f "$corpus/matmul_manual.sched.py" ]; then
  "$loom" sched "$corpus/matmul_1024.py" "$corpus/matmul_manual.sched.py" >"$tmp/s1024.py"
  check "matmul_1024 manual schedule" test -s "$tmp/s1024.py"
  check "matmul_1024 binding" grep -q 'vi = T.axis.spatial(1024, i_0 \* 64 + i_1 \* 8 + i_2 + i_3)' "$tmp/s1024.py"
  "$loom" fmt "$tmp/s1024.py" >"$tmp/f1024.py"
  check "matmul_1024 reads back" test -s "$tmp/f1024.py"
fi

echo "sched_cli: $pass passed, $fail failed"
[ $fail = 0 ]
