#!/usr/bin/env python3
"""Runs compatd's benchmarks and checks them against the targets of BENCHMARKS.md.

  python3 bench/run_bench.py --build=build [--out=bench/results/latest.md]
  python3 bench/run_bench.py --smoke --compatd=... --load=... --null-server=...

The full run (what `make bench` does, about 4 minutes on 2 cores):
  1. engine_benchmark (Google Benchmark, real 1.36 catalog): medians, allocs/op;
  2. compatd and bench/null_server pinned to CPU 0, compatd-load pinned to
     CPU 1: saturation QPS and capacity, latency at concurrency 1 and an
     open loop at 10k req/s, each in alternating rounds judged on the median
     of the rounds' ratios to the null server; RSS idle and under load;
  3. reload under load: compatd serving a catalog file that compatd-load
     rewrites every 100 ms, against the same run without rewrites;
then prints one table (target, measured, result) and writes it, with the
machine, commit, date, load average and every command, to --out. A judged
row whose runs saw other work take more than 5% of the servers' core (other
tasks, or the hypervisor's steal) reads "noisy, rerun", not PASS or MISS.

--smoke: about 3 s against an unpinned compatd and null_server: the harness
still runs, QPS is sane and no call fails (a ctest test; exit 1 otherwise).
"""

import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LISTENING = re.compile(r"gRPC listening on (\S+):(\d+)")
COMPATD_READY = r"serving catalog "
MIX = "GetFeature:8,CheckSkew:2"
# Every RPC compatd-load sends with a canned answer, for the second ratio.
WIDE_MIX = "GetFeature:4,CheckSkew:2,GetStorageVersion:2,ListAPIVersions:1,ResolveVersions:1"
USER_AGENT = "kube-apiserver/v1.36.0 (linux/amd64) kubernetes/0000000"

# The canned answers of the null server are compatd's own, for the requests
# compatd-load sends by default.
CANNED_REQUESTS = {
    "GetFeature": '{"name":"WatchList"}',
    "CheckSkew": '{"component":"kubelet","clientVersion":"1.34"}',
    "GetStorageVersion": '{"group":"apps","resource":"deployments"}',
    "ListAPIVersions": "{}",
    "ResolveVersions": "{}",
}


class Failure(Exception):
    pass


class Recorder:
    """Runs commands and remembers them for the report."""

    def __init__(self):
        self.commands = []

    def note(self, argv):
        self.commands.append(" ".join(shlex.quote(a) for a in argv))

    def run(self, argv, timeout, check=True):
        self.note(argv)
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise Failure("%s exited %d:\n%s%s" % (argv[0], p.returncode, p.stdout[-2000:],
                                                  p.stderr[-2000:]))
        return p


def pin(cpu, argv, pinning):
    return ["taskset", "-c", str(cpu)] + argv if pinning else argv


class Server:
    """A server process (compatd or null_server) on 127.0.0.1:<free port>."""

    def __init__(self, name, argv, recorder, workdir, ready=None, listening=None,
                 healthz=False):
        """Starts `argv` and waits until its log shows the port and, if given,
        the `ready` pattern (compatd: its catalog is published; before that it
        answers UNAVAILABLE); with `healthz`, until GET /healthz on that (HTTP)
        port answers 200 too: compatd's readiness, not just its port."""
        self.name = name
        self.log_path = os.path.join(workdir, name + ".log")
        self.log = open(self.log_path, "w")
        recorder.note(argv)
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log)
        self.port = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(self.log_path) as f:
                text = f.read()
            m = (listening or LISTENING).search(text)
            if m and (ready is None or re.search(ready, text)):
                self.port = int(m.group(2))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        if self.port is None:
            self.stop()
            with open(self.log_path) as f:
                raise Failure("%s did not start:\n%s" % (name, f.read()[-2000:]))
        while healthz and not self.healthy():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                with open(self.log_path) as f:
                    raise Failure("%s never answered /healthz 200:\n%s" %
                                  (name, f.read()[-2000:]))
            time.sleep(0.02)

    def healthy(self):
        try:
            with urllib.request.urlopen("http://%s/healthz" % self.target, timeout=2) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    @property
    def target(self):
        return "127.0.0.1:%d" % self.port

    def status_kib(self, field):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # utime and stime are fields 14 and 15 of the whole line.
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log_text(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def cpu_task_seconds(cpu):
    """(time one CPU spent running tasks, time the hypervisor stole from it)
    so far, in seconds (/proc/stat: user + nice + system; steal). Interrupt
    and softirq time are left out: the loopback's packets are processed
    there, for the servers' own calls."""
    with open("/proc/stat") as f:
        for line in f:
            fields = line.split()
            if fields[0] == "cpu%d" % cpu:
                ticks = [int(x) for x in fields[1:]]
                hz = os.sysconf("SC_CLK_TCK")
                return (ticks[0] + ticks[1] + ticks[2]) / hz, ticks[7] / hz
    return 0.0, 0.0


class CpuNoise:
    """How much of CPU 0 (the servers' core) went elsewhere while a run
    measured: tasks other than the server, and time stolen by the
    hypervisor, each as a fraction of the run's wall time."""

    def __init__(self, server):
        self.server = server
        self.cpu0 = server.cpu_seconds()
        self.task0, self.steal0 = cpu_task_seconds(0)
        self.t0 = time.monotonic()

    def finish(self, result, pinning):
        wall = max(time.monotonic() - self.t0, 1e-9)
        task, steal = cpu_task_seconds(0)
        server = (self.server.cpu_seconds() - self.cpu0) / wall
        result["server_cpu"] = server
        result["others_on_cpu0"] = max(0.0, (task - self.task0) / wall -
                                       (server if pinning else 0.0))
        result["steal_on_cpu0"] = max(0.0, (steal - self.steal0) / wall)
        return result


def load(args, recorder, server, extra, pinning, timeout=120):
    """Runs compatd-load against `server`; returns its JSON report, plus the
    server's CPU use and peak RSS over the run, and how much of the server's
    CPU (0) other processes used meanwhile (the noise of a shared machine)."""
    argv = pin(1, [args.load, "--target=" + server.target, "--json",
                   "--user-agent=" + USER_AGENT] + extra, pinning)
    recorder.note(argv)
    noise = CpuNoise(server)
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_rss = 0
    while p.poll() is None:
        peak_rss = max(peak_rss, server.status_kib("VmRSS"))
        if time.monotonic() - t0 > timeout:
            p.kill()
            raise Failure("compatd-load did not finish in %d s" % timeout)
        time.sleep(0.1)
    out, err = p.communicate()
    if p.returncode not in (0, 1) or not out.strip():
        raise Failure("compatd-load exited %d: %s" % (p.returncode, err[-2000:]))
    result = noise.finish(json.loads(out), pinning)
    # The server's CPU per call, warm-up included at the measured rate.
    result["server_us_per_call"] = (1e6 * result["server_cpu"] / result["qps"]
                                    if result["qps"] > 0 else 0.0)
    result["server_peak_rss_kib"] = peak_rss
    return result


def canned_responses(args, recorder, workdir):
    directory = os.path.join(workdir, "canned")
    os.makedirs(directory, exist_ok=True)
    for rpc, request in CANNED_REQUESTS.items():
        p = recorder.run([args.compatd, "eval", "--rpc=" + rpc, "--request=" + request],
                         timeout=60)
        with open(os.path.join(directory, rpc + ".json"), "w") as f:
            f.write(p.stdout)
    return directory


# ---------------------------------------------------------------------------
# The engine benchmarks


def engine_benchmarks(args, recorder, workdir, pinning):
    out = os.path.join(workdir, "engine.json")
    argv = pin(1, [args.engine_benchmark, "--benchmark_repetitions=%d" % args.repetitions,
                   "--benchmark_report_aggregates_only=true",
                   "--benchmark_min_time=%s" % args.min_time,
                   "--benchmark_out_format=json", "--benchmark_out=" + out], pinning)
    recorder.run(argv, timeout=240)
    with open(out) as f:
        data = json.load(f)
    medians = {}
    # With one repetition there are no aggregates: the run itself is the median.
    wanted = "median" if args.repetitions > 1 else None
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != wanted:
            continue
        scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        medians[b["run_name"]] = {
            "ns": b["real_time"] * scale,
            "cpu_ns": b["cpu_time"] * scale,
            "allocs": b.get("allocs/op", 0.0),
        }
    return medians


# ---------------------------------------------------------------------------
# Report


def fmt_ns(ns):
    if ns >= 1e6:
        return "%.2f ms" % (ns / 1e6)
    if ns >= 1e4:
        return "%.1f µs" % (ns / 1e3)
    return "%.0f ns" % ns


def fmt_us(us):
    return "%.0f µs" % us if us >= 100 else "%.1f µs" % us


def mib(kib):
    return "%.1f MiB" % (kib / 1024)


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short=12", "HEAD"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True).stdout.strip()
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "commit": commit + (" (with uncommitted changes)" if dirty else ""),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "kernel": os.uname().release,
    }


