#!/usr/bin/env bash
# Every program Loom keeps for the GPU (the carried corpus and conformance
# programs, tests/gpu/programs, tests/dlight/cases), with dlight's schedule,
# run on the GPU and checked against the interpreter, fourteen at a time
# (each is mostly the interpreter's work on the CPU). A program not done in
# EACH seconds is given up on (TIME); one the interpreter cannot check at
# all (symbolic shapes with no value, an intrinsic it lacks, an extern
# function the CUDA backend cannot call, a conformance program that is
# wrong on purpose) is a SKIP, not a failure. Writes a line a program to
# OUT, then prints the counts and the FAIL and TIME lines.
#   usage: scripts/gpu-verify.sh LOOM OUT [EACH [ALL]]   (seconds: 45, 180)
set -u
cd "$(dirname "$0")/.."
LOOM=$1 OUT=$2 EACH=${3:-45} ALL=${4:-180}
verify_one() {
  r=$(timeout "$EACH" "$LOOM" run "$1" --target cuda --verify --repeat 3 --timeout 20000 2>&1)
  rc=$?
  if [ $rc = 0 ]; then
    echo "ok   $1: $(echo "$r" | tr '\n' ' ')"
  elif [ $rc = 124 ]; then
    echo "TIME $1: over $EACH s"
  elif echo "$r" | grep -q -E "interpreter cannot check|needs a value|does not support|cannot call extern"; then
    echo "SKIP $1: $(echo "$r" | head -c 300 | tr '\n' ' ')"
  else
    echo "FAIL $1: $(echo "$r" | head -c 600 | tr '\n' ' ')"
  fi
}
export -f verify_one
export LOOM EACH
programs() { ls build/gpu-carry/programs/*.py tests/gpu/programs/*.py tests/dlight/cases/*.py 2>/dev/null; }
programs | timeout "$ALL" xargs -P 14 -I{} bash -c 'verify_one {}' >"$OUT"
count() { grep -c "^$1" "$OUT"; }
echo "programs: $(count ok) verified, $(count FAIL) failed, $(count TIME) over time," \
  "$(count SKIP) the interpreter cannot check, of $(programs | wc -l)"
grep -E '^(FAIL|TIME)' "$OUT" | cut -c1-300
