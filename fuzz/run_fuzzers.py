#!/usr/bin/env python3
"""Runs compatd's libFuzzer targets for a bounded time each (`make fuzz`).

Every target of fuzz/targets.txt runs for --seconds, --jobs at a time, with its
seed corpus (fuzz/corpus/<target>/ and the test data directories the table
names), its regressions (fuzz/regressions/<target>/) and its dictionary
(fuzz/<target>.dict) when there is one. New inputs go to
<build>/fuzz-corpus/<target>/ (kept between runs, so coverage accumulates);
a crash, leak, timeout or out-of-memory writes its input to
<build>/fuzz-artifacts/<target>/ and the run fails. Turn such an input into a
regression test by copying it into fuzz/regressions/<target>/: the replay
tests of `make test` run it from then on.

Prints one line per target (executions, rate, coverage, corpus size) and exits
non-zero if any target failed.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_targets():
    """[(name, max_len, [seed dirs])] from fuzz/targets.txt."""
    targets = []
    with open(os.path.join(ROOT, "fuzz", "targets.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split()
            targets.append((fields[0], int(fields[1]), fields[2:]))
    return targets


def stat(log, name):
    """The last value libFuzzer printed for `name` (stat::number_of_executed_units...)."""
    matches = re.findall(r"^stat::%s:\s*(\d+)" % re.escape(name), log, re.M)
    return int(matches[-1]) if matches else None


def coverage(log):
    matches = re.findall(r"\bcov: (\d+) ft: (\d+)", log)
    return matches[-1] if matches else ("?", "?")


def run_target(build, name, max_len, seed_dirs, seconds):
    binary = os.path.join(build, "fuzz", name + "_fuzzer")
    if not os.path.exists(binary):
        return name, False, "missing %s (build the 'fuzzers' target first)" % binary
    corpus = os.path.join(build, "fuzz-corpus", name)
    artifacts = os.path.join(build, "fuzz-artifacts", name) + os.sep
    logs = os.path.join(build, "fuzz-logs")
    for d in (corpus, artifacts, logs):
        os.makedirs(d, exist_ok=True)
    inputs = [os.path.join(ROOT, "fuzz", "corpus", name)]
    inputs += [os.path.join(ROOT, d) for d in seed_dirs]
    regressions = os.path.join(ROOT, "fuzz", "regressions", name)
    if os.path.isdir(regressions):
        inputs.append(regressions)
    for d in inputs:
        if not os.path.isdir(d):
            return name, False, "seed directory %s does not exist" % d
    command = [
        binary,
        "-max_total_time=%d" % seconds,
        "-max_len=%d" % max_len,
        "-timeout=10",          # a single input taking 10 s is a hang
        "-rss_limit_mb=2048",
        "-malloc_limit_mb=512",  # one allocation this big is a bug here
        "-print_final_stats=1",
        "-artifact_prefix=" + artifacts,
    ]
    dictionary = os.path.join(ROOT, "fuzz", name + ".dict")
    if os.path.exists(dictionary):
        command.append("-dict=" + dictionary)
    command += [corpus] + inputs
    log_path = os.path.join(logs, name + ".log")
    started = time.monotonic()
    with open(log_path, "w", encoding="utf-8") as log_file:
        # The corpus load adds to -max_total_time only slightly; a hard cap
        # on top makes sure nothing hangs the caller.
        try:
            result = subprocess.run(command, stdout=log_file, stderr=subprocess.STDOUT,
                                    timeout=seconds + 120, check=False)
            code = result.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    elapsed = time.monotonic() - started
    with open(log_path, encoding="utf-8", errors="replace") as f:
        log = f.read()
    execs = stat(log, "number_of_executed_units")
    rate = stat(log, "average_exec_per_sec")
    cov, ft = coverage(log)
    units = len(os.listdir(corpus))
    summary = "%-15s %6.0f s  %10s execs  %7s/s  cov %5s  ft %6s  corpus %5d" % (
        name, elapsed, execs if execs is not None else "?", rate if rate is not None else "?",
        cov, ft, units)
    if code != 0:
        crash = [f for f in os.listdir(artifacts)]
        tail = "\n".join(log.splitlines()[-40:])
        return name, False, "%s  FAILED (exit %s)\n%s\n  artifacts: %s %s\n  log: %s\n" \
            "  to keep it as a test: cp <artifact> fuzz/regressions/%s/" % (
                summary, code, tail, artifacts, crash, log_path, name)
    return name, True, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build-fuzz"),
                        help="the COMPATD_FUZZ build directory (default build-fuzz)")
    parser.add_argument("--seconds", type=int, default=60, help="time per target (default 60)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="targets run at once (default: the number of CPUs)")
    parser.add_argument("targets", nargs="*", help="only these targets")
    args = parser.parse_args()
    if args.seconds <= 0 or args.jobs <= 0:
        parser.error("--seconds and --jobs must be positive")

    targets = read_targets()
    known = [t[0] for t in targets]
    for name in args.targets:
        if name not in known:
            parser.error("unknown target %r; known: %s" % (name, ", ".join(known)))
    if args.targets:
        targets = [t for t in targets if t[0] in args.targets]

    build = os.path.abspath(args.build)
    print("fuzz: %d targets, %d s each, %d at a time" % (len(targets), args.seconds, args.jobs),
          flush=True)
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_target, build, name, max_len, seeds, args.seconds)
                   for name, max_len, seeds in targets]
        for future in concurrent.futures.as_completed(futures):
            name, ok, text = future.result()
            print(text, flush=True)
            if not ok:
                failed.append(name)
    if failed:
        print("fuzz: FAILED: %s" % ", ".join(sorted(failed)), file=sys.stderr)
        return 1
    print("fuzz: all %d targets ran without a failure" % len(targets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
