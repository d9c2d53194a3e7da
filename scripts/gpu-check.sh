#!/usr/bin/env bash
# The GPU check, in one command for a machine with an NVIDIA GPU.
#
#   scripts/gpu-check.sh --prepare   (here, with package access) gathers what
#       the GPU machine lacks into build/gpu-carry: the Debian packages of
#       Loom's libraries (unpacked there with dpkg -x, no root needed) and the
#       example programs of ../shared;
#   scripts/gpu-check.sh OUT [SECTION,...]   (on the GPU machine) builds
#       Loom, then runs the sections asked for (all by default), writing its
#       tables into OUT:
#         programs  every program with dlight's schedule against the interpreter
#         fault     a kernel that faults, under `loom run` and `loom tune`
#         tuning    a short tuning over a hand-written space
#         fast      fast tuning of the matmuls and a convolution (the policy's top 20)
#         space     tuning over the cuda design space, the long-tail seeds
#         bench     bench/gpu beside PyTorch (dlight's and hand schedules)
#         dispatch  products by cuBLAS through the dispatch pass, and --pipeline best
#         net       networks on the GPU: the ONNX cases and ResNet-18 (64x64,
#                   NCHW and NHWC, float32 and float16) checked against the
#                   interpreter, ResNet-18 at 224x224, batch 1 and 128, and
#                   in float16 at batch 128, beside PyTorch
#         nettune   (not by default) ResNet-18 float16 at batch 128 tuned by
#                   the fast strategy, then run with the records
#       The default sections stay under 8 minutes; dispatch and net take
#       about two and a half.
#   The cuBLAS and network sections need build/gpu-carry/models/resnet18.onnx
#   (--prepare writes it: tests/onnx/resnet.py --symbolic).
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
  mkdir -p $CARRY/models
  [ -f $CARRY/models/resnet18.onnx ] ||
    /usr/bin/python3 tests/onnx/resnet.py --symbolic -o $CARRY/models/resnet18.onnx || exit 1
  du -sh $CARRY
  exit 0
fi

OUT=${1:?usage: scripts/gpu-check.sh OUT [SECTION,...] | --prepare}
SECTIONS=${2:-programs,fault,tuning,fast,space,bench,dispatch,net}
want() { case ",$SECTIONS," in *",$1,"*) return 0 ;; esac; return 1; }
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
B=build-gpu
if [ -n "${LOOM:-}" ]; then
  say "using $LOOM"  # LOOM=PATH: that binary, built already
elif command -v cmake >/dev/null; then
  say "building"
  cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release >"$OUT/build.txt" 2>&1 &&
    make -C $B -j16 loom >>"$OUT/build.txt" 2>&1
  LOOM=$PWD/$B/loom
