#!/usr/bin/env bash
# The dispatch pass and the module pipeline from the command line: products
# go to BLAS and verify against the interpreter; the C holds the call; the
# first pass that takes a function keeps it, in the order given; bad
# pipelines are usage errors.
#   usage: dispatch_cli.sh LOOM SOURCE_ROOT
set -u
loom=$1 root=$2
cases=$root/tests/dispatch/cases
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # description condition-command...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $what"; fi
}

"$loom" run "$cases/mm_kinds.py" --pipeline dispatch,default --verify --explain \
  >"$tmp/out" 2>"$tmp/why"
check "kinds: exit 0" test $? = 0
check "kinds: four verified" test "$(grep -c 'verify: ok' "$tmp/out")" = 4
check "kinds: three to BLAS" test "$(grep -c 'dispatch   1 loop nest(s) computed by BLAS' "$tmp/why")" = 3
check "kinds: relu as written" grep -q '^relu  *default  *as written' "$tmp/why"

"$loom" run "$cases/bmm.py" --pipeline dispatch --verify >"$tmp/out" 2>&1
check "batches: three verified" test "$(grep -c 'verify: ok' "$tmp/out")" = 3
"$loom" build "$cases/bmm.py" --emit c --pipeline dispatch >"$tmp/bmm.c"
check "batches: a product per batch" test "$(grep -c 'for (int64_t batch = 0; batch < 3; ++batch)' "$tmp/bmm.c")" = 2
check "batches: B shared, one product of 60 rows" grep -q 'loom_gemm(101, 111, 112, 60, 28, 12, 1, A, 12, W, 12, 0, C, 28)' "$tmp/bmm.c"

"$loom" run "$cases/gemv.py" --pipeline dispatch --verify >"$tmp/out" 2>&1
check "gemv: two verified" test "$(grep -c 'verify: ok' "$tmp/out")" = 2
"$loom" build "$cases/gemv.py" --emit c --pipeline dispatch >"$tmp/gemv.c"
check "gemv: sgemv as stored" grep -q 'loom_gemv(101, 111, 48, 40, 1, A, 40, x, 1, 0, y, 1)' "$tmp/gemv.c"
check "gemv: dgemv transposed, accumulating" grep -q 'loom_gemv(101, 112, 40, 48, 1, A, 48, x, 1, 1, y, 1)' "$tmp/gemv.c"

# Convolutions go to oneDNN (the pad nest with its conv) and verify against
# the interpreter; a mark that describes another convolution is caught.
"$loom" run "$cases/conv.py" --pipeline dispatch,default --verify --explain \
  >"$tmp/out" 2>"$tmp/why"
check "conv: exit 0" test $? = 0
check "conv: four verified" test "$(grep -c 'verify: ok' "$tmp/out")" = 4
check "conv: four to oneDNN" test "$(grep -c 'dispatch   1 loop nest(s) computed by oneDNN' "$tmp/why")" = 4
"$loom" build "$cases/conv.py" --emit c --pipeline dispatch >"$tmp/conv.c"
check "conv: the C makes oneDNN's convolution" grep -q 'dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference' "$tmp/conv.c"
check "conv: NHWC padded by one" grep -q 'shape\[17\] = {1, 16, 14, 14, 24, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};' "$tmp/conv.c"
check "conv: NCHW with stride 2" grep -q 'shape\[17\] = {2, 8, 17, 15, 12, 8, 7, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0};' "$tmp/conv.c"
check "conv: four calls" test "$(grep -c 'int32_t rc = loom_conv_loom_.*(X, W, Y, NULL, NULL);' "$tmp/conv.c")" = 4
check "conv: without oneDNN's header, the loops" cc -fsyntax-only -fopenmp -DLOOM_DNNL_TRIED "$tmp/conv.c"
"$loom" compile "$cases/conv.py" --pipeline dispatch -o "$tmp/conv.py"
sed '0,/"loom.padding": \[T.int64(1), T.int64(1), T.int64(1), T.int64(1)\]/s//"loom.padding": [T.int64(0), T.int64(0), T.int64(2), T.int64(2)]/' \
  "$tmp/conv.py" >"$tmp/conv_bad.py"
