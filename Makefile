# Thin wrapper over CMake. `make` builds build/loom and libloom; `make check`
# is the full test run CI uses: the normal build, then ASan+UBSan, then a
# short fuzzing run of the readers.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60
# The run is seeded: it tries inputs in the same order every time (a
# slower machine gets less far), so a check does not fail by chance on an
# input no earlier run met. A longer hunt for new inputs:
# make fuzz FUZZ_SEED=0 FUZZ_SECONDS=3600 (seed 0: a random one).
FUZZ_SEED ?= 1

.PHONY: all test test-asan fuzz check bench clean

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

fuzz:
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DLOOM_FUZZ=ON >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target fuzz_script
	mkdir -p build-fuzz/corpus-script
	build-fuzz/tests/fuzz/fuzz_script -seed=$(FUZZ_SEED) -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	  -timeout=10 -rss_limit_mb=2048 build-fuzz/corpus-script tests/fuzz/seeds tests/script/cases

check: test test-asan fuzz

bench: all
	cmake --build build -j $(JOBS) --target benches
	build/bench/bench_script
	build/bench/bench_codegen
	build/bench/bench_runtime
	build/bench/bench_tune
	build/bench/bench_arith
	build/bench/bench_sched
	build/bench/bench_cpu --out build/bench-out

clean:
	rm -rf build build-asan build-fuzz
