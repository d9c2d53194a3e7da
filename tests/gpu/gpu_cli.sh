#!/usr/bin/env bash
# The GPU path from the command line, with or without a GPU: every program
# of tests/gpu/errors is refused where its first line says; the CUDA C of a
# shared-memory matmul has its barriers and launch bounds; a store outside
# the threadIdx loop runs in thread 0; without a GPU `loom run --target
# cuda` says so and exits 1, with one it verifies against the interpreter.
#   usage: gpu_cli.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
here=$root/tests/gpu
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
export LOOM_CUBIN_CACHE=$tmp/cubins

check() { # description condition-command...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $what"; fi
}

for f in "$here"/errors/*.py; do
  want=$(sed -n '1s/^# expect: //p' "$f")
  "$loom" build "$f" --emit cuda >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc = 1 ] && grep -Fq -- "$(basename "$f"):$want" "$tmp/err" &&
     ! grep -Eq "Sanitizer|runtime error" "$tmp/err"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL $(basename "$f"): exit $rc, expected '$want':"; cat "$tmp/err"
  fi
done

"$loom" build "$here/programs/matmul_shared_tiles.py" --emit cuda >"$tmp/mm.cu"
check "matmul builds" test -s "$tmp/mm.cu"
check "two barriers: after the fetches, at the end of each k step" \
  test "$(grep -c '__syncthreads()' "$tmp/mm.cu")" = 2
check "two shared tiles" test "$(grep -c '__shared__ float' "$tmp/mm.cu")" = 2
check "launch bounds" grep -q '__launch_bounds__(256) main_kernel0' "$tmp/mm.cu"
check "registers for the accumulator" grep -q 'float C_local\[64\]' "$tmp/mm.cu"

# The tensor-core schedule: fragments per warp, in registers (constant
# indices once unrolled), barriers around the shared tiles.
sed -e 's/4096/256/g' "$root/bench/gpu/matmul_f16.py" >"$tmp/mm16.py"
"$loom" sched "$tmp/mm16.py" "$root/bench/gpu/matmul_wmma.sched.py" >"$tmp/mm16_wmma.py"
"$loom" build "$tmp/mm16_wmma.py" --emit cuda >"$tmp/wmma.cu"
check "wmma: a warp's 16 accumulators" \
  grep -q 'fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> C_wmma_accumulator\[16\]' "$tmp/wmma.cu"
check "wmma: 4 A fragments per k step" grep -q 'matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> A_shared_wmma_matrix_a\[4\]' "$tmp/wmma.cu"
check "wmma: fragment indices in the loops' terms" \
  test "$(grep -c 'mma_sync(C_wmma_accumulator\[((i_2 \* 4) + j_2)\], A_shared_wmma_matrix_a\[i_2\], B_shared_wmma_matrix_b\[j_2\]' "$tmp/wmma.cu")" = 1
check "wmma: two barriers" test "$(grep -c '__syncthreads()' "$tmp/wmma.cu")" = 2
check "wmma: lanes and warps" grep -q '__launch_bounds__(128)' "$tmp/wmma.cu"

# storage_align pads the shared tiles' rows (64 + 8 and 128 + 8 halves), and
# the fragment loads read them with the padded stride.
check "storage_align: padded A tile" grep -q '__shared__ uint16_t A_shared\[9208\]' "$tmp/wmma.cu"
check "storage_align: padded B tile" grep -q '__shared__ uint16_t B_shared\[8696\]' "$tmp/wmma.cu"
check "storage_align: fragment loads at stride 72" grep -q 'const int32_t A_s0 = 72;' "$tmp/wmma.cu"

# Vectorized copies move 16 bytes at a time where both offsets are proven
# aligned; one element off, the copy stays scalar.
"$loom" build "$here/programs/vector_copies.py" --emit cuda >"$tmp/vec.cu"
check "vector copies: three of 16 bytes" \
  test "$(grep -c '^ *\*(uint4 \*)(.*) = \*(const uint4 \*)' "$tmp/vec.cu")" = 3
check "vector copies: a misaligned one stays scalar" \
  grep -q 'F\[i_1\] = loom_f16_storef(loom_f16_load(E\[(i_1 + 1)\]))' "$tmp/vec.cu"
"$loom" build "$here/programs/vector_elementwise.py" --emit cuda >"$tmp/vecew.cu"
check "vector loops: a float16 sum stored 16 bytes at a time" \
  grep -q '^ *\*(uint4 \*)(C + (((r \* 256) + c))) = vec;' "$tmp/vecew.cu"
check "vector loops: its inputs loaded so" \
  test "$(grep -c 'uint4 vec_[12] = \*(const uint4 \*)([AB] + ' "$tmp/vecew.cu")" = 2
check "vector loops: a bias that does not move with the lanes read as it is" \
  grep -q 'loom_f16_load(bias\[r\])' "$tmp/vecew.cu"
check "vector loops: float16 to float32 in two chunks of four lanes" \
  test "$(grep -c 'uint2 vec_[0-9]* = \*(const uint2 \*)(A + ' "$tmp/vecew.cu")" = 2
"$loom" build "$here/programs/rowsum_vector_loads.py" --emit cuda >"$tmp/rowvec.cu"
check "unrolled reduction: a thread's 8 halves in one 16-byte load" \
  grep -q 'vec\[0\] = \*(const uint4 \*)(A + (((vi \* 1024) + vj)));' "$tmp/rowvec.cu"
check "unrolled reduction: its steps read the register" \
  grep -q 'red_acc\[0\] + ((float)loom_f16_load(((const uint16_t \*)vec)\[j_2\]))' "$tmp/rowvec.cu"
check "unrolled reduction: both inputs of a dot product in vectors" \
  test "$(grep -c 'vec_[12]\[0\] = \*(const uint4 \*)' "$tmp/rowvec.cu")" = 2
"$loom" dlight "$tmp/mm16.py" >"$tmp/mm16_dlight.py"
"$loom" build "$tmp/mm16_dlight.py" --emit cuda >"$tmp/mm16_dlight.cu"
check "dlight's tensor-core matmul: 16-byte copies into shared memory" \
  test "$(grep -c '(uint4 \*)(A_shared\|(uint4 \*)(B_shared' "$tmp/mm16_dlight.cu")" = 2
check "dlight's tensor-core matmul: padded rows" grep -q 'const int32_t A_s0 = 72;' "$tmp/mm16_dlight.cu"

"$loom" build "$here/programs/once_per_block.py" --emit cuda >"$tmp/once.cu"
check "store outside threadIdx runs in thread 0" grep -q 'if ((threadIdx_x == 0))' "$tmp/once.cu"

"$loom" build "$root/examples/matmul_16.py" --emit cuda >"$tmp/default.cu"
check "default schedule binds blocks and threads" \
  grep -q 'const int32_t threadIdx_x = (int32_t)threadIdx.x;' "$tmp/default.cu"
"$loom" build "$root/examples/matmul_16.py" --emit cuda --target cpu >/dev/null 2>"$tmp/err"
check "cuda C needs a cuda target" test $? = 2

"$loom" run "$here/programs/once_per_block.py" --target cuda --verify >"$tmp/out" 2>"$tmp/err"
rc=$?
if ! grep -q "NVRTC" "$tmp/err"; then
  # The cubin was cached; a damaged entry is compiled again and replaced.
  check "cubin cached" test "$(ls "$tmp/cubins" | grep -c '\.sm_90\.cubin$')" = 1
  for f in "$tmp"/cubins/*.cubin; do echo "not a cubin" >"$f"; done
  "$loom" run "$here/programs/once_per_block.py" --target cuda >/dev/null 2>"$tmp/err2"
  check "damaged cache entry recompiled" grep -q "loom-cubin 1" "$tmp"/cubins/*.cubin
  check "damaged cache entry: same outcome" \
    test "$(grep -c 'no GPU here' "$tmp/err2")" = "$(grep -c 'no GPU here' "$tmp/err")"
fi
if grep -q "no GPU here" "$tmp/err"; then
  check "no GPU: exit 1" test $rc = 1
elif grep -q "NVRTC" "$tmp/err"; then
  echo "NVRTC is missing: loom run --target cuda not checked"
else
  check "on the GPU: verified" grep -q "verify: ok" "$tmp/out"
fi

# A network on the GPU: its functions built by the CUDA backend (products by
# cuBLAS), run in order on the device; without a GPU, said so.
for net in convnet mlp; do
  "$loom" model run "$root/tests/onnx/cases/$net.onnx" --target cuda --verify >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if grep -q "no GPU here" "$tmp/err"; then
    check "$net on cuda, no GPU: exit 1" test $rc = 1
  elif grep -q "NVRTC" "$tmp/err"; then
    echo "NVRTC is missing: $net not run on cuda"
  else
    check "$net on the GPU: verified" grep -q "verified: 1 output" "$tmp/out"
  fi
done

# Tuning for the GPU: candidates are built with NVRTC and measured on the
# GPU; without one each is a failure on record, and the search finishes.
"$loom" tune "$here/programs/once_per_block.py" --target cuda --trials 4 \
  --space "$here/once_per_block.space.py" --db "$tmp/t.db" >"$tmp/out" 2>&1
rc=$?
check "cuda tuning finishes" test $rc = 0
check "every trial is on record" grep -q "trials 4/4\|trials [1-4]/4" "$tmp/out"
if grep -q "failures 0" "$tmp/out"; then
  check "tuned on the GPU" grep -q "best" "$tmp/out"
else
  "$loom" db export --db "$tmp/t.db" >"$tmp/rows" 2>&1
  check "failures say why" grep -q "no GPU here\|NVRTC" "$tmp/rows"
fi

# The long-tail seeds, as written and at 2^20 elements (1000 x 1000 rows
# under the if), tune over the cuda design space: every candidate lowers
# for the GPU and compiles (NVRTC), and is measured on the GPU or, without
# one, on record as a failure that says so.
for seed in seed_loop_from_one seed_prefix_sum seed_inplace seed_branches; do
  cp "$root/tests/tune/cases/$seed.py" "$tmp/$seed.py"
  case $seed in
  seed_branches) sed 's/100\b/1000/g' "$tmp/$seed.py" >"$tmp/${seed}_big.py" ;;
  seed_prefix_sum) sed 's/100\b/1048576/g; s/99\b/1048575/g' "$tmp/$seed.py" >"$tmp/${seed}_big.py" ;;
  *) sed 's/100\b/1048576/g' "$tmp/$seed.py" >"$tmp/${seed}_big.py" ;;
  esac
done
for seed in seed_loop_from_one seed_prefix_sum seed_inplace seed_branches \
            seed_loop_from_one_big seed_prefix_sum_big seed_inplace_big seed_branches_big; do
  "$loom" tune "$tmp/$seed.py" --target cuda --trials 8 \
    --db "$tmp/seeds.db" >"$tmp/out" 2>&1
  check "$seed tunes for cuda" test $? = 0
  check "$seed: candidates measured" grep -q "trials [1-8]/8" "$tmp/out"
  check "$seed: none rejected" grep -q "rejected 0" "$tmp/out"
done
# Without a GPU each failure says so; none may be NVRTC refusing the CUDA C
# or the lowering refusing a candidate (under a loaded machine a slow step
# may time out instead: that says nothing of the code, and is printed).
"$loom" db export --db "$tmp/seeds.db" >"$tmp/rows" 2>&1
grep -o '"error": "[^"]*"' "$tmp/rows" | grep -v '"error": "no GPU here' | sort | uniq -c
if grep -q '"error": "NVRTC not found' "$tmp/rows"; then
  echo "NVRTC is missing: the seeds' candidates were not compiled"
else
  check "seeds: NVRTC and the lowering took every candidate" \
    test "$(grep -o '"error": "[^"]*"' "$tmp/rows" | grep -v 'timed out' |
      grep -ci 'nvrtc\|compil\|lower\|cuda c')" = 0
fi

echo "gpu cli: $pass passed, $fail failed"
[ $fail = 0 ]