HALT_POLL_NS = "/sys/module/haltpoll/parameters/guest_halt_poll_ns"
CPUIDLE_DRIVER = "/sys/devices/system/cpu/cpuidle/current_driver"


def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def halt_polling():
    """How an idle vCPU waits: the guest's cpuidle driver and, with haltpoll,
    how long it polls before halting (the kernel's default is 200000 ns)."""
    driver = read_text(CPUIDLE_DRIVER) or "unknown"
    ns = read_text(HALT_POLL_NS)
    if driver != "haltpoll" or ns is None:
        return "cpuidle driver %s (no guest halt polling to report)" % driver
    cmdline = read_text("/proc/cmdline") or ""
    pinned = [t for t in cmdline.split() if t.startswith("haltpoll.guest_halt_poll_ns=")]
    text = "cpuidle driver haltpoll, guest_halt_poll_ns=%s" % ns
    if ns == "0":
        text += (" — off: an idle vCPU halts at once, so every cross-CPU wake-up "
                 "exits to the hypervisor")
    else:
        text += " — an idle vCPU polls up to %.0f µs before it halts" % (int(ns) / 1000)
    if pinned:
        text += " (kernel command line: %s; the kernel's default is 200000)" % pinned[0]
    return text


class HaltPollSetting:
    """Sets guest_halt_poll_ns for the run and puts the old value back."""

    def __init__(self, ns):
        self.ns = ns
        self.old = None

    def __enter__(self):
        if self.ns is None:
            return self
        self.old = read_text(HALT_POLL_NS)
        if self.old is None:
            sys.exit("--guest-halt-poll-ns: %s does not exist (this machine's cpuidle "
                     "driver is %s, not haltpoll)" % (HALT_POLL_NS,
                                                     read_text(CPUIDLE_DRIVER) or "unknown"))
        try:
            with open(HALT_POLL_NS, "w") as f:
                f.write(str(self.ns))
        except OSError as e:
            sys.exit("--guest-halt-poll-ns: cannot write %s (%s); it needs root" %
                     (HALT_POLL_NS, e.strerror))
        print("guest_halt_poll_ns set to %d for this run (was %s)" % (self.ns, self.old),
              flush=True)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            with open(HALT_POLL_NS, "w") as f:
                f.write(self.old)
            print("guest_halt_poll_ns restored to %s" % self.old, flush=True)
        return False


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def build_type(build_dir):
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if not os.path.exists(cache):
        return None
    with open(cache) as f:
        for line in f:
            if line.startswith("CMAKE_BUILD_TYPE:"):
                return line.split("=", 1)[1].strip()
    return None


# A run is too noisy to judge when tasks other than the server, or the
# hypervisor (steal), took more than this share of the servers' core.
NOISE_LIMIT = 0.05


def noise_of(results, args, pinning):
    """The largest share of CPU 0 that went elsewhere during `results`, or
    None when it cannot be told (no pinning; idle CPUs spun on purpose)."""
    if not pinning or args.spin_idle_cpus or not results:
        return None
    return max(r.get("others_on_cpu0", 0.0) + r.get("steal_on_cpu0", 0.0) for r in results)


def latency_row(rows, what, target, judged, beside, runs, args, pinning):
    """A latency percentile of compatd over the null server's, judged on the
    median of alternating rounds' ratios (runs: {"compatd": [...], "null":
    [...]}, paired by round); the absolute figures and a second percentile
    beside."""
    ratios = [c["latency_us"][judged] / max(n["latency_us"][judged], 1e-9)
              for c, n in zip(runs["compatd"], runs["null"])]

    def med(key, pct):
        return statistics.median(r["latency_us"][pct] for r in runs[key])

    failed = sum(r["failed"] for r in runs["compatd"])
    label = {"p50": "p50", "p99": "p99", "p999": "p99.9"}
    row(rows, what, "<= %.2fx" % target,
        "%.2fx (%s vs %s; median of %d rounds: %s); %s %s vs %s; %.0f req/s; %d failed" % (
            statistics.median(ratios), fmt_us(med("compatd", judged)),
            fmt_us(med("null", judged)), len(ratios), ", ".join("%.2f" % x for x in ratios),
            label[beside], fmt_us(med("compatd", beside)), fmt_us(med("null", beside)),
            statistics.median(r["qps"] for r in runs["compatd"]), failed),
        statistics.median(ratios) <= target and failed == 0, "",
        noise_of(runs["compatd"] + runs["null"], args, pinning))


def row(rows, what, target, measured, ok, note="", noise=None):
    """ok: True (PASS), False (MISS) or None (reported, no target). noise: the
    share of the servers' core other work took during the runs the row is
    made of (noise_of); above NOISE_LIMIT a judged row reads "noisy, rerun"
    instead of PASS or MISS."""
    if ok is None:
        result = "info"
    elif noise is not None and noise > NOISE_LIMIT:
        result = "noisy, rerun"
        note = (note + "; " if note else "") + (
            "other work took up to %.0f%% of the servers' core (limit %.0f%%)" % (
                100 * noise, 100 * NOISE_LIMIT))
    else:
        result = "PASS" if ok else "MISS"
    rows.append((what, target, measured, result, note))


# ---------------------------------------------------------------------------
# The HTTP front door (--http-listen): server CPU per call against the null
# HTTP server (the same library answering a canned body), measured with wrk.
HTTP_LISTENING = re.compile(r"(?:HTTP/JSON on http://|HTTP listening on )(\S+?):(\d+)")
WRK_SCRIPT = """
local f = io.open(os.getenv("BODY_FILE"), "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["User-Agent"] = "%s"
""" % USER_AGENT


