#!/usr/bin/env bash
# Installs, from Debian 12's own packages, whatever compatd needs to build and test that is
# not installed yet. Idempotent: it does nothing (and needs no network) when all is present.
set -euo pipefail

# The lists are read by the Dockerfile's test as well (tests/deploy/dockerfile_test.cc): keep
# them the single source of truth.
# What `cmake -DBUILD_TESTING=OFF` and `cmake --build --target compatd` need: all the image's
# build stage installs (install-deps.sh --build-only).
BUILD_PACKAGES=(
  build-essential cmake pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libabsl-dev libyaml-dev libssl-dev libboost-dev libsimdjson-dev prometheus-cpp-dev
)
# Tests, benchmarks and tools (`make test`, `make bench`, `make format`): GoogleTest, Google
# Benchmark, yaml-cpp (the k8s/ and Dockerfile checks), Prometheus (promtool and the alert
# tests), python3 (generators' checks, the bench runner), clang-format, curl (the HTTP front
# door's integration tests), wrk (make bench's HTTP rows), jp (JMESPath, the Kyverno
# policy's jmesPath checked against the real answer), chromium (the status page's browser test,
# tests/ui/browser_test.py, headless over the DevTools pipe), lld (links the test binaries about
# four times faster than GNU ld; CMakeLists.txt uses it when present).
DEV_PACKAGES=(
  libgtest-dev libgmock-dev libbenchmark-dev libyaml-cpp-dev
  prometheus python3 clang-format curl wrk jp chromium lld
)
# `make fuzz` (install-deps.sh --fuzz) also needs clang and its libFuzzer/sanitizer runtimes.
FUZZ_PACKAGES=(clang libclang-rt-14-dev)
PACKAGES=("${BUILD_PACKAGES[@]}" "${DEV_PACKAGES[@]}")
if [ "${1:-}" = "--fuzz" ]; then
  PACKAGES+=("${FUZZ_PACKAGES[@]}")
elif [ "${1:-}" = "--build-only" ]; then
  PACKAGES=("${BUILD_PACKAGES[@]}")
elif [ $# -gt 0 ]; then
  echo "usage: install-deps.sh [--fuzz | --build-only]" >&2
  exit 2
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    echo "install-deps: run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; then
  echo "install-deps: apt-get install failed; refreshing the package lists and retrying" >&2
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}" || {
    echo "install-deps: could not install: ${missing[*]} (is this Debian 12 with its package mirrors reachable?)" >&2
    exit 1
  }
fi