check "conv: a mark edited" bash -c "! cmp -s '$tmp/conv.py' '$tmp/conv_bad.py'"
"$loom" run "$tmp/conv_bad.py" --func nhwc_pad --verify >"$tmp/out" 2>&1
check "conv: a wrong padding fails to verify" grep -q 'wrong result: Y differs from the interpreter' "$tmp/out"
"$loom" run "$tmp/conv.py" --func nhwc_pad --verify >"$tmp/out" 2>&1
check "conv: the marked module verifies" grep -q 'verify: ok' "$tmp/out"
sed 's/T.float32(0.0))$/T.float32(1.0))/' "$cases/conv.py" >"$tmp/conv_ones.py"
"$loom" compile "$tmp/conv_ones.py" --pipeline dispatch --explain >/dev/null 2>"$tmp/why"
check "conv: a pad of ones refused, said why" grep -q "^nhwc_pad  *(none)  *dispatch: block 'pad' pads with something other than zero" "$tmp/why"

# A conv's bias, residual and ReLU nests go into its call as oneDNN's bias
# and post-ops (NHWC); after an NCHW conv they stay loops.
"$loom" run "$cases/conv_post.py" --pipeline dispatch,default --verify >"$tmp/out" 2>&1
check "conv_post: four verified" test "$(grep -c 'verify: ok' "$tmp/out")" = 4
"$loom" compile "$cases/conv_post.py" --pipeline dispatch -o "$tmp/conv_post.py"
"$loom" build "$tmp/conv_post.py" --emit c >"$tmp/conv_post.c"
check "conv_post: a bias, an addition and a ReLU" \
  grep -q 'loom_dnnl_conv_make(&c, shape, 0, 0, 1, "ar");' "$tmp/conv_post.c"
check "conv_post: the call stores Z and adds R" \
  grep -q 'loom_conv_loom_bias_5fadd_5frelu_0(X, W, Z, B, (const float \*const\[\]){R});' "$tmp/conv_post.c"
check "conv_post: a ReLU alone" grep -q 'loom_conv_loom_relu_5fonly_0(X, W, Z, NULL, NULL);' "$tmp/conv_post.c"
check "conv_post: a ReLU, then an addition" \
  grep -q 'loom_dnnl_conv_make(&c, shape, 0, 0, 0, "ra");' "$tmp/conv_post.c"
check "conv_post: NCHW keeps its bias a loop" \
  grep -q 'loom_conv_loom_nchw_5fbias_0(X, W, Y, NULL, NULL);' "$tmp/conv_post.c"
check "conv_post: the marks read back" grep -q '"loom.post": \["add:R", "relu"\]' "$tmp/conv_post.py"
# The nests after the conv no longer marked (as a schedule might leave
# them): the conv and they are printed as loops, and still verify.
sed 's/for n in T.serial(1, annotations={"loom.taken_by": "dnnl_convolution_forward"})/for n in T.serial(1)/' \
  "$tmp/conv_post.py" >"$tmp/conv_post_unmarked.py"
"$loom" build "$tmp/conv_post_unmarked.py" --emit c >"$tmp/conv_post_unmarked.c"
check "conv_post: unmarked nests make the conv loops" \
  bash -c "! grep -q 'loom_conv_loom_bias_5fadd_5frelu_0(X' '$tmp/conv_post_unmarked.c'"
"$loom" run "$tmp/conv_post_unmarked.py" --func bias_add_relu --verify >"$tmp/out" 2>&1
check "conv_post: and verify" grep -q 'verify: ok' "$tmp/out"
# A taken ReLU edited to max(Y, 1): the call computes the mark's ReLU, and
# verifying says so.
sed 's/T.max(Ys\[vn, vh, vw, vc\], T.float32(0.0))/T.max(Ys[vn, vh, vw, vc], T.float32(1.0))/' \
  "$tmp/conv_post.py" >"$tmp/conv_post_bad.py"
check "conv_post: the ReLU edited" bash -c "! cmp -s '$tmp/conv_post.py' '$tmp/conv_post_bad.py'"
"$loom" run "$tmp/conv_post_bad.py" --func bias_add_relu --verify >"$tmp/out" 2>&1
check "conv_post: an edited nest fails to verify" grep -q 'wrong result: Z differs from the interpreter' "$tmp/out"