def admission_review(obj):
    return json.dumps({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "2b1e0c7e-4b5d-4b77-9f3e-aa0d1c5c9b01",
                    "kind": {"group": obj["apiVersion"].rpartition("/")[0],
                             "version": obj["apiVersion"].rpartition("/")[2],
                             "kind": obj["kind"]},
                    "operation": "CREATE", "dryRun": False, "object": obj,
                    "oldObject": None}})


# 100 distinct Gatekeeper keys, 25 of each kind, all known to the 1.36 catalog
# but for the two removed APIs (answered too).
GATEKEEPER_KEYS = (
    ["feature:" + name for name in (
        "WatchList", "APIResponseCompression", "APIServerIdentity", "APIServerTracing",
        "AnonymousAuthConfigurableEndpoints", "AuthorizeNodeWithSelectors",
        "ConsistentListFromCache", "CoordinatedLeaderElection", "CPUManagerPolicyAlphaOptions",
        "DRAAdminAccess", "DynamicResourceAllocation", "InPlacePodVerticalScaling",
        "JobManagedBy", "KubeletTracing", "MutatingAdmissionPolicy", "NodeSwap",
        "PodLevelResources", "RecoverVolumeExpansionFailure", "RelaxedDNSSearchValidation",
        "SchedulerQueueingHints", "SidecarContainers", "StorageVersionAPI",
        "StorageVersionMigrator", "UserNamespacesSupport", "VolumeAttributesClass")] +
    ["api:" + gvk for gvk in (
        "v1/Pod", "v1/Service", "v1/ConfigMap", "v1/Secret", "v1/Namespace", "v1/Node",
        "v1/PersistentVolume", "v1/PersistentVolumeClaim", "v1/ServiceAccount",
        "apps/v1/Deployment", "apps/v1/StatefulSet", "apps/v1/DaemonSet", "apps/v1/ReplicaSet",
        "batch/v1/Job", "batch/v1/CronJob", "batch/v1beta1/CronJob",
        "networking.k8s.io/v1/Ingress", "networking.k8s.io/v1/NetworkPolicy",
        "extensions/v1beta1/Ingress", "policy/v1/PodDisruptionBudget",
        "rbac.authorization.k8s.io/v1/Role", "rbac.authorization.k8s.io/v1/ClusterRole",
        "rbac.authorization.k8s.io/v1/RoleBinding", "autoscaling/v2/HorizontalPodAutoscaler",
        "storage.k8s.io/v1/StorageClass")] +
    ["storage:" + gr for gr in (
        "pods", "services", "configmaps", "secrets", "namespaces", "nodes",
        "persistentvolumes", "persistentvolumeclaims", "serviceaccounts", "events",
        "apps/deployments", "apps/statefulsets", "apps/daemonsets", "apps/replicasets",
        "batch/jobs", "batch/cronjobs", "networking.k8s.io/ingresses",
        "networking.k8s.io/networkpolicies", "policy/poddisruptionbudgets",
        "rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/clusterroles",
        "autoscaling/horizontalpodautoscalers", "storage.k8s.io/storageclasses",
        "coordination.k8s.io/leases", "discovery.k8s.io/endpointslices")] +
    ["skew:kubelet/1.%d.%d" % (minor, patch) for minor in range(32, 37)
     for patch in range(5)])


def http_bodies(directory):
    """The request bodies of the HTTP rows, written to `directory`."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "namespace": "default",
                               "labels": {"app": "web"},
                               "annotations": {"note-%d" % i: "x" * 60 for i in range(60)}},
                  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [
                                            {"name": "c%d" % i, "image": "registry/app:%d" % i,
                                             "env": [{"name": "E%d" % j, "value": "v" * 20}
                                                     for j in range(8)]}
                                            for i in range(4)]}}}}
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "big", "namespace": "default"},
                 "data": {"key-%05d" % i: "v" * 1000 for i in range(1040)}}
    bodies = {
        "getfeature": json.dumps({"name": "WatchList"}),
        "deployment": admission_review(deployment),
        "configmap": admission_review(configmap),
        "gatekeeper": json.dumps({
            "apiVersion": "externaldata.gatekeeper.sh/v1beta1", "kind": "ProviderRequest",
            "request": {"keys": GATEKEEPER_KEYS}}),
    }
    paths = {}
    for name, body in bodies.items():
        paths[name] = os.path.join(directory, name + ".json")
        with open(paths[name], "w") as f:
            f.write(body)
    return paths


def wrk(args, recorder, server, path, body_file, script, pinning, connections=16):
    """wrk against server's `path` for args.round_seconds: requests/s and the
    server's CPU per request (utime + stime over the run)."""
    argv = pin(1, ["wrk", "-t1", "-c%d" % connections, "-d%gs" % args.round_seconds,
                   "-s", script, "http://%s%s" % (server.target, path)], pinning)
    recorder.note(["BODY_FILE=" + body_file] + argv)
    cpu0 = server.cpu_seconds()
    noise = CpuNoise(server)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, BODY_FILE=body_file))
    cpu = server.cpu_seconds() - cpu0
    m = re.search(r"Requests/sec:\s+([\d.]+)", p.stdout)
    n = re.search(r"(\d+) requests in", p.stdout)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", p.stdout)
    if p.returncode != 0 or not m or not n:
        raise Failure("wrk failed: %s %s" % (p.stdout[-1000:], p.stderr[-1000:]))
    requests = int(n.group(1))
    return noise.finish({"qps": float(m.group(1)), "us_per_call": 1e6 * cpu / max(requests, 1),
                         "non_2xx": int(bad.group(1)) if bad else 0}, pinning)


