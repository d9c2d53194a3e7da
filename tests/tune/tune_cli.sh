#!/usr/bin/env bash
# loom tune, loom db and loom apply end to end: tune a matmul over a space,
# see the records, apply them, and check the result against the interpreter;
# then the usage and user errors.
# usage: tune_cli.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
cases=$root/tests/tune/cases
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export LOOM_CFLAGS=-O1
fail=0
expect() { # CODE TEXT COMMAND...
  local code=$1 text=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ $rc -ne "$code" ] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL: $* -> exit $rc (wanted $code with '$text'):"; echo "$out" | head -5
    fail=1
  fi
}
expect 0 "over the unscheduled" "$loom" tune "$cases/mm64.py" --space "$cases/mm_space.py" \
  --trials 10 --batch 5 --db "$tmp/t.db" --seed 3
expect 0 "records=11 failures=0" "$loom" db list --db "$tmp/t.db"
expect 0 "scheduled from the database" "$loom" apply "$cases/mm64.py" --db "$tmp/t.db" -o "$tmp/applied.py"
expect 0 "verify: ok against" "$loom" run "$tmp/applied.py" --verify --repeat 1 \
  --against "$cases/mm64.py"
grep -q "T.vectorized" "$tmp/applied.py" || { echo "FAIL: the applied module is not scheduled"; fail=1; }
expect 0 "no tuning record; left as written" "$loom" apply "$cases/mm64.py" --db "$tmp/empty.db"
# Records are stored under the target's key: the hardware detected here, not
# the options that steer the space. Another machine's key finds none.
expect 0 "on cpu -cores=" "$loom" db show 1 --db "$tmp/t.db"
expect 0 "no tuning record on this target; left as written (records exist on 'cpu -cores=" \
  "$loom" apply "$cases/mm64.py" --db "$tmp/t.db" --target "cpu -cores=999"
expect 0 "scheduled from the database" "$loom" apply "$cases/mm64.py" --db "$tmp/t.db" \
  --target "cpu -min-parallel-work=0"
expect 2 "bad --target 'cpu -cores=0'" "$loom" apply "$cases/mm64.py" --db "$tmp/t.db" \
  --target "cpu -cores=0"
# A database row is replayed with its decisions checked: a tile edited to
# no longer fit its loop is refused at the row's instruction, not repaired.
"$loom" db export --db "$tmp/t.db" | grep -F '[[2, [' |
  sed -E 's/\[\[2, \[[0-9]+, [0-9]+, [0-9]+\]\]/[[2, [5, 5, 5]]/' >"$tmp/stale.jsonl"
expect 0 "imported 10 records" "$loom" db import "$tmp/stale.jsonl" --db "$tmp/stale.db"
expect 1 "error: sample_perfect_tile: the decision [5, 5, 5] multiplies to 125, but loop 'i' has extent 64: the factors must multiply to 64" \
  "$loom" apply "$cases/mm64.py" --db "$tmp/stale.db"
expect 1 "note: in record" "$loom" apply "$cases/mm64.py" --db "$tmp/stale.db"
expect 0 "over the unscheduled" "$loom" tune "$cases/mm64.py" --space "$cases/mm_space.py" \
  --trials 4 --db "$tmp/t.db" --strategy replay-func
printf 'b0 = sch.get_block(name="C", func_name="main")\nl1 = sch.get_loops(block=b9)\n' > "$tmp/bad.py"
expect 1 "$tmp/bad.py:2:" "$loom" tune "$cases/mm64.py" --space "$tmp/bad.py" --trials 4 --db "$tmp/t.db"
# Without --space: the generated design spaces for the target.
expect 0 "over the unscheduled" "$loom" tune "$cases/mm64.py" --trials 4 --db "$tmp/g.db" --target cpu
expect 0 "scheduled from the database" "$loom" apply "$cases/mm64.py" --db "$tmp/g.db" -o "$tmp/gen.py"
expect 0 "verify: ok against" "$loom" run "$tmp/gen.py" --verify --repeat 1 \
  --against "$cases/mm64.py"
# Resumed on the same database: what was measured is not measured again
# (replay-trace with the same seed proposes the first run's candidates
# first), and the cost model loaded from the database starts no OpenMP
# threads (they would hang the measuring children, and the finalists
# measured again would be disqualified).
resume() {
  "$loom" tune "$cases/mm64.py" --space "$cases/mm_space.py" --strategy replay-trace \
    --trials 6 --db "$tmp/r.db" --seed 3 >"$tmp/r.out" 2>&1
}
resume
resume
expect 0 "6 schedules measured by earlier runs" cat "$tmp/r.out"
for i in 1 2; do
  "$loom" tune "$cases/mm64.py" --trials 6 --db "$tmp/m.db" --target cpu --seed 3 >"$tmp/m.out" 2>&1
done
if grep -q "finalists failed" "$tmp/m.out"; then fail=1; echo "FAIL resumed: finalists disqualified"; fi
n_twice=$("$loom" db export --db "$tmp/r.db" | grep -o '"trace": \[.*\], "latencies' |
  grep -v '"trace": \[\[\], \[\]\]' | sort | uniq -d | wc -l)
if [ "$n_twice" != 0 ]; then fail=1; echo "FAIL resumed: $n_twice schedules measured twice"; fi
expect 2 "bad --target 'gpu'" "$loom" tune "$cases/mm64.py" --trials 4 --target gpu
expect 2 "missing --trials" "$loom" tune "$cases/mm64.py" --space "$cases/mm_space.py"
expect 2 "unknown strategy 'greedy'" "$loom" tune "$cases/mm64.py" --space "$cases/mm_space.py" --trials 2 --strategy greedy
expect 2 "missing FILE" "$loom" apply
exit $fail