# 3x3 stride-1 convolutions of 64 channels and 100 output pixels or more
# go to oneDNN's Winograd where the machine has it (AVX-512), their data
# reordered to its blocked layout and back, the residual into the blocked
# output; below the bar, or without AVX-512, the direct convolution. All
# verify against the interpreter.
ONEDNN_VERBOSE=1 "$loom" run "$cases/conv_wino.py" --pipeline dispatch,default --verify \
  >"$tmp/out" 2>&1
check "wino: four verified" test "$(grep -c 'verify: ok' "$tmp/out")" = 4
grep '^onednn_verbose,exec,cpu,convolution,' "$tmp/out" | cut -d, -f5 >"$tmp/impl"
grep '^onednn_verbose,exec,cpu,convolution,' "$tmp/out" | grep -o 'mb[0-9]*_ic[^,]*' >"$tmp/shape"
paste -d' ' "$tmp/impl" "$tmp/shape" | sort -u >"$tmp/convs"
check "wino: 81 output pixels, direct" \
  bash -c "grep 'ih11oh9' '$tmp/convs' | grep -qv wino && ! grep 'ih11oh9' '$tmp/convs' | grep -q wino"
if grep -q avx512bw /proc/cpuinfo; then
  check "wino: three by Winograd (AVX-512)" test "$(grep wino "$tmp/convs" | wc -l)" = 3
else
  check "wino: none by Winograd (no AVX-512)" test "$(grep -c wino "$tmp/convs")" = 0
fi

# Products by a layer's constant weights go to oneDNN's matmul.
"$loom" run "$cases/matmul.py" --pipeline dispatch --verify --explain >"$tmp/out" 2>"$tmp/why"
check "matmul: three verified" test "$(grep -c 'verify: ok' "$tmp/out")" = 3
check "matmul: two to oneDNN" test "$(grep -c 'dispatch   1 loop nest(s) computed by oneDNN' "$tmp/why")" = 2
check "matmul: without the attribute, BLAS" grep -q '^plain  *dispatch   1 loop nest(s) computed by BLAS' "$tmp/why"
"$loom" build "$cases/matmul.py" --emit c --pipeline dispatch >"$tmp/matmul.c"
check "matmul: NT, A as stored" grep -q 'shape\[5\] = {24, 56, 40, 0, 1};' "$tmp/matmul.c"
check "matmul: TN, accumulating" grep -q 'loom_dnnl_matmul_make(&m, shape, 1);' "$tmp/matmul.c"
check "matmul: without oneDNN's header, the loops" cc -fsyntax-only -fopenmp -DLOOM_DNNL_TRIED "$tmp/matmul.c"

# Max pools go to oneDNN's pooling (the padding nest with its pool).
"$loom" run "$cases/pool.py" --pipeline dispatch,default --verify --explain >"$tmp/out" 2>"$tmp/why"
check "pool: two verified" test "$(grep -c 'verify: ok' "$tmp/out")" = 2
check "pool: two to oneDNN" test "$(grep -c 'dispatch   1 loop nest(s) computed by oneDNN' "$tmp/why")" = 2
"$loom" build "$cases/pool.py" --emit c --pipeline dispatch >"$tmp/pool.c"
check "pool: NHWC, padded by one before" \
  grep -q 'shape\[16\] = {1, 16, 12, 12, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0};' "$tmp/pool.c"
check "pool: two calls" test "$(grep -c 'int32_t rc = loom_pool_loom_.*(A, Y);' "$tmp/pool.c")" = 2
check "pool: without oneDNN's header, the loops" cc -fsyntax-only -fopenmp -DLOOM_DNNL_TRIED "$tmp/pool.c"

