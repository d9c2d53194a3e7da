#!/usr/bin/env bash
# Every program of the run corpus is built with the C backend and checked
# against the reference interpreter with `loom run --verify`, on two seeds.
# A file's "# run: ARGS" line adds options (scalar parameters); a file with
# "# run-error: TEXT" must fail with exit 1 and TEXT on stderr.
# usage: run.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
shared=$root/../shared
fail=0 n=0
files=("$root"/tests/codegen/cases/*.py "$root"/tests/script/cases/*.py)
# The shared corpus, where present; the two large programs take minutes in
# the interpreter and are checked by bench/ and by hand instead.
if [ -d "$shared/corpus" ]; then
  for f in "$shared"/corpus/*.py; do
    case $f in *.sched.py|*matmul_1024.py|*conv2d_nhwc.py) ;; *) files+=("$f");; esac
  done
fi
for f in "${files[@]}"; do
  args=$(sed -n 's/^# run: //p' "$f" | head -1)
  want_error=$(sed -n 's/^# run-error: //p' "$f" | head -1)
  for seed in 1 2; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    out=$("$loom" run "$f" --verify --repeat 1 --seed $seed $args 2>&1)
    rc=$?
    if [ -n "$want_error" ]; then
      if [ $rc -ne 1 ] || ! grep -qF -- "$want_error" <<<"$out"; then
        echo "FAIL $f (seed $seed): wanted exit 1 with '$want_error', got $rc:"
        echo "$out" | head -5
        fail=$((fail + 1))
      fi
      break
    fi
    if [ $rc -ne 0 ] || ! grep -q "verify: ok" <<<"$out"; then
      echo "FAIL $f (seed $seed, exit $rc):"
      echo "$out" | head -5
      fail=$((fail + 1))
    fi
  done
done
echo "$((n - fail)) of $n runs verified"
[ $fail -eq 0 ]
