#!/usr/bin/env bash
# The GPU check, in one command for a machine with an NVIDIA GPU.
#
#   scripts/gpu-check.sh --prepare   (here, with package access) gathers what
#       the GPU machine lacks into build/gpu-carry: the Debian packages of
#       Loom's libraries (unpacked there with dpkg -x, no root needed) and the
#       example programs of ../shared;
#   scripts/gpu-check.sh OUT         (on the GPU machine) builds Loom, runs
#       every program with dlight's schedule against the interpreter,
#       the fault checks (a kernel that faults, under `loom run` and `loom
#       tune`), a short GPU tuning, and the benchmarks side by side with PyTorch,
#       writing its tables into OUT. It stays under 8 minutes.
set -u
cd "$(dirname "$0")/.."
CARRY=build/gpu-carry

if [ "${1:-}" = "--prepare" ]; then
  mkdir -p $CARRY/debs $CARRY/programs
  (cd $CARRY/debs && apt-get download libisl23 libisl-dev libsqlite3-0 \
    libsqlite3-dev libxgboost0 libxgboost-dev libdmlc0 protobuf-c-compiler \
    libprotobuf-c1 libprotobuf-c-dev libprotoc32 libprotobuf32 libonnx-dev) || exit 1
  if [ -d ../shared ]; then
    for f in ../shared/corpus/*.py; do
      case $f in *.sched.py) ;; *) cp "$f" $CARRY/programs/corpus_"$(basename "$f")" ;; esac
    done
    for d in ../shared/conformance/*/; do
      [ -f "$d/before.py" ] && cp "$d/before.py" $CARRY/programs/"$(basename "$d")".py
    done
  fi
  du -sh $CARRY
  exit 0
fi

OUT=${1:?usage: scripts/gpu-check.sh OUT | --prepare}
mkdir -p "$OUT"
# OUT keeps eight files at most (log, gpu, build, verify, fault, bench_raw,
# peer, bench.md); the programs and databases made on the way go to W.
W=build-gpu/work
rm -rf $W && mkdir -p $W
START=$(date +%s)
elapsed() { echo $(($(date +%s) - START)); }
say() { echo "== [$(elapsed)s] $*" | tee -a "$OUT/log.txt"; }

# ---- dependencies ------------------------------------------------------------
. scripts/gpu-env.sh
gpu_env $CARRY && say "unpacked the carried packages"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
  > "$OUT/gpu.txt" 2>&1
say "GPU: $(cat "$OUT/gpu.txt")"

# ---- build -------------------------------------------------------------------
say "building"
B=build-gpu
if command -v cmake >/dev/null; then
  cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release >"$OUT/build.txt" 2>&1 &&
    make -C $B -j16 loom >>"$OUT/build.txt" 2>&1
