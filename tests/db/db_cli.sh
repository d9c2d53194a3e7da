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
exit $fail
