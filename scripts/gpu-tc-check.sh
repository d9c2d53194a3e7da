#!/usr/bin/env bash
# Tensor cores, tile copies and vectors on the GPU machine, in about four
# minutes:
# builds Loom (with the carried packages where the machine lacks them,
# scripts/gpu-env.sh), then
#  - checks at 256 (against the interpreter) and times at full size the
#    float16 matmuls (A B, A Bᵀ, 8192³) as dlight schedules them (wmma),
#    and variants of that schedule: the tile copies scalar and unpadded as
#    they were, unpadded, k in steps of 64, eight warps (128 x 256 tiles);
#  - the float32 matmul as dlight schedules it (16-byte tile copies) beside
#    bench/gpu/matmul.sched.py (scalar copies), and the vector loops of
#    tests/gpu/programs/vector_*.py;
#  - the float16 copy and sum (memory-bound) as dlight schedules them (16-
#    byte vectors) beside their scalar hand schedule and vector variants,
#    and row sums and maxima with and without 16-byte loads;
#  - PyTorch's kernels, in the same run;
#  - a kernel that faults while tuning, and fast tuning (float16 top 4,
#    float32 top 8) with where its time went.
# With --programs, first every program of scripts/gpu-verify.sh, checked
# (30 s each, 80 s in all).
#   usage: scripts/gpu-tc-check.sh OUT [--programs]   (after scripts/gpu-check.sh
#   --prepare; LOOM=PATH uses that binary instead of building one)
set -u
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu-tc-check.sh OUT}
mkdir -p "$OUT"
. scripts/gpu-env.sh
gpu_env build/gpu-carry
B=build-gpu W=build-gpu/tc
if [ -z "${LOOM:-}" ]; then
  cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release >"$OUT/build.txt" 2>&1 &&
    make -C $B -j16 loom >>"$OUT/build.txt" 2>&1 || { tail -20 "$OUT/build.txt"; exit 1; }
fi
L=${LOOM:-$PWD/$B/loom}
rm -rf $W && mkdir -p $W
[ "${2:-}" = --programs ] && scripts/gpu-verify.sh "$L" "$OUT/programs.txt" 30 80

# The variants of bench/gpu/matmul_wmma.sched.py.
S=bench/gpu/matmul_wmma.sched.py
sed -e 's/\[None, 4, 32, 8\]/[None, 4, 32]/; s/^_, ty, tx, v = /_, ty, tx = /' \
  -e '/sch.vectorize(v)/d; /storage_align/d' $S >$W/scalar.sched.py
sed -e '/storage_align/d' $S >$W/unpadded.sched.py
sed -e 's/sch.split(k, \[None, 2, 16\])/sch.split(k, [None, 4, 16])/' $S >$W/k64.sched.py
sed -e 's/sch.split(j, \[None, 2, 4, 16\])/sch.split(j, [None, 4, 4, 16])/' \
  -e 's/\[None, 4, 32, 8\]/[None, 8, 32, 8]/' $S >$W/warps8.sched.py

# Every kernel to check and time, by label: LABEL.py at full size and
# LABEL.small.py at 256, each scheduled the same way.
: >$W/list
pair() { # label program dlight|SCRIPT [sed making the small one [sed making the full one]]
  sed -e "${4:-s/4096/256/g; s/8192/256/g}" bench/gpu/$2.py >$W/$1.src.small.py
  sed -e "${5:-p;d}" bench/gpu/$2.py >$W/$1.src.py
  if [ "$3" = dlight ]; then
    $L dlight $W/$1.src.py --target cuda >$W/$1.py && $L dlight $W/$1.src.small.py --target cuda >$W/$1.small.py
  else
    $L sched $W/$1.src.py "$3" >$W/$1.py && $L sched $W/$1.src.small.py "$3" >$W/$1.small.py
  fi 2>>"$OUT/build.txt" && echo "$1" >>$W/list
}
for n in matmul_f16 matmul_nt_f16 matmul8k_f16 matmul_f32; do pair $n.dlight $n dlight; done
for v in scalar unpadded k64 warps8; do pair matmul_f16.$v matmul_f16 $W/$v.sched.py; done
pair matmul_f32.hand_scalar_copies matmul_f32 bench/gpu/matmul.sched.py
# Memory-bound kernels, checked at 4096 x 2048 (large enough for dlight's
# vectors): dlight's 16-byte vectors, four a thread, at PyTorch's size; at
# 8192 x 8192 (a quarter of the inputs to make) beside the scalar hand
# schedule and vectors one and two a thread.
mid='s/16384, 16384/4096, 2048/g' quarter='s/16384, 16384/8192, 8192/g'
pair copy_f16.dlight copy_f16 dlight "$mid"
pair add_f16.dlight add_f16 dlight "$mid"
pair add8k_f16.dlight add_f16 dlight "$mid" "$quarter"
pair add8k_f16.hand_scalar add_f16 bench/gpu/elementwise.sched.py "$mid" "$quarter"
for steps in 1 2; do
  sed -e "s/^bx, u, tx = sch.split(f, \[None, 4, 256\])/bx, u, tx, v = sch.split(f, [None, $steps, 256, 8])/" \
    -e '$a sch.vectorize(v)' bench/gpu/elementwise.sched.py >$W/vec$steps.sched.py
  pair add8k_f16.vectors_$steps add_f16 $W/vec$steps.sched.py "$mid" "$quarter"