def http_rows(args, recorder, workdir, pinning, rows):
    if not shutil.which("wrk"):
        row(rows, "HTTP front door rows", "wrk", "wrk not installed", False)
        return
    bodies = http_bodies(workdir)
    script = os.path.join(workdir, "post.lua")
    with open(script, "w") as f:
        f.write(WRK_SCRIPT)
    compatd = Server("compatd_http", pin(0, [args.compatd, "--listen=127.0.0.1:0",
                                             "--metrics-listen=", "--http-listen=127.0.0.1:0"],
                                         pinning),
                     recorder, workdir, ready=COMPATD_READY, listening=HTTP_LISTENING,
                     healthz=True)
    nulls = {}
    try:
        canned = {}
        for name, path in (("getfeature", "/v1/GetFeature"),
                           ("deployment", "/admission/v1/validate")):
            p = subprocess.run(["curl", "-s", "-X", "POST", "--data-binary",
                                "@" + bodies[name], "http://%s%s" % (compatd.target, path)],
                               capture_output=True, text=True, timeout=30)
            canned[name] = os.path.join(workdir, "canned-" + name + ".json")
            with open(canned[name], "w") as f:
                f.write(p.stdout)
            nulls[name] = Server("null_http_" + name, pin(0, [
                args.null_http_server, "--listen=127.0.0.1:0", "--response=" + canned[name]],
                pinning), recorder, workdir, listening=HTTP_LISTENING)
        # As the gRPC rows: each server warmed up for a second first (fresh
        # connections, code paged in, first client records), not measured;
        # then an odd number of alternating rounds, so that the median is one
        # of them.
        warmup = argparse.Namespace(**vars(args))
        warmup.round_seconds = 1.0
        for server, path, body in ((nulls["getfeature"], "/", "getfeature"),
                                   (compatd, "/v1/GetFeature", "getfeature"),
                                   (nulls["deployment"], "/", "deployment"),
                                   (compatd, "/admission/v1/validate", "deployment"),
                                   (compatd, "/gatekeeper/v1", "gatekeeper")):
            wrk(warmup, recorder, server, path, bodies[body], script, pinning)
        results = {}
        for _ in range(max(3, args.rounds // 2) | 1):
            for key, server, path in (
                    ("null getfeature", nulls["getfeature"], "/"),
                    ("getfeature", compatd, "/v1/GetFeature"),
                    ("null deployment", nulls["deployment"], "/"),
                    ("deployment", compatd, "/admission/v1/validate")):
                body = bodies["deployment" if "deployment" in key else "getfeature"]
                results.setdefault(key, []).append(
                    wrk(args, recorder, server, path, body, script, pinning))
        for key, path, body in (("configmap", "/admission/v1/validate", "configmap"),
                                ("gatekeeper", "/gatekeeper/v1", "gatekeeper")):
            results[key] = [wrk(args, recorder, compatd, path, bodies[body], script, pinning,
                                connections=4)]
        # The same 100 keys with nothing kept between requests: every key
        # answered from the catalog each time.
        uncached = Server("compatd_http_nocache", pin(0, [
            args.compatd, "--listen=127.0.0.1:0", "--metrics-listen=",
            "--http-listen=127.0.0.1:0", "--gatekeeper-cache-bytes=0"], pinning),
            recorder, workdir, ready=COMPATD_READY, listening=HTTP_LISTENING,
            healthz=True)
        try:
            wrk(warmup, recorder, uncached, "/gatekeeper/v1", bodies["gatekeeper"], script,
                pinning, connections=4)
            results["gatekeeper uncached"] = [wrk(
                args, recorder, uncached, "/gatekeeper/v1", bodies["gatekeeper"], script,
                pinning, connections=4)]
        finally:
            uncached.stop()

        def median(key, field="us_per_call"):
            values = sorted(r[field] for r in results[key])
            return values[len(values) // 2]

        for what, mine, null, target in (
                ("HTTP /v1/GetFeature server CPU per call / null HTTP server's", "getfeature",
                 "null getfeature", 1.3),
                ("AdmissionReview of a 10 KiB Deployment, server CPU per call / null HTTP "
                 "server echoing a canned AdmissionReview", "deployment", "null deployment",
                 1.5)):
            ratio = median(mine) / max(median(null), 1e-9)
            failed = sum(r["non_2xx"] for r in results[mine])
            row(rows, what, "<= %.1fx" % target,
                "%.2fx (%.1f µs vs %.1f µs; %.0f req/s at 16 connections; %d non-2xx)" % (
                    ratio, median(mine), median(null), median(mine, "qps"), failed),
                ratio <= target and failed == 0, "",
                noise_of(results[mine] + results[null], args, pinning))
        cm = results["configmap"][0]
        row(rows, "AdmissionReview of a 1 MiB ConfigMap (simdjson On-Demand, no DOM)",
            "reported", "%.0f µs server CPU per call, %.0f req/s at 4 connections" % (
                cm["us_per_call"], cm["qps"]), None if cm["non_2xx"] == 0 else False)
        gk = results["gatekeeper"][0]
        row(rows, "Gatekeeper ProviderRequest of 100 distinct keys, server CPU per call "
            "(answers kept from earlier requests: --gatekeeper-cache-bytes default)",
            "<= 100 µs",
            "%.0f µs (%.0f req/s at 4 connections)" % (gk["us_per_call"], gk["qps"]),
            gk["us_per_call"] <= 100 and gk["non_2xx"] == 0, "",
            noise_of([gk], args, pinning))
        cold = results["gatekeeper uncached"][0]
        row(rows, "the same, every key answered from the catalog (--gatekeeper-cache-bytes=0)",
            "reported", "%.0f µs (%.1f µs per key; %.0f req/s at 4 connections)" % (
                cold["us_per_call"], cold["us_per_call"] / len(GATEKEEPER_KEYS), cold["qps"]),
            None if cold["non_2xx"] == 0 else False)
    finally:
        compatd.stop()
        for server in nulls.values():
            server.stop()


def scan_manifests(size):
    """About `size` bytes of manifests: each object a finding of a 1.30 scan."""
    one = "---\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: i}\n"
    return one * (size // len(one))


def start_with_http_port(args, recorder, workdir, pinning, name, extra):
    """compatd on CPU 0 with the front door on a free port; (server, port)."""
    compatd = Server(name, pin(0, [args.compatd, "--listen=127.0.0.1:0", "--metrics-listen=",
                                   "--http-listen=127.0.0.1:0"] + extra, pinning),
                     recorder, workdir, ready=COMPATD_READY)
    m = None
    deadline = time.monotonic() + 10
    while m is None and time.monotonic() < deadline:
        m = HTTP_LISTENING.search(compatd.log_text())
        time.sleep(0.02)
    if m is None:
        compatd.stop()
        raise Failure("%s did not log its HTTP port" % name)
    return compatd, m.group(2)


def getfeature_while(args, recorder, compatd, pinning, background, stop):
    """GetFeature at concurrency 1 for --seconds while `background` runs on a
    thread (it returns once `stop` is set); the load's result."""
    import threading
    thread = threading.Thread(target=background, daemon=True)
    thread.start()
    time.sleep(0.5)
    try:
        return load(args, recorder, compatd, ["--concurrency=1", "--channels=1",
                                              "--duration=%gs" % args.seconds,
                                              "--mix=GetFeature:1"], pinning)
    finally:
        stop.set()
        thread.join(timeout=120)


def scan_contention(args, recorder, workdir, pinning, rows):
    """GetFeature latency at concurrency 1 while 3 MiB scans run back to back on
    the HTTP front door (issue 23: light calls never queue behind heavy ones)."""
    import threading
    import urllib.request
    compatd, port = start_with_http_port(args, recorder, workdir, pinning, "compatd-scan",
                                         ["--max-heavy-work-time=60s"])
    try:
        url = "http://127.0.0.1:%s/v1/ScanObjects" % port
        # Under --max-http-body-bytes (3 MiB) as JSON.
        body = json.dumps({"target": "1.30",
                           "objects": scan_manifests(2700 << 10)}).encode()
        stop = threading.Event()
        scans = {"done": 0, "failed": 0, "seconds": []}

        def scanner():
            while not stop.is_set():
                t0 = time.monotonic()
                req = urllib.request.Request(url, data=body,
                                             headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=120) as r:
                        r.read()
                except OSError:
                    scans["failed"] += 1
                    continue
                scans["done"] += 1
                scans["seconds"].append(time.monotonic() - t0)

        result = getfeature_while(args, recorder, compatd, pinning, scanner, stop)
    finally:
        compatd.stop()
    lat = result["latency_us"]
    row(rows, "GetFeature p99 while 2.7 MiB scans run back to back (HTTP), concurrency 1",
        "<= 50 ms",
        "%s (p50 %s, max %s; %d scans of %.2f s median, %d failed)" % (
            fmt_us(lat["p99"]), fmt_us(lat["p50"]), fmt_us(lat["max"]), scans["done"],
            statistics.median(scans["seconds"]) if scans["seconds"] else 0.0,
            scans["failed"]),
        lat["p99"] <= 50000 and result["failed"] == 0 and scans["done"] > 0
        and scans["failed"] == 0)
    return result


def audit_contention(args, recorder, workdir, pinning, rows):
    """GetFeature latency at concurrency 1 while one sender posts kube-apiserver's
    default audit batches (400 Metadata-level events, gateway_benchmark's
    AuditBatch400) back to back to /audit/v1/events (issue 27: audit ingestion
    stays off the light calls' way); compatd's CPU per batch beside."""
    import threading
    import urllib.request
    batch_file = os.path.join(workdir, "audit-batch-400.json")
    recorder.run([args.gateway_benchmark, "--write-audit-batch=" + batch_file], 60)
    body = read_text(batch_file).encode()
    compatd, port = start_with_http_port(args, recorder, workdir, pinning, "compatd-audit",
                                         ["--audit"])
    try:
        url = "http://127.0.0.1:%s/audit/v1/events" % port
        batches = {"done": 0, "failed": 0, "seconds": 0.0}

        def post():
            req = urllib.request.Request(url, data=body,
                                         headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    r.read()
                    batches["done" if r.status == 200 else "failed"] += 1
            except OSError:
                batches["failed"] += 1

        # Alone first: compatd's CPU per batch (HTTP, JSON, the tracker and
        # the API-use rows), then with the GetFeature load beside.
        cpu_before = compatd.cpu_seconds()
        for _ in range(200):
            post()
        alone_cpu_ms = 1000.0 * (compatd.cpu_seconds() - cpu_before) / max(batches["done"], 1)
        batches["done"] = 0
        stop = threading.Event()

        def sender():
            t0 = time.monotonic()
            while not stop.is_set():
                post()
            batches["seconds"] = time.monotonic() - t0

        result = getfeature_while(args, recorder, compatd, pinning, sender, stop)
    finally:
        compatd.stop()
    lat = result["latency_us"]
    rate = batches["done"] / batches["seconds"] if batches["seconds"] else 0.0
    row(rows, "GetFeature p99 while 400-event audit batches arrive back to back, concurrency 1; "
        "compatd CPU per batch over HTTP",
        "<= 50 ms; <= 2 ms",
        "%s (p50 %s, max %s; %d batches, %.0f/s = %.0f events/s; alone, %.2f ms of "
        "compatd CPU per batch with its HTTP and JSON)" % (
            fmt_us(lat["p99"]), fmt_us(lat["p50"]), fmt_us(lat["max"]), batches["done"], rate,
            400 * rate, alone_cpu_ms),
        lat["p99"] <= 50000 and result["failed"] == 0 and batches["done"] > 0
        and batches["failed"] == 0 and alone_cpu_ms <= 2.0)
    return result


def full_run(args):
    recorder = Recorder()
    pinning = shutil.which("taskset") is not None and (os.cpu_count() or 1) >= 2
    info = machine()
    load_start = loadavg()
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="compatd-bench-")
    servers = []
    spinners = []
    runs = []  # (label, result) for the details table
    try:
        print("engine benchmarks ...", flush=True)
        engine = engine_benchmarks(args, recorder, workdir, pinning)
        canned = canned_responses(args, recorder, workdir)
        if args.spin_idle_cpus:
            # SCHED_IDLE busy loops run only when nothing else wants the CPU
            # and yield to any wake-up at once: the CPUs never halt, so a
            # wake-up costs no exit to the hypervisor (like idle=poll).
            for cpu in range(os.cpu_count() or 1):
                argv = ["chrt", "--idle", "0", "taskset", "-c", str(cpu),
                        "sh", "-c", "while :; do :; done"]
                recorder.note(argv)
                spinners.append(subprocess.Popen(argv))

        print("servers: compatd and null_server on CPU 0, compatd-load on CPU 1 ...",
              flush=True)
        compatd = Server("compatd", pin(0, [args.compatd, "--listen=127.0.0.1:0",
                                            "--metrics-listen=127.0.0.1:0"], pinning),
                         recorder, workdir, ready=COMPATD_READY)
        servers.append(compatd)
        null = Server("null_server", pin(0, [args.null_server, "--listen=127.0.0.1:0",
                                             "--responses=" + canned], pinning),
                      recorder, workdir)
        servers.append(null)
        time.sleep(1.0)
        idle_rss = {"compatd": compatd.status_kib("VmRSS"), "null": null.status_kib("VmRSS")}

        secs = args.seconds
        warm = ["--warmup=0.5s"]
        for s in (null, compatd):
            load(args, recorder, s, ["--concurrency=8", "--channels=2", "--duration=1s",
                                     "--mix=" + MIX], pinning)

        print("saturation (closed loop, concurrency 32, 4 channels) ...", flush=True)
        sat = {"compatd": [], "null": []}
        for _ in range(args.rounds):
            for key, s in (("null", null), ("compatd", compatd)):
                r = load(args, recorder, s, ["--concurrency=32", "--channels=4",
                                             "--duration=%gs" % args.round_seconds,
                                             "--mix=" + MIX] + warm,
                         pinning)
                sat[key].append(r)
                runs.append(("%s saturation" % s.name, r))
        ratios = [c["qps"] / n["qps"] for c, n in zip(sat["compatd"], sat["null"])]
        sat_rss = {k: max(r["server_peak_rss_kib"] for r in v) for k, v in sat.items()}

        print("saturation with every RPC in the mix ...", flush=True)
        wide = {"compatd": [], "null": []}
        for _ in range(args.wide_rounds):
            for key, s in (("null", null), ("compatd", compatd)):
                r = load(args, recorder, s, ["--concurrency=32", "--channels=4",
                                             "--duration=%gs" % args.round_seconds,
                                             "--mix=" + WIDE_MIX] + warm, pinning)
                wide[key].append(r)
                runs.append(("%s saturation, wide mix" % s.name, r))
        wide_ratios = [c["qps"] / n["qps"] for c, n in zip(wide["compatd"], wide["null"])]

        # Latency rows: alternating rounds, as the saturation rows, so that a
        # slow patch of the machine hits both servers; each row is judged on
        # the median of the rounds' ratios.
        def alternating(label, extra):
            results = {"compatd": [], "null": []}
            for _ in range(args.latency_rounds):
                for key, s in (("null", null), ("compatd", compatd)):
                    r = load(args, recorder, s, extra + ["--duration=%gs" % secs,
                                                         "--mix=" + MIX] + warm, pinning)
                    results[key].append(r)
                    runs.append(("%s %s" % (s.name, label), r))
            return results

        print("latency at concurrency 1 ...", flush=True)
        c1 = alternating("concurrency 1", ["--concurrency=1", "--channels=1"])
        print("open loop at 10000 req/s ...", flush=True)
        ol = alternating("open loop 10k/s", ["--rate=10000", "--channels=4"])
        for s in servers:
            s.stop()
        servers = []

        print("reload under load (catalog rewritten every 100 ms) ...", flush=True)
        catalog_dir = os.path.join(workdir, "catalog")
        os.makedirs(catalog_dir)
        source = os.path.join(REPO, "catalog", "kubernetes-1.36.yaml")
        variant_a = os.path.join(workdir, "variant-a.yaml")
        variant_b = os.path.join(workdir, "variant-b.yaml")
        shutil.copyfile(source, variant_a)
        with open(source) as f, open(variant_b, "w") as g:
            g.write(f.read() + "\n# variant B: same facts, other bytes, so a real reload\n")
        served = os.path.join(catalog_dir, "catalog.yaml")
        shutil.copyfile(source, served)
        reloading = Server("compatd-reload",
                           pin(0, [args.compatd, "--listen=127.0.0.1:0", "--metrics-listen=",
                                   "--catalog=" + served], pinning), recorder, workdir,
                           ready=COMPATD_READY)
        servers.append(reloading)
        rate = ["--rate=%d" % args.reload_rate, "--channels=4", "--duration=%gs" % secs,
                "--mix=" + MIX] + warm
        load(args, recorder, reloading, ["--concurrency=8", "--duration=1s"], pinning)
        steady = load(args, recorder, reloading, rate, pinning)
        runs.append(("compatd --catalog, no swaps, %d/s" % args.reload_rate, steady))
        swapping = load(args, recorder, reloading, rate + [
            "--swap-catalog=" + served, "--swap-variants=%s,%s" % (variant_b, variant_a),
            "--swap-interval=100ms"], pinning)
        runs.append(("compatd --catalog, swap every 100 ms, %d/s" % args.reload_rate, swapping))
        reload_log = reloading.log_text()
        reloading.stop()
        servers = []
    finally:
        for s in servers:
            s.stop()
        for p in spinners:
            p.kill()
            p.wait()
    load_end = loadavg()
    halt = halt_polling()  # read while a --guest-halt-poll-ns setting holds
    elapsed = time.monotonic() - started

    # ---- the table of targets
    rows = []
    # Engine rows are judged on CPU time (the thread's own): on a shared
    # machine, wall time also counts the time other processes held the core.
    gf = engine["BM_GetFeature_Engine/binary_version:0"]
    gf_line = engine["BM_GetFeature_Engine/binary_version:1"]
    gf_patch = engine["BM_GetFeature_Engine/binary_version:2"]
    df = engine["BM_DecideFeature"]
    cs = engine["BM_CheckSkew/too_old:0"]
    cs_old = engine["BM_CheckSkew/too_old:1"]
    rl = engine["BM_ResolveLine/binary_version:1"]
    row(rows, "engine GetFeature (pick the release line + resolve versions + "
        "DecideFeature), 1 thread",
        "median <= 100 ns, 0 heap allocations per query",
        "%s CPU (wall %s), %.0f alloc/op; the line's selection alone %s CPU, "
        "%.0f alloc/op (binaryVersion 1.36); with binaryVersion 1.36 the "
        "whole query %s CPU, %.0f alloc/op; with the patch 1.35.2 %s CPU, "
        "%.0f alloc/op (every embedded line served); DecideFeature alone %s" % (
            fmt_ns(gf["cpu_ns"]), fmt_ns(gf["ns"]), gf["allocs"],
            fmt_ns(rl["cpu_ns"]), rl["allocs"],
            fmt_ns(gf_line["cpu_ns"]), gf_line["allocs"],
            fmt_ns(gf_patch["cpu_ns"]), gf_patch["allocs"], fmt_ns(df["cpu_ns"])),
        gf["cpu_ns"] <= 100 and gf["allocs"] == 0 and gf_line["allocs"] == 0
        and gf_patch["cpu_ns"] <= 100 and gf_patch["allocs"] == 0
        and rl["allocs"] == 0,
        "the reason sentence is written later, straight into the reply")
    row(rows, "engine CheckSkew (kubelet 1.34 allowed; 1.30 too old), 1 thread",
        "median <= 100 ns, 0 heap allocations per query",
        "%s / %s CPU (wall %s / %s), %.0f / %.0f alloc/op" % (
            fmt_ns(cs["cpu_ns"]), fmt_ns(cs_old["cpu_ns"]), fmt_ns(cs["ns"]),
            fmt_ns(cs_old["ns"]), cs["allocs"], cs_old["allocs"]),
        max(cs["cpu_ns"], cs_old["cpu_ns"]) <= 100 and cs["allocs"] == 0
        and cs_old["allocs"] == 0,
        "the reason sentence is written later, straight into the reply")
    ratio = statistics.median(ratios)
    compatd_us = statistics.median(r["server_us_per_call"] for r in sat["compatd"])
    null_us = statistics.median(r["server_us_per_call"] for r in sat["null"])
    row(rows, "service QPS / null-server QPS (server on 1 core, %s)" % MIX, ">= 85%",
        "%.0f%% (%s vs %s req/s, median of %d rounds: %s)" % (
            100 * ratio, "%.0f" % statistics.median(r["qps"] for r in sat["compatd"]),
            "%.0f" % statistics.median(r["qps"] for r in sat["null"]), len(ratios),
            ", ".join("%.0f%%" % (100 * x) for x in ratios)),
        ratio >= 0.85,
        "server CPU %.0f%% (compatd) / %.0f%% (null) of its core, client CPU %.0f%%" % (
            100 * statistics.median(r["server_cpu"] for r in sat["compatd"]),
            100 * statistics.median(r["server_cpu"] for r in sat["null"]),
            100 * statistics.median(r["client_cpu"] for r in sat["compatd"])),
        noise_of(sat["compatd"] + sat["null"], args, pinning))
    capacity = [n["server_us_per_call"] / c["server_us_per_call"]
                for c, n in zip(sat["compatd"], sat["null"]) if c["server_us_per_call"] > 0]
    row(rows, "capacity: null server's CPU per call / compatd's (saturation, %s)" % MIX,
        ">= 0.95",
        "%.2f (%.1f µs vs %.1f µs per call; median of %d rounds: %s)" % (
            statistics.median(capacity), null_us, compatd_us, len(capacity),
            ", ".join("%.2f" % x for x in capacity)),
        statistics.median(capacity) >= 0.95, "",
        noise_of(sat["compatd"] + sat["null"], args, pinning))
    wide_ratio = statistics.median(wide_ratios)
    row(rows, "service QPS / null-server QPS, mix %s" % WIDE_MIX, ">= 85%",
        "%.0f%% (%.0f vs %.0f req/s, median of %d rounds: %s)" % (
            100 * wide_ratio, statistics.median(r["qps"] for r in wide["compatd"]),
            statistics.median(r["qps"] for r in wide["null"]), len(wide_ratios),
            ", ".join("%.0f%%" % (100 * x) for x in wide_ratios)),
        wide_ratio >= 0.85,
        "server CPU per call %.1f µs (compatd) / %.1f µs (null)" % (
            statistics.median(r["server_us_per_call"] for r in wide["compatd"]),
            statistics.median(r["server_us_per_call"] for r in wide["null"])),
        noise_of(wide["compatd"] + wide["null"], args, pinning))
    latency_row(rows, "loopback round trip, concurrency 1: p50 / null server's", 1.05, "p50",
                "p99", c1, args, pinning)
    latency_row(rows, "open loop 10k req/s: p99 / null server's", 1.2, "p99", "p999", ol,
                args, pinning)
    # Issue 21: six release lines embedded (1.31-1.36), each about 0.6 MiB; issue 31 adds 1.37
    # and the patch releases' gate changes, and the bound with them.
    row(rows, "idle RSS with the embedded catalogs of seven release lines", "<= 27 MiB",
        "%s (null server %s)" % (mib(idle_rss["compatd"]), mib(idle_rss["null"])),
        idle_rss["compatd"] <= 27 * 1024)
    rss_ratio = sat_rss["compatd"] / max(1, sat_rss["null"])
    row(rows, "RSS under saturation vs null server", "<= 1.3x",
        "%.2fx (%s vs %s, peak VmRSS)" % (rss_ratio, mib(sat_rss["compatd"]),
                                          mib(sat_rss["null"])),
        rss_ratio <= 1.3)
    parse = engine["BM_ParseCatalog"]
    reload_info = swapping["reload"] or {}
    latencies = reload_info.get("rename_to_publish_ms", [])
    row(rows, "catalog reload work (read + parse + validate + index + publish)", "<= 20 ms",
        "%s CPU (wall %s; BM_ParseCatalog median, real 1.36 catalog)" % (
            fmt_ns(parse["cpu_ns"]), fmt_ns(parse["ns"])),
        parse["cpu_ns"] <= 20e6)
    if latencies:
        e2e = "p50 %.1f ms, max %.1f ms over %d publishes" % (
            statistics.median(latencies), max(latencies), len(latencies))
    else:
        e2e = "no publish seen"
    row(rows, "catalog reload, rename -> WatchCatalog message (inotify, 5 ms debounce)",
        "<= 20 ms from event to publish",
        e2e, bool(latencies) and max(latencies) <= 20,
        "includes the reloader's 5 ms debounce of directory events",
        noise_of([swapping], args, pinning))
    row(rows, "failed calls during catalog swaps every 100 ms", "0",
        "%d of %d (%d swaps, %d publishes)" % (swapping["failed"], swapping["calls"],
                                              reload_info.get("swaps", 0),
                                              reload_info.get("publishes", 0)),
        swapping["failed"] == 0 and reload_info.get("publishes", 0) > 0)
    d99 = swapping["latency_us"]["p99"] - steady["latency_us"]["p99"]
    row(rows, "p99 with swaps minus p99 without (open loop %d req/s)" % args.reload_rate,
        "reported", "%+.0f µs (%s vs %s)" % (d99, fmt_us(swapping["latency_us"]["p99"]),
                                             fmt_us(steady["latency_us"]["p99"])), None)
    m = engine["BM_MethodMetrics_StartedHandled/threads:1"]
    m2 = engine.get("BM_MethodMetrics_StartedHandled/threads:2")
    row(rows, "metrics recording per request (Started + Handled)", "<= 30 ns, no shared lock",
        "%s CPU (wall %s), %.0f alloc/op%s" % (
            fmt_ns(m["cpu_ns"]), fmt_ns(m["ns"]), m["allocs"],
            "; 2 threads: %s CPU each" % fmt_ns(m2["cpu_ns"]) if m2 else ""),
        m["cpu_ns"] <= 30 and m["allocs"] == 0, "relaxed atomic adds on pre-resolved handles")

    print("HTTP front door (wrk against compatd --http-listen and null_http_server) ...",
          flush=True)
    http_rows(args, recorder, workdir, pinning, rows)

    print("GetFeature while 2.7 MiB scans run on the HTTP front door ...", flush=True)
    scan_contention(args, recorder, workdir, pinning, rows)

    print("GetFeature while audit batches arrive ...", flush=True)
    audit_contention(args, recorder, workdir, pinning, rows)

    table = ["| what | target | measured | result |", "|---|---|---|---|"]
    for what, target, measured, result, note in rows:
        table.append("| %s | %s | %s%s | %s |" % (what, target, measured,
                                                  " — " + note if note else "", result))

    details = ["| benchmark (median of %d) | time | CPU time | allocs/op |" % args.repetitions,
               "|---|---|---|---|"]
    for name, b in engine.items():
        details.append("| %s | %s | %s | %.1f |" % (name, fmt_ns(b["ns"]), fmt_ns(b["cpu_ns"]),
                                                    b["allocs"]))
    load_rows = ["| run | req/s | p50 | p90 | p99 | p99.9 | max | failed | server CPU | "
                 "server CPU/call | client CPU | others on CPU 0 | steal on CPU 0 | "
                 "server peak RSS |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, r in runs:
        lu = r["latency_us"]
        load_rows.append("| %s | %.0f | %s | %s | %s | %s | %s | %d | %.0f%% | %.1f µs | %.0f%% "
                         "| %.0f%% | %.0f%% | %s |" % (
                             label, r["qps"], fmt_us(lu["p50"]), fmt_us(lu["p90"]),
                             fmt_us(lu["p99"]), fmt_us(lu["p999"]), fmt_us(lu["max"]),
                             r["failed"], 100 * r["server_cpu"], r["server_us_per_call"],
                             100 * r["client_cpu"], 100 * r["others_on_cpu0"],
                             100 * r["steal_on_cpu0"], mib(r["server_peak_rss_kib"])))

    published = len(re.findall(r"catalog reloaded:", reload_log))
    max_others = max(r["others_on_cpu0"] + r["steal_on_cpu0"] for _, r in runs)
    passed = sum(1 for r in rows if r[3] == "PASS")
    noisy = sum(1 for r in rows if r[3] == "noisy, rerun")
    judged = sum(1 for r in rows if r[3] != "info")
    text = "\n".join([
        "# compatd benchmark results (latest `make bench`)",
        "",
        "- machine: %d CPUs, %s, Linux %s" % (info["nproc"], info["cpu"], info["kernel"]),
        "- commit: %s" % info["commit"],
        "- date: %s; whole run %.0f s" % (info["date"], elapsed),
        "- build: %s (%s)" % (args.build or "given binaries", args.build_type),
        "- load average (1, 5, 15 min) at start: %s; at end: %s; other processes used up "
        "to %.0f%% of the servers' CPU 0 during a load run (with the hypervisor's steal)%s" % (
            load_start, load_end, 100 * max_others,
            " — other work was running on this machine, so the numbers are noisy"
            if float(load_start.split()[0]) > 0.5 or (max_others > NOISE_LIMIT and
                                                       not args.spin_idle_cpus) else ""),
        "- pinning: %s" % ("servers on CPU 0, compatd-load and engine_benchmark on CPU 1 "
                           "(taskset)" if pinning else "none (taskset missing or 1 CPU)"),
        "- guest halt polling: %s" % halt,
        "- idle CPUs: %s" % (
            "kept from halting by SCHED_IDLE busy loops during the load runs "
            "(--spin-idle-cpus; the \"others on CPU 0\" column then counts them too)"
            if args.spin_idle_cpus else "left to halt (the default)"),
        "- %d of %d targets met%s" % (passed, judged, (
            "; %d rows too noisy to judge (\"noisy, rerun\": other work took more than "
            "%.0f%% of the servers' core)" % (noisy, 100 * NOISE_LIMIT)) if noisy else ""),
        "",
        "## Targets",
        "",
    ] + table + [
        "",
        "## Engine benchmarks",
        "",
    ] + details + [
        "",
        "## Load runs (compatd-load, mix %s; wide mix %s; User-Agent %s)" % (
            MIX, WIDE_MIX, USER_AGENT),
        "",
    ] + load_rows + [
        "",
        "Reload run: the server logged %d catalog reloads." % published,
        "",
        "## Commands",
        "",
        "```",
    ] + recorder.commands + ["```", ""])
    print()
    print("\n".join(table))
    print()
    print("%d of %d targets met%s; load average at start %s, at end %s; %.0f s" % (
        passed, judged, "; %d noisy, rerun" % noisy if noisy else "", load_start, load_end,
        elapsed))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)
        print("written to %s" % args.out)
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


# ---------------------------------------------------------------------------
# Smoke test (ctest)


def check(cond, message):
    if not cond:
        raise Failure(message)


def sane(result, what, min_qps, seconds=None, calls=None):
    check(result["failed"] == 0, "%s: %d calls failed: %s" % (
        what, result["failed"], result["errors_by_code"]))
    check(result["ok"] > 0, "%s: no call completed" % what)
    check(result["qps"] >= min_qps, "%s: %.1f req/s is not sane (< %d)" % (
        what, result["qps"], min_qps))
    lu = result["latency_us"]
    check(0 < lu["p50"] <= lu["p99"] <= lu["max"], "%s: latencies out of order: %s" % (
        what, lu))
    if seconds is not None:
        check(0.9 * seconds <= result["seconds"] <= seconds + 2.0,
              "%s: measured %.2f s for --duration=%gs" % (what, result["seconds"], seconds))
    if calls is not None:
        check(result["calls"] == calls, "%s: %d calls for --requests=%d" % (
            what, result["calls"], calls))


def smoke(args):
    recorder = Recorder()
    workdir = tempfile.mkdtemp(prefix="compatd-bench-smoke-")
    servers = []
    try:
        compatd = Server("compatd", [args.compatd, "--listen=127.0.0.1:0", "--metrics-listen="],
                         recorder, workdir, ready=COMPATD_READY)
        servers.append(compatd)
        closed = load(args, recorder, compatd, ["--concurrency=4", "--channels=2",
                                                "--duration=1s", "--mix=" + MIX], False)
        sane(closed, "compatd closed loop", 50, seconds=1.0)
        check(set(closed["rpcs"]) == {"GetFeature", "CheckSkew"},
              "the mix sent %s" % sorted(closed["rpcs"]))
        opened = load(args, recorder, compatd, ["--rate=200", "--duration=0.5s",
                                                "--mix=GetStorageVersion,ListAPIVersions"],
                      False)
        sane(opened, "compatd open loop", 100, seconds=0.5)
        # The null server with compatd's own answers, as the full run starts it
        # (it refuses to start on a response file it cannot read).
        canned = canned_responses(args, recorder, workdir)
        null = Server("null_server", [args.null_server, "--listen=127.0.0.1:0",
                                      "--responses=" + canned], recorder, workdir)
        servers.append(null)
        sane(load(args, recorder, null, ["--concurrency=2", "--requests=200",
                                         "--duration=0s", "--mix=" + MIX], False),
             "null_server", 20, calls=200)
        refused = subprocess.run([args.load, "--target=10.0.0.1:50051", "--duration=1s"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(refused.returncode == 2 and "loopback" in refused.stderr,
              "compatd-load did not refuse a non-loopback target")
        print("bench smoke: compatd %.0f req/s closed (p50 %s), %.0f req/s open; "
              "null_server ok; non-loopback refused" % (
                  closed["qps"], fmt_us(closed["latency_us"]["p50"]), opened["qps"]))
        return 0
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", help="CMake build directory with the binaries")
    parser.add_argument("--compatd")
    parser.add_argument("--load")
    parser.add_argument("--null-server")
    parser.add_argument("--null-http-server")
    parser.add_argument("--engine-benchmark")
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results", "latest.md"))
    parser.add_argument("--seconds", type=float, default=4.0,
                        help="measured seconds of each load run")
    parser.add_argument("--rounds", type=int, default=5, help="saturation rounds per server")
    parser.add_argument("--round-seconds", type=float, default=3.0,
                        help="measured seconds of each saturation round")
    parser.add_argument("--wide-rounds", type=int, default=3,
                        help="saturation rounds per server with every RPC in the mix")
    parser.add_argument("--latency-rounds", type=int, default=3,
                        help="alternating rounds per server of the concurrency-1 and "
                             "open-loop runs (each --seconds long)")
    parser.add_argument("--repetitions", type=int, default=5,
                        help="engine benchmark repetitions (the median is reported)")
    parser.add_argument("--min-time", default="0.2", help="engine benchmark min time, seconds")
    parser.add_argument("--reload-rate", type=int, default=5000,
                        help="open-loop rate of the reload-under-load runs")
    parser.add_argument("--spin-idle-cpus", action="store_true",
                        help="keep the CPUs from halting during the load runs (SCHED_IDLE "
                             "busy loops): on a VM, waking a halted vCPU adds tens of "
                             "microseconds to every light-load round trip")
    parser.add_argument("--guest-halt-poll-ns", type=int, default=None, metavar="NS",
                        help="on a VM whose cpuidle driver is haltpoll: set "
                             "/sys/module/haltpoll/parameters/guest_halt_poll_ns for the run "
                             "and restore it afterwards (root); 200000 is the kernel's default")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--scan-row", action="store_true",
                        help="only the row \"GetFeature p99 while a scan runs\" "
                             "(needs --build), printed, nothing written")
    parser.add_argument("--audit-row", action="store_true",
                        help="only the row \"GetFeature p99 while audit batches arrive\" "
                             "(needs --build), printed, nothing written")
    args = parser.parse_args()
    if args.build:
        b = os.path.abspath(args.build)
        args.compatd = args.compatd or os.path.join(b, "service", "compatd")
        args.load = args.load or os.path.join(b, "bench", "compatd-load")
        args.null_server = args.null_server or os.path.join(b, "bench", "null_server")
        args.null_http_server = args.null_http_server or os.path.join(
            b, "bench", "null_http_server")
        args.engine_benchmark = args.engine_benchmark or os.path.join(
            b, "bench", "engine_benchmark")
        args.gateway_benchmark = os.path.join(b, "bench", "gateway_benchmark")
    try:
        if args.smoke:
            for name in ("compatd", "load", "null_server"):
                if not getattr(args, name):
                    parser.error("--smoke needs --%s (or --build)" % name.replace("_", "-"))
            return smoke(args)
        if args.scan_row or args.audit_row:
            rows = []
            with tempfile.TemporaryDirectory() as workdir:
                if args.scan_row:
                    scan_contention(args, Recorder(), workdir, True, rows)
                if args.audit_row:
                    audit_contention(args, Recorder(), workdir, True, rows)
            for r in rows:
                print(" | ".join(r))
            return 0
        if not args.build:
            parser.error("give --build=DIR (an optimized CMake build)")
        args.build_type = build_type(args.build)
        if args.build_type not in ("Release", "RelWithDebInfo"):
            raise Failure("%s is a %r build; benchmark numbers need Release or RelWithDebInfo"
                          % (args.build, args.build_type))
        with HaltPollSetting(args.guest_halt_poll_ns):
            return full_run(args)
    except (Failure, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as e:
        print("run_bench: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