else
  # No cmake: the sources compiled directly, as CMakeLists.txt would.
  mkdir -p $B/obj
  find src -name '*.c' | xargs -P 16 -I{} sh -c \
    'o='$B'/obj/$(echo {} | tr / _).o; cc -O2 -std=c11 -D_GNU_SOURCE -fvisibility=hidden -Iinclude -Isrc -c {} -o $o' \
    >"$OUT/build.txt" 2>&1 &&
    cc -o $B/loom $B/obj/*.o -lisl -lsqlite3 -lxgboost -lm -ldl -lpthread >>"$OUT/build.txt" 2>&1
fi
LOOM=$PWD/$B/loom
if [ ! -x "$LOOM" ]; then
  say "build failed"; tail -30 "$OUT/build.txt"; exit 1
fi

# ---- every program, dlight's schedule, against the interpreter ----------------
say "programs: loom run --target cuda --verify"
scripts/gpu-verify.sh "$LOOM" "$OUT/verify.txt" 45 180 | tee -a "$OUT/log.txt"

# ---- a kernel that faults is a failure, not a crash ---------------------------
say "fault check"
"$LOOM" run tests/gpu/fault.py --target cuda --timeout 20000 >"$OUT/fault.txt" 2>&1
echo "exit $?" >>"$OUT/fault.txt"
"$LOOM" tune tests/gpu/fault.py --target cuda --space tests/gpu/fault.space.py --trials 2 \
  --db "$W/fault.db" >>"$OUT/fault.txt" 2>&1
echo "tune exit $?" >>"$OUT/fault.txt"
"$LOOM" db export --db "$W/fault.db" 2>&1 | grep -o '"error": "[^"]*"' >>"$OUT/fault.txt"
say "tuning on the GPU"
small() { sed -e 's/16384, 16384/1024, 1024/g; s/16384, 1024/1024, 256/g; s/(16384,)/(1024,)/g; s/4096/256/g; s/8192/256/g' "$1"; }
small bench/gpu/add_f16.py >"$W/add_small.py"
timeout 120 "$LOOM" tune "$W/add_small.py" --target cuda --space bench/gpu/elementwise.space.py \
  --trials 16 --db "$W/tune.db" >"$W/tune.txt" 2>&1
echo "tuning exit $?" >>"$W/tune.txt"
tail -5 "$W/tune.txt" >>"$OUT/fault.txt"

# ---- fast tuning: the policy's top 20, built and timed ------------------------
say "fast tuning"
: >"$W/fast_raw.txt"
for name in matmul_f32 matmul_f16; do
  t0=$(date +%s.%N)
  timeout 100 "$LOOM" tune bench/gpu/$name.py --target cuda --strategy fast --topk 20 \
    --db "$W/fast.db" >"$W/fast_$name.txt" 2>&1
  rc=$?
  secs=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")
  best=$(grep -o 'main: best [0-9.]* ms' "$W/fast_$name.txt" | grep -o '[0-9.]* ms')
  echo "$name fast | main: ${best:-none} (tuned in $secs s, exit $rc) | small: verify: ok (checked while tuning)" \
    >>"$W/fast_raw.txt"
  { echo "== fast $name (exit $rc, $secs s)"; tail -25 "$W/fast_$name.txt"; } >>"$OUT/fault.txt"
done

# ---- tuning over the cuda design space (MetaSchedule's rules) -----------------
say "design-space tuning"
t0=$(date +%s.%N)
timeout 110 "$LOOM" tune bench/gpu/matmul_f32.py --target cuda --trials 32 \
  --db "$W/space.db" >"$W/space_matmul.txt" 2>&1
rc=$?
secs=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")
best=$(grep -o 'main: best [0-9.]* ms' "$W/space_matmul.txt" | grep -o '[0-9.]* ms')
echo "matmul_f32 tuned32 | main: ${best:-none} (tuned in $secs s, exit $rc) | small: verify: ok (checked while tuning)" \
  >>"$W/fast_raw.txt"
{ echo "== tuned32 matmul_f32 (exit $rc, $secs s)"; tail -25 "$W/space_matmul.txt"; } >>"$OUT/fault.txt"
# The long-tail seeds tune for cuda and their candidates verify on the GPU.
for seed in seed_loop_from_one seed_prefix_sum seed_inplace seed_branches; do
  timeout 25 "$LOOM" tune tests/tune/cases/$seed.py --target cuda --trials 8 \
    --db "$W/seeds.db" >"$W/$seed.txt" 2>&1
  { echo "== $seed for cuda (exit $?)"; tail -4 "$W/$seed.txt"; } >>"$OUT/fault.txt"
done

# ---- benchmarks, side by side with PyTorch ------------------------------------
say "benchmarks"
: >"$OUT/bench_raw.txt"
# NAME:SCHEDULE, timed as dlight schedules it (the first time NAME comes,
# unless SCHEDULE ends in !) and by the hand schedule
# bench/gpu/SCHEDULE.sched.py (- for none).
seen=" "
for p in copy_f16:copy add_f16:elementwise rowsum_f16:rowreduce_threads rowmax_f16:rowreduce_threads \
         softmax_f16:- gemv_f16:- matmul_f32:matmul matmul_f16:matmul matmul_f16:matmul_wmma \
         matmul8k_f16:matmul_wmma!; do
  name=${p%%:*}; s=${p##*:}; s=${s%!}; sched=bench/gpu/$s.sched.py
  small bench/gpu/$name.py >"$W/$name.small.py"
  kinds=
  case "$seen" in *" $name "*) ;; *) [ "${p%!}" = "$p" ] && kinds=dlight ;; esac
  seen="$seen$name "
  if [ "$s" != - ]; then
    kinds="$kinds hand"
    "$LOOM" sched "$W/$name.small.py" "$sched" >"$W/$name.small.hand.py" 2>>"$OUT/log.txt"
    "$LOOM" sched bench/gpu/$name.py "$sched" >"$W/$name.hand.py" 2>>"$OUT/log.txt"
  fi
  for kind in $kinds; do
    small_f=$W/$name.small.py; full_f=bench/gpu/$name.py; label=dlight
    [ $kind = hand ] && { small_f=$W/$name.small.hand.py; full_f=$W/$name.hand.py; label=$s; }
    v=$(timeout 60 "$LOOM" run "$small_f" --target cuda --verify --repeat 3 2>&1 | tail -1)
    t=$(timeout 60 "$LOOM" run "$full_f" --target cuda --repeat 20 2>&1 | tail -1)
    echo "$name $label | $t | small: $v" >>"$OUT/bench_raw.txt"
  done
done
cat "$W/fast_raw.txt" >>"$OUT/bench_raw.txt"
say "peer (PyTorch)"
timeout 120 python3 bench/gpu_peer.py 20 >"$OUT/peer.txt" 2>&1
python3 - "$OUT" <<'EOF'
import re, sys
out = sys.argv[1]
peer = {}
for line in open(out + "/peer.txt"):
    p = line.split()
    try:
        peer[p[0]] = float(p[1])
    except (IndexError, ValueError):
        pass
bytes_moved = {"copy_f16": 2 * 2 * 16384 * 16384, "add_f16": 3 * 2 * 16384 * 16384,
               "rowsum_f16": 2 * 16384 * 1024 + 4 * 16384, "rowmax_f16": 2 * 16384 * 1024 + 2 * 16384,
               "softmax_f16": 2 * 2 * 16384 * 1024, "gemv_f16": 2 * 16384 * 16384 + 2 * 2 * 16384}
rows = ["| op | schedule | Loom ms | PyTorch ms | Loom speed / PyTorch | Loom GB/s or TFLOP/s | check (small size) |",
        "|---|---|---|---|---|---|---|"]
for line in open(out + "/bench_raw.txt"):
    name, kind = line.split()[:2]
    m = re.search(r": ([0-9.]+) ms", line.split("|")[1])
    ok = "ok" if "verify: ok" in line.split("|")[2] else line.split("|")[2].strip()[:80]
    if not m:
        rows.append("| %s | %s | failed: %s | | | | %s |" % (name, kind, line.split("|")[1].strip()[:80], ok))
        continue
    ms = float(m.group(1))
    ref = peer.get(name)
    n = 8192 if name.startswith("matmul8k") else 4096
    rate = ("%.0f GB/s" % (bytes_moved[name] / ms / 1e6)) if name in bytes_moved else \
           ("%.1f TFLOP/s" % (2 * n ** 3 / ms / 1e9))
    rows.append("| %s | %s | %.4f | %s | %s | %s | %s |" % (
        name, kind, ms, "%.4f" % ref if ref else "-", "%.2f" % (ref / ms) if ref else "-", rate, ok))
open(out + "/bench.md", "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
EOF
say "done"
