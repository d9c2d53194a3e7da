#!/usr/bin/env bash
# The long-tail kernels of tests/tune/cases as written (copies of
# ../shared/corpus/seed_*.py: a loop from 1, a prefix sum, an in-place
# update, loops under an if/else) tune over the generated spaces,
# apply from the database and compute what the interpreter computes on the
# programs as written (--against: a schedule that changed the meaning would
# agree with its own interpretation).
# usage: longtail_cli.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export LOOM_CFLAGS=-O1
fail=0
for name in seed_loop_from_one seed_prefix_sum seed_inplace seed_branches; do
  src=$root/tests/tune/cases/$name.py
  out=$("$loom" tune "$src" --trials 4 --db "$tmp/$name.db" --seed 1 2>&1)
  if [ $? -ne 0 ] || ! grep -q "over the unscheduled" <<<"$out"; then
    echo "FAIL: tune $name:"; echo "$out" | tail -5; fail=1; continue
  fi
  out=$("$loom" apply "$src" --db "$tmp/$name.db" -o "$tmp/$name.py" 2>&1)
  if [ $? -ne 0 ] || ! grep -q "scheduled from the database" <<<"$out"; then
    echo "FAIL: apply $name:"; echo "$out" | tail -5; fail=1; continue
  fi
  out=$("$loom" run "$tmp/$name.py" --verify --against "$src" --repeat 1 2>&1)
  if [ $? -ne 0 ] || ! grep -q "verify: ok against" <<<"$out"; then
    echo "FAIL: run --verify $name:"; echo "$out" | tail -5; fail=1
  fi
done
exit $fail
