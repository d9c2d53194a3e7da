#!/bin/bash
# `loom space`: the matmul's three spaces, sampled candidates that all pass
# postprocessing, and the usage errors. Args: loom binary, source root.
loom=$1
root=$2
fail=0
out=$("$loom" space "$root/tests/schedule/cases/matmul.py" --target "cpu -cores=4")
n=$(grep -c '^# design space' <<<"$out")
[ "$n" = 3 ] || { echo "expected 3 spaces, got $n"; fail=1; }
grep -q 'ann_key="meta_schedule.parallel", ann_val=64' <<<"$out" ||
  { echo "parallel extent is not cores x 16"; fail=1; }
err=$("$loom" space "$root/tests/schedule/cases/matmul.py" --sample 4 --quiet 2>&1 >/dev/null)
[ "$(grep -c '4 candidates, 0 dropped' <<<"$err")" = 3 ] ||
  { echo "unexpected sampling summary: $err"; fail=1; }
out=$("$loom" space "$root/tests/schedule/cases/softmax.py" --sample 1)
grep -q 'sch.enter_postproc()' <<<"$out" || { echo "no enter_postproc"; fail=1; }
grep -q 'sample_compute_location' <<<"$out" || { echo "no compute location"; fail=1; }
"$loom" space "$root/tests/schedule/cases/matmul.py" --target "cpu -cores=x" 2>/dev/null
[ $? = 2 ] || { echo "a bad target must be a usage error"; fail=1; }
"$loom" space "$root/tests/schedule/cases/matmul.py" --what 2>/dev/null
[ $? = 2 ] || { echo "an unknown option must be a usage error"; fail=1; }
"$loom" space 2>/dev/null
[ $? = 2 ] || { echo "a missing FILE must be a usage error"; fail=1; }
exit $fail
