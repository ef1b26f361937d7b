# compatd — the two commands a user needs are `make run` and `make test`.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=
# `make run` also opens the HTTPS/JSON front door (docs/api.md, docs/admission.md) on loopback.
RUN_ARGS ?= --http-listen=127.0.0.1:8443

.PHONY: deps build run test test-asan test-tsan bench fuzz soak format check-format clean

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Builds only what it serves (the tests, benchmarks and tools are `make build`'s and `make test`'s).
run: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target compatd
	$(BUILD)/service/compatd $(RUN_ARGS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300

# Sanitizer runs, for developers (CI runs `make test`). Every process, the test
# binaries and the compatd servers they spawn, writes its reports to
# <build>/sanitizer-logs/ (log_path); the run fails if any process reported.
# Suppressions cover uninstrumented Debian libraries only (see the files).
ASAN_ENV = ASAN_OPTIONS="log_path=$(CURDIR)/build-asan/sanitizer-logs/asan" \
	LSAN_OPTIONS="suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0" \
	UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$(CURDIR)/build-asan/sanitizer-logs/ubsan"
TSAN_ENV = TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp:halt_on_error=1:second_deadlock_stack=1:history_size=7:log_path=$(CURDIR)/build-tsan/sanitizer-logs/tsan"

test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCOMPATD_SANITIZE=address
	cmake --build build-asan -j $(JOBS)
	rm -rf build-asan/sanitizer-logs && mkdir -p build-asan/sanitizer-logs
	cd build-asan && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 600; rc=$$?; \
	  bash ../scripts/check-sanitizer-logs.sh sanitizer-logs || rc=1; exit $$rc

test-tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DCOMPATD_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS)
	rm -rf build-tsan/sanitizer-logs && mkdir -p build-tsan/sanitizer-logs
	cd build-tsan && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 600; rc=$$?; \
	  bash ../scripts/check-sanitizer-logs.sh sanitizer-logs || rc=1; exit $$rc

# Benchmarks against the targets of BENCHMARKS.md; not part of `make test`. Needs the optimized
# build ($(BUILD) is RelWithDebInfo); about four minutes on 2 cores; prints one table and writes
# it to bench/results/latest.md. A row whose runs shared the servers' core with other work reads
# "noisy, rerun".
bench: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target compatd compatd-load null_server null_http_server engine_benchmark
	python3 bench/run_bench.py --build=$(BUILD)

# libFuzzer targets (fuzz/targets.txt) built with clang + ASan + UBSan in build-fuzz/, each run
# for FUZZ_SECONDS (default 60), JOBS at a time. A failure leaves its input in
# build-fuzz/fuzz-artifacts/<target>/; copy it to fuzz/regressions/<target>/ to keep it as a test.
FUZZ_SECONDS ?= 60
fuzz:
	@bash scripts/install-deps.sh --fuzz
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCOMPATD_FUZZ=ON -DBUILD_TESTING=OFF
	cmake --build build-fuzz -j $(JOBS) --target fuzzers
	python3 fuzz/run_fuzzers.py --build=build-fuzz --seconds=$(FUZZ_SECONDS) --jobs=$(JOBS)

# Soak test: the real compatd under SOAK_DURATION (default 10 minutes) of mixed valid, wrong and
# garbage load over gRPC and the HTTP front door, heavy requests that keep the heavy lane busy
# (~3 MiB scans, plans, lints, large Evaluate batches), hostile clients (slowloris, oversized
# bodies, heads of large POSTs whose bodies never come, declared-huge messages, rapid reset, slow
# readers, silent and idle connections), kube-apiserver audit batches with hostile fields
# (fields of hundreds of KB, nesting past 1024 levels, items that are not events, text that is
# not UTF-8), WatchCatalog streams, raw TCP garbage and catalog swaps (good and bad); fails on a
# crash, an unexpected status code, a wrong answer, a failed well-behaved call, a light call class
# whose latency p99 after the warm-up is over 50 ms (--max-light-p99), a bad catalog served, a
# failed scrape, a hostile connection held past its limit (a head without its body: the 30 s body
# timeout + 5 s), an audit field kept past its 256 bytes, descriptors past their bound or RSS more
# than 50% over its warm-up baseline. The report is also written to $(BUILD)/soak-report.md.
SOAK_DURATION ?= 10m
soak: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target compatd compatd-soak
	$(BUILD)/soak/compatd-soak --compatd=$(BUILD)/service/compatd --duration=$(SOAK_DURATION) \
	  --report=$(BUILD)/soak-report.md

format:
	git ls-files -co --exclude-standard '*.cc' '*.h' | xargs -r clang-format -i

check-format:
	git ls-files -co --exclude-standard '*.cc' '*.h' | xargs -r clang-format --dry-run --Werror

clean:
	rm -rf build build-asan build-tsan build-fuzz
