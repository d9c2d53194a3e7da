#!/bin/sh
# `--pipeline best` on two matmuls: 1024^3, where OpenBLAS should win, and
# 64^3, where a tuned kernel should beat the library's call overhead. Each
# is tuned into a fresh database, then `loom compile --pipeline best`
# measures the library call (dispatch), the tuned record (apply-db) and the
# loops as written (default) side by side and keeps the fastest; its
# --explain line, with every offer's time, is printed per shape.
#
# usage: bench/bench_best.sh [LOOM] [TRIALS]    (defaults: build/loom, 200)
set -eu
loom=${1:-build/loom}
trials=${2:-200}
# OpenBLAS runs at its best (bench/openblas_env.h says why).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

for n in 64 1024; do
  "$loom" op matmul M=$n N=$n K=$n > "$dir/mm$n.py"
  "$loom" tune "$dir/mm$n.py" --trials "$trials" --db "$dir/mm$n.db" > "$dir/tune$n.log" 2>&1 || {
    cat "$dir/tune$n.log" >&2
    exit 1
  }
  "$loom" compile "$dir/mm$n.py" --pipeline best --db "$dir/mm$n.db" --explain \
    -o "$dir/out$n.py" 2> "$dir/best$n.log"
  echo "matmul $n^3 ($trials trials):"
  sed 's/^/  /' "$dir/best$n.log"
done
