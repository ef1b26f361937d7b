#!/usr/bin/env bash
# Prints the sanitizer reports that a `make test-asan` / `make test-tsan` run left
# in DIR (the sanitizers' log_path: one file per process that reported, test
# binaries and the compatd servers they spawn alike) and fails if there is any.
set -euo pipefail
dir=${1:?usage: check-sanitizer-logs.sh DIR}
shopt -s nullglob
logs=("$dir"/*)
if [ ${#logs[@]} -eq 0 ]; then
  echo "sanitizers: no report in $dir"
  exit 0
fi
for f in "${logs[@]}"; do
  echo "==== $f"
  cat "$f"
done
echo "sanitizers: ${#logs[@]} process(es) reported errors (files in $dir)" >&2
exit 1
