# Thin wrapper over CMake. `make` builds build/loom and libloom; `make check`
# is the full test run CI uses: the normal build, then ASan+UBSan, then the
# space oracle under ThreadSanitizer, then a short fuzzing run of the readers.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60
# The run is seeded: it tries inputs in the same order every time (a
# slower machine gets less far), so a check does not fail by chance on an
# input no earlier run met. A longer hunt for new inputs:
# make fuzz FUZZ_SEED=0 FUZZ_SECONDS=3600 (seed 0: a random one).
FUZZ_SEED ?= 1

.PHONY: all test test-asan test-tsan fuzz check bench tvmdiff clean

all:
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build build -j $(JOBS)

# CUDA C is compiled with NVRTC, no GPU needed: scripts/nvrtc.sh finds the
# CUDA toolkit's or installs PyPI's into build/nvrtc-venv.
test: all
	cd build && LOOM_NVRTC="$$(../scripts/nvrtc.sh)" ctest --output-on-failure -j $(JOBS)

test-asan:
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLOOM_SANITIZE=ON >/dev/null
	cmake --build build-asan -j $(JOBS)
	cd build-asan && LOOM_NVRTC="$$(../scripts/nvrtc.sh)" ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# Races between the iterations of parallel loops: the space oracle's compiled
# candidates (4 threads) are built with ThreadSanitizer, in a process built
# with it, on LLVM's OpenMP runtime with its Archer tool, which tells the
# sanitizer about OpenMP's barriers (the runtime's own code is not
# instrumented and is ignored). A race stops the kernel's run: the test
# fails; tests/tsan/race.sh shows that one is seen. clang and libomp-dev come
# from scripts/setup.sh.
ARCHER ?= $(realpath $(dir $(realpath $(shell command -v clang)))/../lib/libarcher.so)
test-tsan:
	@test -n "$(ARCHER)" || { echo "libarcher.so not found beside clang: run scripts/setup.sh"; exit 1; }
	CC=clang cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOOM_TSAN=ON >/dev/null
	cmake --build build-tsan -j $(JOBS) --target space_test_oracle loom
	cd build-tsan && CC="clang -fsanitize=thread" OMP_TOOL_LIBRARIES="$(ARCHER)" \
	  TSAN_OPTIONS="halt_on_error=1 abort_on_error=1 ignore_noninstrumented_modules=1" \
	  ctest --output-on-failure -R '^(space/test_oracle|tsan/race)$$'

fuzz:
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DLOOM_FUZZ=ON >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target fuzz_script
	mkdir -p build-fuzz/corpus-script
	build-fuzz/tests/fuzz/fuzz_script -seed=$(FUZZ_SEED) -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	  -timeout=10 -rss_limit_mb=2048 build-fuzz/corpus-script tests/fuzz/seeds tests/script/cases

check: test test-asan test-tsan fuzz

bench: all
	cmake --build build -j $(JOBS) --target benches
	build/bench/bench_script
	build/bench/bench_codegen
	build/bench/bench_runtime
	build/bench/bench_tune
	build/bench/bench_arith
	build/bench/bench_sched
	build/bench/bench_dlight
	build/bench/bench_cpu --out build/bench-out

# Loom's schedules against TVM's on random traces, traces from Loom's design
# spaces and TVM's own cases (docs/tvm-differences.md); makes its own venv with
# apache-tvm (never a dependency of Loom). Not part of check.
tvmdiff: all
	python3 tools/tvmdiff/tvmdiff.py --loom build/loom --source random,spaces,cases

clean:
	rm -rf build build-asan build-tsan build-fuzz
