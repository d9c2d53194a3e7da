#!/usr/bin/env bash
# The shared library exports the public API and nothing else: every symbol it
# defines for the dynamic linker is a loom_ name, every declaration in
# include/loom/ is marked LOOM_API, and every marked function is exported.
#   usage: exports.sh LOOM SOURCE_ROOT
set -u
lib=$(dirname "$1")/libloom.so root=$2
command -v nm >/dev/null || { echo "nm not found"; exit 77; }
[ -f "$lib" ] || { echo "no $lib"; exit 77; }
fail=0

exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
# AddressSanitizer adds an __odr_asan.<name> indicator beside each exported
# global variable (loom_op_table); it belongs to that variable.
private=$(grep -v '^loom_' <<<"$exported" |
          grep -Ev '^(_init|_fini|_edata|_end|__bss_start|__odr_asan\.loom_[a-z0-9_]+)$')
if [ -n "$private" ]; then
  echo "FAIL: libloom.so exports names outside the API:"; echo "$private" | head -20
  fail=1
fi

# A declaration starts at column 0 and names a loom_ function, on its first
# line or, when the return type fills that line, at the start of the next.
unmarked=$(awk '/^[A-Za-z_]/ && !/^(typedef|extern|static|struct|enum|union)[ \t]/ &&
                /loom_[a-z0-9_]+\(/ && !/^LOOM_API/ && prev !~ /^LOOM_API/ {
                  print FILENAME ":" FNR ": " $0 }
                { prev = $0 }' "$root"/include/loom/*.h)
if [ -n "$unmarked" ]; then
  echo "FAIL: public declarations without LOOM_API:"; echo "$unmarked"
  fail=1
fi

declared=$(awk '/^LOOM_API/ { if (match($0, /loom_[a-z0-9_]+\(/)) {
                                print substr($0, RSTART, RLENGTH - 1); next }
                              want = 1; next }
                want && match($0, /^loom_[a-z0-9_]+\(/) {
                  print substr($0, RSTART, RLENGTH - 1) }
                { want = 0 }' "$root"/include/loom/*.h | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -n "$missing" ]; then
  echo "FAIL: declared in include/loom/ but not exported:"; echo "$missing"
  fail=1
fi
n=$(echo "$declared" | wc -l)
[ $fail = 0 ] && echo "ok: $n public functions exported, nothing else"
exit $fail
