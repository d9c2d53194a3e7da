#!/usr/bin/env bash
# loom db on an empty database, a missing workload, a file that is not a
# database, and bad usage: the documented exit codes and messages.
# usage: db_cli.sh LOOM SOURCE_ROOT
set -u
loom=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # CODE TEXT COMMAND...
  local code=$1 text=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ $rc -ne "$code" ] || ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL: $* -> exit $rc (wanted $code with '$text'):"; echo "$out" | head -3
    fail=1
  fi
}
expect 0 "" "$loom" db list --db "$tmp/new.db"
[ -f "$tmp/new.db" ] || { echo "FAIL: list did not create the database"; fail=1; }
expect 0 "" "$loom" db export --db "$tmp/new.db"
expect 1 "no workload 7" "$loom" db show 7 --db "$tmp/new.db"
echo "plain text, not SQLite" > "$tmp/text.db"
expect 1 "$tmp/text.db: error: tuning database" "$loom" db list --db "$tmp/text.db"
expect 2 "unknown action 'frob'" "$loom" db frob --db "$tmp/new.db"
expect 2 "show needs a workload id" "$loom" db show --db "$tmp/new.db"
expect 2 "--db needs a path" "$loom" db list --db
# import: records as JSON lines, all or none, and export gives them back
script='# from tvm.script import tir as T\n\n@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    for i in range(4):\n        A[i] = A[i] + T.float32(1.0)\n'
printf '%s\n\n%s\n' \
  "{\"workload\": \"$script\", \"target\": \"cpu\", \"trace\": [[], []], \"latencies_ms\": [1.5, 2.5], \"error\": null, \"created\": 7}" \
  "{\"workload\": \"$script\", \"target\": \"cpu\", \"trace\": [[], []], \"latencies_ms\": [], \"error\": \"boom\", \"created\": 8}" \
  > "$tmp/in.jsonl"
expect 0 "imported 2 records" "$loom" db import "$tmp/in.jsonl" --db "$tmp/a.db"
expect 0 "records=2 failures=1 best=2.000000 ms" "$loom" db list --db "$tmp/a.db"
"$loom" db export --db "$tmp/a.db" > "$tmp/a.jsonl"
expect 0 "imported 2 records" "$loom" db import "$tmp/a.jsonl" --db "$tmp/b.db"
"$loom" db export --db "$tmp/b.db" | cmp -s - "$tmp/a.jsonl" || { echo "FAIL: export, import, export differs"; fail=1; }
printf '%s\n%s\n' "$(head -1 "$tmp/in.jsonl")" '{"workload": "x", "target": 3}' > "$tmp/bad.jsonl"
expect 1 "$tmp/bad.jsonl:2:1: error: the record needs \"target\"" "$loom" db import "$tmp/bad.jsonl" --db "$tmp/c.db"
expect 0 "" "$loom" db list --db "$tmp/c.db"
[ -z "$("$loom" db list --db "$tmp/c.db")" ] || { echo "FAIL: a refused import left records"; fail=1; }
printf '{"workload": "def", "target": "cpu", "trace": [[], []], "latencies_ms": [1]}\n' > "$tmp/bad2.jsonl"
expect 1 "the workload is not one readable prim func" "$loom" db import "$tmp/bad2.jsonl" --db "$tmp/c.db"
expect 2 "import needs a FILE" "$loom" db import --db "$tmp/c.db"
exit $fail
