#!/usr/bin/env bash
# Expected-output cases: each tests/schedule/expect/NAME.txt holds a program,
# a schedule script and the module `loom sched` must print, in sections
#   # --- program / # --- script / # --- expect
# LOOM_EXPECT_UPDATE=1 rewrites the expect sections from the current output
# (review the diff before committing).
#   usage: expect.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for f in "$root"/tests/schedule/expect/*.txt; do
  name=$(basename "$f" .txt)
  awk '/^# --- /{s=$3; next} s=="program"' "$f" >"$tmp/p.py"
  awk '/^# --- /{s=$3; next} s=="script"' "$f" >"$tmp/s.py"
  awk '/^# --- /{s=$3; next} s=="expect"' "$f" >"$tmp/want"
  # A refusal names the script; the temporary folder is left out.
  "$loom" sched "$tmp/p.py" "$tmp/s.py" 2>&1 | sed "s|$tmp/||g" >"$tmp/got"
  if [ "${LOOM_EXPECT_UPDATE:-}" = 1 ]; then
    awk '/^# --- expect/{exit} {print}' "$f" >"$tmp/new"
    { echo "# --- expect"; cat "$tmp/got"; } >>"$tmp/new"
    cp "$tmp/new" "$f"
  fi
  if [ -s "$tmp/want" ] && cmp -s "$tmp/got" "$tmp/want"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $name:"; diff "$tmp/want" "$tmp/got" | head -20
  fi
done
echo "expect: $pass passed, $fail failed"
[ $fail = 0 ]
