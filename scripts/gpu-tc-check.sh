#!/usr/bin/env bash
# Tensor cores on the GPU machine, in about two minutes: builds Loom (with
# the carried packages where the machine lacks them, scripts/gpu-env.sh),
# checks and times the float16 matmuls (A B and A Bᵀ) as dlight schedules
# them (wmma) and the top 4 of fast tuning, beside PyTorch in the same run.
#   usage: scripts/gpu-tc-check.sh OUT   (after scripts/gpu-check.sh --prepare)
set -u
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu-tc-check.sh OUT}
mkdir -p "$OUT"
. scripts/gpu-env.sh
gpu_env build/gpu-carry
B=build-gpu W=build-gpu/tc
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release >"$OUT/build.txt" 2>&1 &&
  make -C $B -j16 loom >>"$OUT/build.txt" 2>&1 || { tail -20 "$OUT/build.txt"; exit 1; }
L=$B/loom
mkdir -p $W
for n in matmul_f16 matmul_nt_f16 matmul8k_f16; do
  sed -e 's/4096/256/g; s/8192/256/g' bench/gpu/$n.py >$W/$n.small.py
  echo "$n dlight verify: $(timeout 60 $L run $W/$n.small.py --target cuda --verify --repeat 3 2>&1 | tail -1)"
  echo "$n dlight: $(timeout 60 $L run bench/gpu/$n.py --target cuda --repeat 20 2>&1 | tail -1)"
done
# The hand schedule with its shared tiles padded (storage_align, 8 halves a
# row) beside it: fragment loads off bank conflicts.
{ cat bench/gpu/matmul_wmma.sched.py
  echo 'sch.storage_align(a_sh, 0, 0, 32, 8)'
  echo 'sch.storage_align(b_sh, 0, 0, 32, 8)'; } >$W/padded.sched.py
$L sched $W/matmul8k_f16.small.py $W/padded.sched.py >$W/padded.small.py &&
  $L sched bench/gpu/matmul8k_f16.py $W/padded.sched.py >$W/padded.py &&
  echo "matmul8k_f16 padded verify: $(timeout 60 $L run $W/padded.small.py --target cuda --verify --repeat 3 2>&1 | tail -1)" &&
  echo "matmul8k_f16 padded: $(timeout 60 $L run $W/padded.py --target cuda --repeat 20 2>&1 | tail -1)"
t0=$(date +%s.%N)
timeout 100 $L tune bench/gpu/matmul_f16.py --target cuda --strategy fast --topk 4 --db $W/fast.db \
  >$W/fast.txt 2>&1
echo "matmul_f16 fast top 4: $(grep -o 'main: best [0-9.]* ms' $W/fast.txt) in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
$L dlight bench/gpu/matmul_f16.py --target cuda >$W/dl.py && $L build $W/dl.py --emit cuda --target cuda >"$OUT/matmul_f16.cu" 2>&1
timeout 100 python3 bench/gpu_peer.py 20 2>&1 | grep -E "device|matmul"
