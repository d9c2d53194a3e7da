#!/usr/bin/env bash
# `loom normalize`: the seed kernels end up in normalized form, the result is
# canonical (it reads back and normalizes to itself), runs as the original
# does, and bad options are usage errors.
#   usage: normalize_cli.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

cat >"$tmp/scan.py" <<'PY'
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    B[0] = T.float32(0)
    for i_ in range(1, 100):
        with T.block("block"):
            B[i_] = B[i_ - 1] + A[i_]
PY
"$loom" normalize "$tmp/scan.py" >"$tmp/n.py" 2>"$tmp/err" && ok || { bad "normalize"; cat "$tmp/err"; }
grep -q 'with T.block("store"):' "$tmp/n.py" && ok || bad "the bare store is wrapped"
grep -q 'for i_ in range(99):' "$tmp/n.py" && ok || bad "the loop starts at 0"
grep -q 'v_i_ = T.axis.scan(99, i_)' "$tmp/n.py" && ok || bad "the scan gets an ordered iter var"
grep -q 'B\[v_i_ + 1\] = B\[v_i_\] + A\[v_i_ + 1\]' "$tmp/n.py" && ok || bad "uses shift"
"$loom" normalize "$tmp/n.py" >"$tmp/n2.py" && cmp -s "$tmp/n.py" "$tmp/n2.py" && ok || bad "normalizing twice changes nothing"
"$loom" interp "$tmp/scan.py" --dump >"$tmp/a" && "$loom" interp "$tmp/n.py" --dump >"$tmp/b" &&
  cmp -s "$tmp/a" "$tmp/b" && ok || bad "the normalized program computes the same"
"$loom" normalize "$tmp/scan.py" --pass loop-zero >"$tmp/z.py" && ! grep -q 'T.block("store' "$tmp/z.py" &&
  grep -q 'range(99)' "$tmp/z.py" && ok || bad "--pass loop-zero alone"
"$loom" normalize --pass list | grep -q '^iter-vars' && ok || bad "--pass list"
"$loom" normalize "$tmp/scan.py" --pass bogus >/dev/null 2>"$tmp/err"; [ $? = 2 ] && ok || bad "unknown pass exits 2"
grep -q "unknown pass 'bogus'" "$tmp/err" && ok || bad "unknown pass is named"
"$loom" normalize >/dev/null 2>&1; [ $? = 2 ] && ok || bad "missing FILE exits 2"
"$loom" normalize "$tmp/nope.py" >/dev/null 2>&1; [ $? = 2 ] && ok || bad "missing file exits 2"
"$loom" normalize "$tmp/scan.py" --bogus >/dev/null 2>&1; [ $? = 2 ] && ok || bad "unknown option exits 2"

echo "normalize_cli: $pass passed, $fail failed"
[ $fail = 0 ]
