#!/bin/bash
# `loom space`: the matmul's three spaces (no work limit: it is small), sampled candidates that all pass
# postprocessing, and the usage errors. Args: loom binary, source root.
loom=$1
root=$2
fail=0
out=$("$loom" space "$root/tests/schedule/cases/matmul.py" --target "cpu -cores=4 -min-parallel-work=0")
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
# The last space's candidate (no rfactor), with sample_compute_location and
# enter_postproc, reads back as a script and as JSON to the same trace.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk '/^# candidate 0$/ { c = ""; p = 1; next } /^# / { p = 0 } p { c = c $0 "\n" }
     END { printf "%s", c }' <<<"$out" >"$tmp/c.py"
"$loom" trace "$root/tests/schedule/cases/softmax.py" "$tmp/c.py" >"$tmp/c2.py" &&
  cmp -s "$tmp/c.py" "$tmp/c2.py" || { echo "script round trip differs"; fail=1; }
"$loom" trace "$root/tests/schedule/cases/softmax.py" "$tmp/c.py" --json >"$tmp/c.json" &&
  "$loom" trace "$root/tests/schedule/cases/softmax.py" "$tmp/c.json" >"$tmp/c3.py" &&
  cmp -s "$tmp/c.py" "$tmp/c3.py" || { echo "JSON round trip differs"; fail=1; }
grep -q '\["SampleComputeLocation", \["b2"\], \[\], \["l5"\]\]' "$tmp/c.json" ||
  { echo "SampleComputeLocation is not in TVM's JSON form"; fail=1; }
grep -q '\["EnterPostproc", \[\], \[\], \[\]\]' "$tmp/c.json" ||
  { echo "EnterPostproc is not in TVM's JSON form"; fail=1; }
# sample_compute_location: a decision that is a candidate replays as it is
# (the consumer's loops i and j, the root); one that is not (its trailing
# reduce loop k, index 2, is no candidate) is refused with the candidates,
# since a script is the user's text (the tuner's fallback for a stale
# decision is tested in tests/schedule/test_trace.c); the inline mark (-2)
# inlines.
p="$root/tests/space/cases/exp_matmul.py"
loc() {
  printf '%s\n' 'b0 = sch.get_block(name="expo", func_name="main")' \
    "l1 = sch.sample_compute_location(block=b0, decision=$1)" \
    'sch.compute_at(block=b0, loop=l1, preserve_unit_loops=True, index=-1)' >"$tmp/loc.py"
}
for d in 0 1 -1; do
  loc "$d"
  "$loom" trace "$p" "$tmp/loc.py" | grep -q "decision=$d)" ||
    { echo "decision $d does not replay as itself"; fail=1; }
done
for d in 99 2 -3; do
  loc "$d"
  err=$("$loom" trace "$p" "$tmp/loc.py" 2>&1 >/dev/null)
  grep -qF "loc.py:2:6: error: sample_compute_location: the decision $d is not a compute location of block 'expo': it must be one of -2 (inline), -1 (the root), 0 (loop 'i'), 1 (loop 'j')" <<<"$err" ||
    { echo "decision $d is not refused: $err"; fail=1; }
done
loc -2
[ "$("$loom" sched "$p" "$tmp/loc.py" | grep -c 'T.block("expo")')" = 0 ] ||
  { echo "the inline mark does not inline"; fail=1; }
# --block NAME=SCRIPT: the script schedules the row sums, the rules the rest
# (no rfactor of theirs for that block); a script that refuses is reported
# at its line, with exit 1.
p="$root/tests/space/cases/row_norm.py"
printf '%s\n' 'b0 = sch.get_block(name="sum", func_name="main")' \
  'l1, l2 = sch.get_loops(block=b0)' \
  'l3, l4 = sch.split(loop=l2, factors=[None, 16])' >"$tmp/sum.py"
out=$("$loom" space "$p" --block "sum=$tmp/sum.py")
[ "$(grep -c '^# design space' <<<"$out")" = 1 ] &&
  grep -q 'factors=\[None, 16\]' <<<"$out" && ! grep -q 'rfactor' <<<"$out" &&
  grep -q 'meta_schedule.parallel' <<<"$out" ||
  { echo "--block: unexpected spaces: $out"; fail=1; }
echo 'sch.compute_inline(block=b0)' >>"$tmp/sum.py"
err=$("$loom" space "$p" --block "sum=$tmp/sum.py" 2>&1)
[ $? = 1 ] && grep -q 'sum.py:4:1: error: compute_inline' <<<"$err" ||
  { echo "--block: a refused script is not reported at its line: $err"; fail=1; }
"$loom" space "$p" --block sum 2>/dev/null
[ $? = 2 ] || { echo "--block without =SCRIPT must be a usage error"; fail=1; }
"$loom" space "$root/tests/schedule/cases/matmul.py" --target "cpu -cores=x" 2>/dev/null
[ $? = 2 ] || { echo "a bad target must be a usage error"; fail=1; }
"$loom" space "$root/tests/schedule/cases/matmul.py" --what 2>/dev/null
[ $? = 2 ] || { echo "an unknown option must be a usage error"; fail=1; }
"$loom" space 2>/dev/null
[ $? = 2 ] || { echo "a missing FILE must be a usage error"; fail=1; }
exit $fail
