# gprof-train: convenience targets around CMake. `make run` and `make test` work on a fresh
# Debian machine: they install what is missing (scripts/deps.sh), configure, build and go.
BUILD        ?= build
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS  ?=
RUN_ARGS     ?=
ifeq ($(CI),true)
  CMAKE_FLAGS += -DGP_WERROR=ON
endif
BIN = $(BUILD)/bin/gprof-train
# The makes CMake's generator runs inherit this: no "Entering directory" line for each of them
# (a first `make run` printed 118 before the training output).
MAKEFLAGS += --no-print-directory

.PHONY: all deps configure build run test test-main test-asan test-tsan bench fuzz format clean wheel

all: build

deps:
	@sh scripts/deps.sh

configure:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# `make run` builds quietly (one progress line; the full output on failure or with VERBOSE=1):
# a first run printed ~300 lines of build progress before the training output.
run: deps configure
	@sh scripts/quiet_build.sh $(BUILD)/build.log cmake --build $(BUILD) -j $(JOBS)
	$(BIN) run $(RUN_ARGS)

# Every test that can run here, then the same suite under ASan/UBSan (CUDA off), then the
# trace reader, analysis and libprof capture tests under ThreadSanitizer (they run on threads).
test: deps
	@$(MAKE) --no-print-directory test-main
	@$(MAKE) --no-print-directory test-asan
	@$(MAKE) --no-print-directory test-tsan

test-main: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# intercept_tls_get_addr=0: up to GCC 13 and LLVM 16 the runtime's __tls_get_addr interceptor
# takes a dynamic TLS block (OpenBLAS, loaded with dlopen, has one) that happens to start 16 bytes
# into a page for a pre-2.25 glibc header and reads the words before it, so LeakSanitizer's
# tracer can die at exit ("Tracer caught signal 11", seen once in sweep_cli, whose runs all load
# OpenBLAS): a crash of the checker, not a leak. Known upstream, fixed in later runtimes.
ASAN_TEST_OPTIONS = detect_leaks=1:intercept_tls_get_addr=0

test-asan:
	@cmake -S . -B build-asan -DGP_WITH_CUDA=OFF -DGP_SANITIZE=address,undefined \
		-DCMAKE_BUILD_TYPE=Debug -DGP_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=$(ASAN_TEST_OPTIONS) UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure -j $(JOBS) -LE cuda

TSAN_TESTS = gpusim_|cudacpu_|test_analyze|analyze_split_same|golden_report|golden_diagnose|golden_export|test_prof|prof_capture_(nest|many|seq|die)|prof_trace_(threads|sigint|sigterm)

test-tsan:
	@cmake -S . -B build-tsan -DGP_WITH_CUDA=OFF -DGP_SANITIZE=thread -DGP_BUILD_TESTS=ON \
		-DGP_BUILD_BENCH=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) \
		--no-tests=error -R '$(TSAN_TESTS)'

bench: deps
	@cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DGP_BUILD_TESTS=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-release -j $(JOBS)
	sh bench/run.sh build-release

# libFuzzer (clang): build the fuzz targets and run each for FUZZ_SECONDS over its corpus.
FUZZ_SECONDS ?= 60
fuzz: deps
	@CC=clang cmake -S . -B build-fuzz -DGP_FUZZ=ON -DGP_WITH_CUDA=OFF -DGP_BUILD_BENCH=OFF \
		-DGP_SANITIZE=address,undefined >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target gp_fuzz_all
	sh tests/ci/run_fuzz.sh build-fuzz $(FUZZ_SECONDS)

# The Python package as a wheel in dist/ (pyproject.toml: scikit-build-core builds this CMake
# project without tests, benchmarks or the CUDA trainer module; `pip install .` does the same).
PYTHON ?= python3
WHEEL_DIR ?= dist
WHEEL_FLAGS ?=
wheel:
	$(PYTHON) -m pip wheel --disable-pip-version-check --no-deps --wheel-dir $(WHEEL_DIR) $(WHEEL_FLAGS) .

format:
	clang-format -i $$(git ls-files "*.c" "*.h" "*.cu" "*.cuh")

clean:
	rm -rf $(BUILD) build-asan build-tsan build-release build-fuzz dist
