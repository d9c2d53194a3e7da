#!/usr/bin/env bash
# `loom te`: each TE script of tests/te/cases whose first line names a
# library operator ("# loom op NAME KEY=VALUE...") gives TensorIR
# structurally equal to that operator's, and one whose first line is
# "# expect FILE" equal to the TensorIR in FILE (the form TVM prints);
# every case reads back through `loom fmt` and agrees between the C backend
# and the interpreter (loom run --verify); bad scripts are reported at
# FILE:LINE:COL and exit 1.
#   usage: te_script.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

for f in "$root"/tests/te/cases/*.py; do
  name=$(basename "$f" .py)
  if ! "$loom" te "$f" >"$tmp/$name.te.py" 2>"$tmp/err"; then
    bad "te $name: $(cat "$tmp/err")"; continue; fi
  "$loom" fmt "$tmp/$name.te.py" >"$tmp/$name.fmt" 2>"$tmp/err" &&
    "$loom" equal "$tmp/$name.te.py" "$tmp/$name.fmt" >/dev/null 2>&1 && ok ||
    bad "te $name does not read back: $(cat "$tmp/err")"
  # Symbolic sizes need values to run; the others run as they are.
  if ! grep -q 'T.Buffer(("' "$tmp/$name.te.py"; then
    "$loom" run "$tmp/$name.te.py" --repeat 1 --verify >"$tmp/run" 2>"$tmp/err" &&
      grep -q "verify: ok" "$tmp/run" && ok ||
      bad "run --verify $name: $(cat "$tmp/run" "$tmp/err")"
  fi
  first=$(head -1 "$f")
  case $first in
  "# expect "*)
    "$loom" equal "$tmp/$name.te.py" "$root/tests/te/cases/${first#"# expect "}" \
      >"$tmp/eq" 2>&1 && ok || bad "te $name differs from TVM's form: $(cat "$tmp/eq")" ;;
  "# loom op "*)
    # shellcheck disable=SC2086
    "$loom" op ${first#"# loom op "} >"$tmp/$name.op.py" 2>"$tmp/err" ||
      { bad "op for $name: $(cat "$tmp/err")"; continue; }
    "$loom" equal "$tmp/$name.te.py" "$tmp/$name.op.py" >"$tmp/eq" 2>&1 && ok ||
      bad "te $name differs from the library: $(cat "$tmp/eq")" ;;
  esac
done
grep -q 'T.Buffer(("n", 8)' "$tmp/symbolic.te.py" && ok ||
  bad "symbolic: the shape of A does not carry n"

expect_error() { # description expected-location-regex script
  printf '%s\n' "$3" >"$tmp/bad.py"
  "$loom" te "$tmp/bad.py" >/dev/null 2>"$tmp/err"; local got=$?
  if [ "$got" != 1 ]; then bad "$1: exit $got, expected 1"; return; fi
  grep -Eq "bad.py:$2: error:" "$tmp/err" && ok || bad "$1: $(cat "$tmp/err")"
}
expect_error "rank" "3:37" 'from tvm import te
A = te.placeholder((4, 4), name="A")
B = te.compute((4, 4), lambda i, j: A[i, j, 0] + 1, name="B")
te.create_prim_func([A, B])'
expect_error "undefined name" "2:36" 'from tvm import te
B = te.compute((4,), lambda i: i + nope, name="B")'
expect_error "lambda arity" "3:24" 'from tvm import te
A = te.placeholder((4, 4), name="A")
B = te.compute((4, 4), lambda i: A[i, 0], name="B")'
expect_error "missing placeholder" "4:1" 'from tvm import te
A = te.placeholder((4,), name="A")
B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
te.create_prim_func([B])'
expect_error "reduce axis" "3:53" 'from tvm import te
A = te.placeholder((4, 4), name="A")
B = te.compute((4,), lambda i: te.sum(A[i, 0], axis=i), name="B")'
expect_error "unknown keyword" "2:28" 'from tvm import te
A = te.placeholder((4, 4), nme="A")'
expect_error "no prim func" "1:1" 'from tvm import te'
expect_error "syntax" "2:19" 'from tvm import te
A = te.placeholder((4, 4), name="A"'
expect_error "comm_reducer arity" "5:32" 'from tvm import te
r = te.comm_reducer(lambda x, y: (x[0] + y[0], x[1] * y[1]), lambda t0, t1: 0)
A = te.placeholder((4, 4), name="A")
k = te.reduce_axis((0, 4), name="k")
B = te.compute((4,), lambda i: r((A[i, k], A[i, k]), axis=k), name="B")'
expect_error "comm_reducer dtype" "5:32" 'from tvm import te, tir
r = te.comm_reducer(lambda x, y: x + y, lambda t: tir.const(0, "int32"))
A = te.placeholder((4, 4), name="A")
k = te.reduce_axis((0, 4), name="k")
B = te.compute((4,), lambda i: r(A[i, k], axis=k), name="B")'
expect_error "reduce range on an index" "7:1" 'from tvm import te
A = te.placeholder((8, 8), name="A")
def f(i):
    k = te.reduce_axis((i, 8), name="k")
    return te.sum(A[i, k], axis=k)
B = te.compute((8,), f, name="B")
te.create_prim_func([A, B])'
"$loom" te "$tmp/none.py" >/dev/null 2>&1; [ $? = 2 ] && ok || bad "missing file"
"$loom" te >/dev/null 2>&1; [ $? = 2 ] && ok || bad "no argument"

echo "te_script.sh: $pass passed, $fail failed"
[ "$fail" = 0 ]