"$loom" run "$cases/layer.py" --pipeline dispatch --verify >"$tmp/out" 2>&1
check "layer: verified" grep -q 'layer: .*verify: ok' "$tmp/out"
"$loom" compile "$cases/layer.py" --pipeline dispatch -o "$tmp/layer.py"
check "layer: compile exit 0" test $? = 0
"$loom" build "$tmp/layer.py" --emit c >"$tmp/layer.c"
check "layer: the C calls sgemm" grep -q 'loom_library_symbol("cblas_sgemm")' "$tmp/layer.c"
check "layer: into the intermediate" grep -q 'loom_gemm(101, 111, 111, 96, 48, 80, 1, X, 80, W, 48, 0, H' "$tmp/layer.c"
check "layer: the bias and relu stay loops" grep -q 'for (int32_t' "$tmp/layer.c"
"$loom" fmt "$tmp/layer.py" >/dev/null
check "layer: the marked module reads back" test $? = 0
"$loom" build "$cases/layer.py" --emit c --pipeline dispatch >"$tmp/layer2.c"
check "build --pipeline: the same C" cmp -s "$tmp/layer.c" "$tmp/layer2.c"

# A block moved under the marked nest after dispatch: the nest is printed
# as loops, and the program still computes what it says.
"$loom" compile "$cases/epilogue.py" --pipeline dispatch -o "$tmp/e.py"
"$loom" sched "$tmp/e.py" "$cases/epilogue_at.sched.py" >"$tmp/e_at.py"
"$loom" build "$tmp/e_at.py" --emit c >"$tmp/e_at.c"
check "moved epilogue: no call" bash -c "! grep -q 'loom_gemm(101' '$tmp/e_at.c'"
"$loom" run "$tmp/e_at.py" --verify --against "$cases/epilogue.py" >"$tmp/out" 2>&1
check "moved epilogue: verified" grep -q 'verify: ok against' "$tmp/out"
"$loom" build "$tmp/e.py" --emit c >"$tmp/e.c"
check "epilogue apart: the call" grep -q 'loom_gemm(101' "$tmp/e.c"

# The order of the passes decides: a tuned record against the library.
"$loom" tune "$cases/mm_kinds.py" --func nt --trials 2 --db "$tmp/t.db" >/dev/null 2>&1
"$loom" compile "$cases/mm_kinds.py" --pipeline apply-db,dispatch --db "$tmp/t.db" --explain \
  >/dev/null 2>"$tmp/why"
check "apply-db first: nt from the record" grep -q '^nt  *apply-db  *its best record' "$tmp/why"
check "apply-db first: tn_f64 to BLAS" grep -q '^tn_f64  *dispatch' "$tmp/why"
"$loom" compile "$cases/mm_kinds.py" --pipeline dispatch,apply-db --db "$tmp/t.db" --explain \
  >/dev/null 2>"$tmp/why"
check "dispatch first: nt to BLAS" grep -q '^nt  *dispatch' "$tmp/why"
check "dispatch first: relu has no record" grep -q '^relu  *(none)  *apply-db: no record' "$tmp/why"

# best: the offers measured, the fastest kept, the choice remembered.
"$loom" compile "$cases/mm_kinds.py" --pipeline best --db "$tmp/t.db" --explain \
  >"$tmp/best.py" 2>"$tmp/why"
check "best: exit 0" test $? = 0
check "best: nt measured three ways" grep -qE '^nt .*fastest of dispatch [0-9.e-]+ ms apply-db [0-9.e-]+ ms default [0-9.e-]+ ms' "$tmp/why"
taken=$(awk '$1 == "nt" {print $2}' "$tmp/why")
fastest=$(grep '^nt ' "$tmp/why" | grep -oE '(dispatch|apply-db|default) [0-9.e-]+ ms' |
  sort -k2 -g | head -1 | cut -d' ' -f1)
check "best: the fastest taken ($taken, $fastest)" test "$taken" = "$fastest"
check "best: relu's only offer" grep -q '^relu  *default .*(best: the only offer)' "$tmp/why"
"$loom" compile "$cases/mm_kinds.py" --pipeline best --db "$tmp/t.db" --explain \
  >/dev/null 2>"$tmp/why"
check "best again: remembered" grep -q "^nt  *$taken .*(best: chosen by an earlier measurement" "$tmp/why"

# Manual dispatch: a folder of pairs, matched by structure.
"$loom" run "$cases/mm_kinds.py" --pipeline manual="$root/tests/dispatch/manual",dispatch \
  --verify --explain --threads 1 >"$tmp/out" 2>"$tmp/why"