else
  # No cmake: the sources compiled directly, as CMakeLists.txt would.
  say "building"
  mkdir -p $B/obj
  find src -name '*.c' | xargs -P 16 -I{} sh -c \
    'o='$B'/obj/$(echo {} | tr / _).o; cc -O2 -std=c11 -D_GNU_SOURCE -fvisibility=hidden -Iinclude -Isrc -c {} -o $o' \
    >"$OUT/build.txt" 2>&1 &&
    cc -o $B/loom $B/obj/*.o -lisl -lsqlite3 -lxgboost -lprotobuf-c -lm -ldl -lpthread \
      >>"$OUT/build.txt" 2>&1
  LOOM=$PWD/$B/loom
fi
if [ ! -x "$LOOM" ]; then
  say "build failed"; tail -30 "$OUT/build.txt"; exit 1
fi

# ---- every program, dlight's schedule, against the interpreter ----------------
if want programs; then
say "programs: loom run --target cuda --verify"
scripts/gpu-verify.sh "$LOOM" "$OUT/verify.txt" 45 180 | tee -a "$OUT/log.txt"
fi

# ---- a kernel that faults is a failure, not a crash ---------------------------
if want fault; then
say "fault check"
"$LOOM" run tests/gpu/fault.py --target cuda --timeout 20000 >"$OUT/fault.txt" 2>&1
echo "exit $?" >>"$OUT/fault.txt"
"$LOOM" tune tests/gpu/fault.py --target cuda --space tests/gpu/fault.space.py --trials 2 \
  --db "$W/fault.db" >>"$OUT/fault.txt" 2>&1
echo "tune exit $?" >>"$OUT/fault.txt"
"$LOOM" db export --db "$W/fault.db" 2>&1 | grep -o '"error": "[^"]*"' >>"$OUT/fault.txt"
fi
small() { sed -e 's/16384, 16384/1024, 1024/g; s/16384, 1024/1024, 256/g; s/(16384,)/(1024,)/g; s/4096/256/g; s/8192/256/g' \
  -e 's/128, 64, 56, 56/2, 64, 8, 8/g; s/128, 64, 58, 58/2, 64, 10, 10/g; s/< 57/< 9/g' "$1"; }
: >"$OUT/bench_raw.txt"
: >"$W/fast_raw.txt"
if want tuning; then
say "tuning on the GPU"
small bench/gpu/add_f16.py >"$W/add_small.py"
timeout 120 "$LOOM" tune "$W/add_small.py" --target cuda --space bench/gpu/elementwise.space.py \
  --trials 16 --db "$W/tune.db" >"$W/tune.txt" 2>&1
echo "tuning exit $?" >>"$W/tune.txt"
tail -5 "$W/tune.txt" >>"$OUT/fault.txt"
fi

# ---- fast tuning: the policy's top 20, built and timed ------------------------
if want fast; then
say "fast tuning"
for name in matmul_f32 matmul_f16 conv2d_f32; do
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
fi

# ---- tuning over the cuda design space (MetaSchedule's rules) -----------------
if want space; then
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
fi

# ---- benchmarks, side by side with PyTorch ------------------------------------
if want bench; then
say "benchmarks"
# NAME:SCHEDULE, timed as dlight schedules it (the first time NAME comes,
# unless SCHEDULE ends in !) and by the hand schedule
# bench/gpu/SCHEDULE.sched.py (- for none).
seen=" "
for p in copy_f16:copy add_f16:elementwise rowsum_f16:rowreduce_threads rowmax_f16:rowreduce_threads \
         softmax_f16:- gemv_f16:- matmul_f32:matmul matmul_f16:matmul matmul_f16:matmul_wmma \
         matmul8k_f16:matmul_wmma! conv2d_f32:-; do
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
fi

# ---- products by cuBLAS, through the dispatch pass ----------------------------
if want dispatch; then
say "dispatch: cuBLAS"
for name in matmul_f32 matmul_f16 matmul_nt_f16 matmul8k_f16 gemv_f16; do
  small bench/gpu/$name.py >"$W/$name.small.py"
  v=$(timeout 60 "$LOOM" run "$W/$name.small.py" --target cuda --pipeline dispatch --verify --repeat 3 2>&1 | tail -1)
  t=$(timeout 60 "$LOOM" run bench/gpu/$name.py --target cuda --pipeline dispatch --repeat 20 2>&1 | tail -1)
  echo "$name cublas | $t | small: $v" >>"$OUT/bench_raw.txt"
done
for c in mm_kinds bmm gemv epilogue; do
  echo "$c: $(timeout 60 "$LOOM" run tests/dispatch/cases/$c.py --target cuda --pipeline dispatch,default \
    --verify 2>&1 | tr '\n' ' ')" | tee -a "$OUT/log.txt"
done
# --pipeline best: cuBLAS against dlight's schedule, measured.
for name in matmul_f32 matmul_f16; do
  sed 's/4096/1024/g' bench/gpu/$name.py >"$W/${name}_1024.py"
  echo "best $name 1024: $(timeout 90 "$LOOM" compile "$W/${name}_1024.py" --target cuda \
    --pipeline best --explain 2>&1 >/dev/null | tail -1)" | tee -a "$OUT/log.txt"
done
fi

# ---- networks on the GPU --------------------------------------------------------
NETS=
if want net; then
say "networks"
for net in convnet mlp layout misc math; do
  echo "$net: $(timeout 60 "$LOOM" model run tests/onnx/cases/$net.onnx --target cuda --verify \
    2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/log.txt"
done
R=$CARRY/models/resnet18.onnx
# ResNet-18 in both layouts: the convolutions are products of their im2col
# copies (dlight's Matmul), whose tiles read the input along its channels
# in NHWC, across them in NCHW.
# In float16 (--dtype float16: the weights rounded, the products summed
# in float32), the products fit the tensor cores where their tiles divide.
for run in "NCHW" "NHWC" "NCHW --dtype float16"; do
  echo "resnet18 b2 64x64 $run: $(timeout 90 "$LOOM" model run $R --dim batch=2 --dim height=64 \
    --dim width=64 --layout $run --target cuda --verify 2>&1 | tail -2 | tr '\n' ' ')" |
    tee -a "$OUT/log.txt"
done
for run in "1 NCHW" "128 NCHW" "128 NHWC" "128 NCHW f16" "128 NHWC f16"; do
  set -- $run
  b=$1 layout=$2 dt=${3:-}
  name=resnet18${dt:+_$dt}_b$b
  timeout 150 "$LOOM" model run $R --dim batch=$b --dim height=224 --dim width=224 --target cuda \
    --layout $layout ${dt:+--dtype float16} --repeat 10 --profile --explain >"$W/$name$layout.txt" 2>&1
  echo "$name 224 $layout: exit $? $(grep 'calls of' "$W/$name$layout.txt")" |
    tee -a "$OUT/log.txt"
  grep -A10 "^function  *calls" "$W/$name$layout.txt" >>"$OUT/log.txt"
  grep "all kernels" "$W/$name$layout.txt" >>"$OUT/log.txt"
  ms=$(grep -o 'run [0-9.]* ms' "$W/$name$layout.txt" | grep -o '[0-9.]*')
  echo "$name $layout | graph: ${ms:-none} ms | small: $(grep -c 'verified: 1 output' "$OUT/log.txt") checked" \
    >>"$OUT/bench_raw.txt"
done
NETS=resnet18
fi

# ---- a network tuned on the GPU --------------------------------------------------
if want nettune; then
say "ResNet-18 float16 b128 tuned (fast)"
R=$CARRY/models/resnet18.onnx
NET="$R --dim batch=128 --dim height=224 --dim width=224 --target cuda --dtype float16"
start=$(date +%s)
# shellcheck disable=SC2086
timeout 300 "$LOOM" model tune $NET --strategy fast --topk 8 --db $W/net.db >"$W/nettune.txt" 2>&1
echo "tuned in $(($(date +%s) - start)) s (exit $?): $(tail -1 "$W/nettune.txt")" | tee -a "$OUT/log.txt"
# shellcheck disable=SC2086
timeout 150 "$LOOM" model run $NET --db $W/net.db --repeat 10 --profile >"$W/nettuned.txt" 2>&1
grep -A10 "^function  *calls" "$W/nettuned.txt" >>"$OUT/log.txt"
ms=$(grep -o 'run [0-9.]* ms' "$W/nettuned.txt" | grep -o '[0-9.]*')
echo "resnet18_f16_b128 tuned | graph: ${ms:-none} ms | small: tuned records" >>"$OUT/bench_raw.txt"
NETS=resnet18
fi

say "peer (PyTorch)"
cat "$W/fast_raw.txt" >>"$OUT/bench_raw.txt"
timeout 120 python3 bench/gpu_peer.py 20 >"$OUT/peer.txt" 2>&1
[ -n "$NETS" ] && timeout 120 python3 bench/gpu_peer_net.py >>"$OUT/peer.txt" 2>&1
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
    small = line.split("|")[2]
    is_ok = "verify: ok" in small or re.search(r"[1-9][0-9]* checked", small)
    ok = "ok" if is_ok else small.strip()[:80]
    if not m:
        rows.append("| %s | %s | failed: %s | | | | %s |" % (name, kind, line.split("|")[1].strip()[:80], ok))
        continue
    ms = float(m.group(1))
    ref = peer.get(name)
    n = 8192 if name.startswith("matmul8k") else 4096
    flops = 1.82e9 * int(name.split("_b")[1]) if name.startswith("resnet") else \
        2 * 128 * 64 * 56 * 56 * 64 * 9 if name.startswith("conv2d") else 2 * n ** 3
    rate = ("%.0f GB/s" % (bytes_moved[name] / ms / 1e6)) if name in bytes_moved else \
           ("%.1f TFLOP/s" % (flops / ms / 1e9))
    rows.append("| %s | %s | %.4f | %s | %s | %s | %s |" % (
        name, kind, ms, "%.4f" % ref if ref else "-", "%.2f" % (ref / ms) if ref else "-", rate, ok))
open(out + "/bench.md", "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
EOF
say "done"