done
# Row reductions: bench/gpu/rowreduce_threads.sched.py (256 threads a row,
# four strided steps each) beside 128 threads a row, each summing 8
# contiguous halves read in one 16-byte load.
sed -e 's/^jo, ji = sch.split(j, \[None, 256\])/jo, ji, jv = sch.split(j, [None, 128, 8])/' \
  -e 's/^sch.reorder(i, ji, jo)/sch.reorder(i, ji, jo, jv)/' -e '$a sch.unroll(jv)' \
  bench/gpu/rowreduce_threads.sched.py >$W/rowvec.sched.py
for n in rowsum_f16 rowmax_f16; do
  pair $n.threads $n bench/gpu/rowreduce_threads.sched.py 's/16384/256/g'
  pair $n.vector_loads $n $W/rowvec.sched.py 's/16384/256/g'
done
# The small ones checked eight at a time (the interpreter's work is the CPU's).
check_one() {
  echo "$1 verify: $(timeout 90 "$L" run "$W/$1.small.py" --target cuda --verify --repeat 3 2>&1 | tail -1)"
}
export -f check_one
export L W
{ xargs -P 8 -I{} bash -c 'check_one {}' <$W/list
  for p in vector_copies vector_elementwise; do
    echo "$p verify: $(timeout 60 $L run tests/gpu/programs/$p.py --target cuda --verify 2>&1 | tail -1)"
  done
} | sort >"$OUT/verify.txt"
cat "$OUT/verify.txt"
# Timed one at a time, at full size.
while read -r label; do
  echo "$label: $(timeout 60 $L run "$W/$label.py" --target cuda --repeat 20 2>&1 | tail -1)"
done <$W/list | tee "$OUT/timed.txt"
timeout 100 python3 bench/gpu_peer.py 20 2>&1 | grep -E "device|matmul|copy|add|rowsum|rowmax" | tee "$OUT/peer.txt"

# Tuning: a kernel that faults, then fast tuning with where its time went.
$L tune tests/gpu/fault.py --target cuda --space tests/gpu/fault.space.py --trials 2 \
  --db $W/fault.db >$W/fault.txt 2>&1
echo "fault while tuning: exit $?, $($L db export --db $W/fault.db 2>&1 | grep -o '"error": "[^"]*"' | head -1)"
for spec in "matmul_f16 4" "matmul_f32 8"; do
  set -- $spec
  t0=$(date +%s.%N)
  timeout 100 $L tune bench/gpu/$1.py --target cuda --strategy fast --topk $2 --db $W/fast.db \
    >$W/fast_$1.txt 2>&1
  echo "$1 fast top $2: $(grep -o 'main: best [0-9.]* ms' $W/fast_$1.txt) in" \
    "$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s;" \
    "$(grep -o 'time: .*' $W/fast_$1.txt)"
done
cp $W/fast_matmul_f32.txt "$OUT/" 2>/dev/null
$L build $W/matmul_f16.dlight.py --emit cuda --target cuda >"$OUT/matmul_f16.cu" 2>&1