check "manual: relu replaced" grep -q '^relu  *manual  *the replacement in .*relu_vectorized.py' "$tmp/why"
check "manual: the others to BLAS" test "$(grep -c ' dispatch ' "$tmp/why")" = 3
check "manual: verified" test "$(grep -c 'verify: ok' "$tmp/out")" = 4
mkdir -p "$tmp/pairs"
sed 's/def after(A: T.Buffer((40, 56), "float32")/def after(A: T.Buffer((40, 56), "float16")/' \
  "$root/tests/dispatch/manual/relu_vectorized.py" >"$tmp/pairs/bad.py"
"$loom" compile "$cases/mm_kinds.py" --pipeline manual="$tmp/pairs" >/dev/null 2>"$tmp/err"
check "manual, another signature: exit 1" test $? = 1
check "manual, another signature: at the file's line" grep -q "bad.py:17:5: error: parameter 1 of the replacement 'after'" "$tmp/err"
sed 's/def after(/def later(/' "$root/tests/dispatch/manual/relu_vectorized.py" >"$tmp/pairs/bad.py"
"$loom" compile "$cases/mm_kinds.py" --pipeline manual="$tmp/pairs" >/dev/null 2>"$tmp/err"
check "manual, no after: said" grep -q "needs a function named 'before'.* and one named 'after'" "$tmp/err"
"$loom" compile "$cases/mm_kinds.py" --pipeline manual >/dev/null 2>"$tmp/err"
check "manual without a folder: exit 2" test $? = 2
"$loom" compile "$cases/mm_kinds.py" --pipeline manual="$tmp/none" >/dev/null 2>"$tmp/err"
check "manual, no such folder: exit 1" test $? = 1

# On cuda the products go to cuBLAS, called on the host between the kernels;
# what no library takes gets dlight's schedule; the module verifies.
"$loom" compile "$cases/mm_kinds.py" --target cuda --pipeline dispatch,default --explain \
  -o "$tmp/cuda.py" 2>"$tmp/why"
check "cuda: three to cuBLAS" test "$(grep -c 'dispatch   1 loop nest(s) computed by cuBLAS$' "$tmp/why")" = 3
check "cuda: relu by dlight" grep -q "^relu  *default  *dlight's rule Fallback" "$tmp/why"
"$loom" run "$tmp/cuda.py" --verify >"$tmp/out" 2>&1
check "cuda: the marked module verifies" test "$(grep -c 'verify: ok' "$tmp/out")" = 4
"$loom" build "$cases/mm_kinds.py" --target cuda --pipeline dispatch,default --emit cuda >"$tmp/k.cu"
check "cuda: the call named in the CUDA C" grep -q 'On the host, by cuBLAS (cublasGemmStridedBatchedEx): C = A NT B, float32 into float32, 40 x 56 x 24, batch 1' "$tmp/k.cu"
check "cuda: a kernel for relu alone" test "$(grep -c __global__ "$tmp/k.cu")" = 1
"$loom" compile "$cases/epilogue.py" --target cuda --pipeline dispatch --explain -o "$tmp/ep.py" 2>"$tmp/why"
check "cuda: the epilogue bound around the call" grep -q "computed by cuBLAS; the rest by dlight's rule Fallback" "$tmp/why"
"$loom" run "$tmp/ep.py" --verify >"$tmp/out" 2>&1
check "cuda: the epilogue verifies" grep -q 'verify: ok' "$tmp/out"
"$loom" compile "$cases/conv.py" --target cuda --pipeline dispatch --explain >/dev/null 2>"$tmp/why"
check "cuda: convolutions are not cuBLAS's" test "$(grep -c '(none)  *dispatch: ' "$tmp/why")" = 4

"$loom" compile "$cases/layer.py" --pipeline dispatch,blas >/dev/null 2>"$tmp/err"
check "unknown pass: exit 2" test $? = 2
check "unknown pass: named" grep -q "unknown pass 'blas'" "$tmp/err"
"$loom" compile "$cases/layer.py" >/dev/null 2>&1
check "no pipeline: exit 2" test $? = 2
"$loom" run "$cases/layer.py" --pipeline default,default >/dev/null 2>&1
check "a pass twice: exit 2" test $? = 2

echo "dispatch_cli: $pass passed, $fail failed"
[ $fail = 0 ]
