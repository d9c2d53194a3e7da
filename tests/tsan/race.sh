#!/usr/bin/env bash
# ThreadSanitizer sees a race between the iterations of a parallel loop: a
# kernel whose iterations all update one element fails its run, and the same
# loop over distinct elements runs. Only meaningful in the build of
# `make test-tsan`, which compiles kernels with CC="clang -fsanitize=thread";
# skipped elsewhere.
#   usage: race.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
case "${CC:-}" in
*-fsanitize=thread*) ;;
*) echo "skipped: kernels are not built with ThreadSanitizer (make test-tsan)"; exit 77 ;;
esac
fail=0

out=$("$loom" run "$root/tests/tsan/race.py" --threads 4 2>&1)
status=$?
if [ $status -ne 1 ] || ! grep -q "data race" <<<"$out" ||
   ! grep -q "the kernel failed" <<<"$out"; then
  echo "FAIL: the racing kernel was not reported (exit $status):"; tail -5 <<<"$out"
  fail=1
fi

out=$("$loom" run "$root/tests/tsan/norace.py" --threads 4 2>&1)
status=$?
if [ $status -ne 0 ]; then
  echo "FAIL: the kernel without a race failed (exit $status):"; tail -5 <<<"$out"
  fail=1
fi

[ $fail -eq 0 ] && echo "tsan/race: a race reported, a race-free loop run"
exit $fail
