// compatd-soak: a bounded soak test of the real compatd binary.
//
//   compatd-soak --compatd=build/service/compatd --duration=10m
//                [--warmup=60s] [--workers=4] [--seed=N] [--report=FILE]
//                [--max-light-p99=50ms] [--classes=all]
//
// Starts compatd on free ports of 127.0.0.1 (gRPC, /metrics and the
// HTTPS/JSON front door, --http-listen) with a catalog file in a fresh
// temporary directory, and for --duration at the same time:
//   - workers: valid calls of every unary RPC, each answer checked (mostly);
//     well-formed-but-wrong requests (random versions, names, flag strings,
//     huge strings, oversized batches); random bytes as request messages to
//     real methods, and unknown methods (grpc::GenericStub). Each worker has
//     a twin: one sends the requests of compatd's light lane, the other
//     those of its heavy lane (LintCatalog, Evaluate batches of more than 64
//     items, PlanUpgrade, a heavy RPC's garbage), classified by compatd's
//     own functions (soak/lanes.h), so that no light call waits behind its
//     own thread's heavy one;
//   - WatchCatalog streams opened, read, cancelled;
//   - raw TCP connections to both ports sending garbage or closing early;
//   - the front door (two keep-alive clients): the valid RPC requests as
//     POST JSON and, when they have scalar fields only, as GET queries, each
//     answer parsed back into the response message and judged by the same
//     check as over gRPC; AdmissionReviews and a Gatekeeper ProviderRequest
//     with known answers; /healthz; wrong requests with exact statuses (bad
//     JSON, unknown field, unknown gate, too deep, wrong method with Allow,
//     unknown path or RPC, wrong AdmissionReview; a wrong ProviderRequest
//     a 200 with its systemError); the
//     workers' random wrong requests as JSON;
//     (the front door's workers are split by lane as the gRPC ones);
//   - front door garbage (random bytes, requests cut short, malformed heads)
//     and oversized bodies (Content-Length or a chunk over
//     --max-http-body-bytes: 413 for the head alone);
//   - the heavy classes (issue 23), heavy-grpc and heavy-http, kHeavyThreads
//     threads each with one call in flight, which keep compatd's heavy lane
//     (--heavy-workers=1, --heavy-queue=8) busy: ScanObjects of ~3 MiB of
//     rendered charts (a CRD with CEL rules and its custom resources,
//     Deployments, Services, CronJobs, Ingresses, HPAs, some of APIs removed
//     by 1.36: extensions/v1beta1 Ingress, policy/v1beta1
//     PodSecurityPolicy, ...), PlanUpgrade over three minors, LintCatalog,
//     Evaluate of 520 items and of a few with a scan (soak/heavy_worker.h);
//   - hostile clients (issue 17): slowloris (requests trickled a byte at a
//     time, kSlowlorisPerPort on /metrics and on the front door: closed
//     within the 10 s header timeout + 5 s); a gRPC message whose prefix
//     declares 1 GiB, fed 1 MiB at a time (refused by RST_STREAM, GOAWAY or
//     close before --grpc-memory-bytes + 32 MiB); rapid reset bursts
//     (HEADERS then RST_STREAM, kRapidResetStreams on one connection); slow
//     readers (INITIAL_WINDOW_SIZE 0, unread Evaluate answers of ~0.7 MB);
//     connections without a preface (closed within --handshake-timeout + 5
//     s) and idle ones with a preface (within --max-connection-idle + 5 s).
//     The soak has no TLS port, so no garbage to one;
//   - header-only (issue 36): connections that send the head of a large
//     POST and then nothing, kHeaderOnlyAdmission to /admission/v1/validate
//     declaring 16 MiB (--max-admission-body-bytes) and kHeaderOnlyAudit to
//     /audit/v1/events declaring 3 MiB (--max-http-body-bytes), reopened as
//     compatd closes them: each closed without an answer within the 30 s
//     body timeout + 5 s (every other audit head declares 16 MiB, past that
//     route's bound: 413 at once), while /healthz answers 200 (probed every
//     second) and the light classes hold their p99;
//   - audit-hostile (issue 36): kube-apiserver's audit webhook batches
//     (audit.k8s.io/v1 EventLists, POST /audit/v1/events, compatd started
//     with --audit) every 100-300 ms, 10-49 good events of a cluster's
//     clients (some at risk, some skipped: ResponseStarted, 401) with 1-3
//     hostile items (soak/audit_batches.h): user names, API groups,
//     resources, subresources, k8s.io/removed-release annotations and
//     User-Agents of 128-384 KiB (ASCII, or 2-4-byte characters; one of
//     kGiantLengths lengths, so that the rows compatd keeps stay a few
//     hundred), odd text (U+FFFD, escaped NUL and ESC, quotes, U+2028, BOM,
//     C1), requestObjects nested 1,100-4,000 levels (or 900: read), items
//     that are not events, fields of the wrong type; one batch in 25 not
//     UTF-8 (raw bytes or a lone surrogate escape). Every 3 s ListApiUsage
//     and ListClients (gRPC) and /metrics are read back: each must answer,
//     keep at most --max-api-usage-rows rows (and the row "other") and
//     --max-client-series clients, and every kept field and label value at
//     most 256 bytes (group_version, two fields, 513), UTF-8, a cut one
//     ending "...(N bytes cut)" after at most 224 bytes (docs/limits.md,
//     "Audit event fields");
//   - catalog swaps every --swap-interval (write a temp file, rename it over
//     the catalog, as an editor does): good variants A and B in turn, and
//     now and then a bad one, each checked through GetCatalog;
//   - once a second: GET /metrics (compatd_answer_backlog_bytes judged), and
//     compatd's VmRSS and open descriptors (/proc/PID/fd).
// Then SIGTERM, and the verdict. FAIL (exit 1) when compatd died or did not
// exit 0, a call got a code (an HTTP request a status) its class does not
// allow, an answer was wrong, a bad catalog replaced a good one or a good
// one was not picked up, a scrape failed, a hostile connection outlived its
// limit, an audit batch's summary was wrong or a kept audit field or label
// passed its bound, the answer backlog passed --max-answer-backlog-bytes,
// descriptors passed their bound (those before the load + the connections the
// soak holds at most, ConnectionsHeld(), + kFdSlack) or stayed open 10 s after
// the load, the p99 latency after the warm-up of a light class passed
// --max-light-p99 (50 ms; see "Latency" below), or RSS after the warm-up
// grew past --max-rss-growth percent of
// the baseline (the median of the last 5 warm-up samples). Growth is what
// RSS holds for a while: the median of every ~30 s window of samples after
// the warm-up, so that a moment's spike (several requests near the 4 MiB
// message limit at once, a declared-huge message held up to the memory
// quota) that is given back does not count. One known limitation is
// reported beside the verdict rather than in it: while the huge-prefix
// attacker holds gRPC's memory quota (and 3 s after), calls that gRPC's
// reclamation resets (RESOURCE_EXHAUSTED "RST_STREAM with error code 11",
// UNAVAILABLE "GOAWAY received" or "Broken pipe") are collateral of
// grpc/grpc#43012 (see Env::QuotaCollateral), counted in their own section.
// Exit 2 for bad flags. The report (also written to --report as markdown) lists
// calls per class, RPC (route) and code (status), latency per class and
// call, the heavy lane's use, hostile clients' outcomes, reloads, RSS and
// descriptors.
//
// Latency: every call of the well-behaved light classes (valid gRPC calls
// of the light lane, the same as /v1/<RPC> JSON, AdmissionReviews, the
// Gatekeeper provider, /healthz) is timed around the client's blocking
// call, in bounded histograms (soak/latency.h: 1/32 resolution, ~9 KiB
// each, merged from every thread at the end), from the end of the warm-up
// only. The report has a table per class (calls, p50, p99, p99.9, max,
// calls over the bound), the same per call, and each light class's five
// slowest calls with when they started. The heavy lane's answered calls
// (the valid classes' heavy ones, heavy-grpc, heavy-http) are reported the
// same way but not judged; their refusals (lane full) are counted apart,
// with how often the scrapes found the lane running a call and its queue
// full.
//
// Accepted codes per class:
//   valid            OK (and the answer's check passes); over HTTP 200
//   HTTP wrong       the case's one status; the random wrong requests 200,
//                    400, 404 or 429 (grpc-gateway's mapping of the gRPC
//                    codes below), exactly 400 over the Evaluate item limit,
//                    413 over --max-http-body-bytes
//   HTTP garbage     a 4xx, or no answer (compatd closes the connection)
//   wrong            OK, INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION,
//                    RESOURCE_EXHAUSTED; exactly RESOURCE_EXHAUSTED over the
//                    message size limit, INVALID_ARGUMENT over the Evaluate
//                    item limit
//   garbage          bytes the request type cannot decode: exactly
//                    INVALID_ARGUMENT "the request is not a valid
//                    compatd.v1.<Request> message: ..." (README.md, "Limits
//                    and bad input": compatd decodes the request itself and
//                    names the message type). Bytes that do decode reach the
//                    handler and get the "wrong" codes; the soak decodes each
//                    message itself, with the protobuf library compatd links,
//                    to know which applies.
//   unknown method   exactly UNIMPLEMENTED
//   WatchCatalog     CANCELLED (the soak cancels) or DEADLINE_EXCEEDED
//   heavy-grpc       OK with a right answer (a scan: partial with its reason,
//                    or every object read, the removed and unknown ones
//                    blocking, the removed extensions/v1beta1 Ingress and
//                    policy/v1beta1 PodSecurityPolicy among the findings),
//                    or RESOURCE_EXHAUSTED "the heavy lane is full"
//   heavy-http       the same over /v1/<RPC>: 200, or 429 with Retry-After
//   audit-hostile    a batch: 200 whose summary ({"events","recorded",
//                    "skipped","malformed"}) is exactly what the batch was
//                    built with (hostile items skipped as malformed or
//                    recorded with their fields cut), or 429 with
//                    Retry-After (the audit queue full: counted, and the
//                    thread waits as asked); a batch that is not UTF-8
//                    exactly 400 (not JSON, RFC 8259 8.1; kube-apiserver
//                    never sends one: Go writes U+FFFD); its read-back
//                    calls OK and /metrics 200
//   header-only      no answer and a close within the body timeout + 5 s;
//                    a head over its route's bound 413 at once
// In every class a heavy-lane call may also be refused because the lane is
// full (RESOURCE_EXHAUSTED "the heavy lane is full"; 429 with Retry-After):
// compatd refuses it before it reads the request. The thread then waits
// the Retry-After (2 s) before its next call, as a well-behaved client does.

#include "soak/audit_sender.h"
#include "soak/common.h"
#include "soak/grpc_worker.h"
#include "soak/header_only.h"
#include "soak/heavy_worker.h"
#include "soak/http2_abuser.h"
#include "soak/http_abuser.h"
#include "soak/http_worker.h"
#include "soak/idler.h"
#include "soak/slowloris.h"
#include "soak/swapper.h"
#include "soak/transport_garbage.h"
#include "soak/watcher.h"

namespace compatd::soak {
namespace {

// ---------------------------------------------------------------------------
// Report helpers

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index =
      std::min(values.size() - 1,
               static_cast<size_t>(q * static_cast<double>(values.size())));
  return values[index];
}

double MiB(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

struct RssSample {
  double seconds;
  int64_t bytes;
};

struct FdSample {
  double seconds;
  int count;
};

// compatd's open descriptors (/proc/PID/fd).
absl::StatusOr<int> OpenFds(pid_t pid) {
  std::error_code error;
  int count = 0;
  for (std::filesystem::directory_iterator
           it(absl::StrCat("/proc/", pid, "/fd"), error),
       end;
       !error && it != end; it.increment(error)) {
    ++count;
  }
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("/proc/", pid, "/fd: ", error.message()));
  }
  return count;
}

// Sums of the samples of `name` matching `labels`.
double SumOf(const std::vector<testing::Sample>& samples,
             absl::string_view name,
             const std::map<std::string, std::string>& labels = {}) {
  double sum = 0;
  for (const testing::Sample& s : testing::Select(samples, name, labels)) {
    sum += s.value;
  }
  return sum;
}

// ---------------------------------------------------------------------------
// The run

constexpr char kUsage[] =
    "compatd-soak: a bounded soak test of the real compatd binary on "
    "127.0.0.1: mixed valid, wrong and garbage load, WatchCatalog streams, "
    "raw TCP garbage, catalog swaps (good and bad), /metrics scrapes and "
    "heavy requests (scans, plans, lints, large batches), while compatd's "
    "RSS and the light calls' latency are measured. Exit 0 PASS, 1 FAIL, 2 "
    "bad flags.\n\n"
    "Usage:\n"
    "  compatd-soak --compatd=PATH [--duration=10m] [--warmup=60s] "
    "[--workers=4]\n"
    "               [--seed=N] [--report=FILE]\n\n"
    "Flags:\n";

class Soak {
 public:
  explicit Soak(Options options) { env_.options = std::move(options); }

  int Run() {
    const Options& o = env_.options;
    env_.seed = o.seed != 0
                    ? static_cast<uint64_t>(o.seed)
                    : static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())) %
                          1000000007;
    if (absl::Status s = Setup(); !s.ok()) {
      std::cerr << "compatd-soak: setup failed: " << s.message() << "\n";
      return kExitFail;
    }
    std::cout << absl::StrFormat(
                     "compatd-soak: %s (pid %d) on 127.0.0.1:%d, metrics :%d; "
                     "catalog %s; "
                     "%s with %s warm-up, %d workers, seed %d\n",
                     o.compatd, compatd_.pid(), env_.grpc_port,
                     env_.metrics_port, env_.catalog_path,
                     absl::FormatDuration(o.duration),
                     absl::FormatDuration(o.warmup), o.workers, env_.seed)
              << std::flush;
    Load();
    Finish();
    const std::string report = Report();
    std::cout << "\n" << report << std::flush;
    if (!o.report.empty()) {
      std::ofstream out(o.report, std::ios::trunc);
      out << report;
      if (!out) {
        std::cerr << "compatd-soak: cannot write " << o.report << "\n";
        return kExitFail;
      }
    }
    return Passed() ? 0 : kExitFail;
  }

 private:
  absl::Status Setup() {
    const Options& o = env_.options;
    absl::StatusOr<std::string> base = testing::ReadFile(o.catalog);
    if (!base.ok()) return base.status();
    env_.base_catalog = *std::move(base);
    if (env_.base_catalog.find("\ncluster:") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          o.catalog, " has a cluster section; variant B adds its own"));
    }
    if (dir_.path().empty()) {
      return absl::InternalError("cannot make a temporary directory");
    }
    env_.catalog_dir = dir_.path() + "/catalog";
    std::filesystem::create_directory(env_.catalog_dir);
    env_.catalog_path = env_.catalog_dir + "/catalog.yaml";
    const std::string a = VariantA(env_.base_catalog);
    const std::string b = VariantB(env_.base_catalog);
    env_.facts.digest_a = CatalogDigest(a);
    env_.facts.digest_b = CatalogDigest(b);
    env_.facts.max_client_series = kMaxClientSeries;
    env_.facts.max_api_usage_rows = kMaxApiUsageRows;
    // Both variants must be valid, or every check below is moot.
    const std::string b_path = dir_.path() + "/variant-b.yaml";
    if (!testing::WriteFile(env_.catalog_path, a) ||
        !testing::WriteFile(b_path, b)) {
      return absl::InternalError(absl::StrCat("cannot write in ", dir_.path()));
    }
    for (const std::string& path : {env_.catalog_path, b_path}) {
      const testing::RunResult check =
          testing::RunCompatd(o.compatd, {"--check-catalog=" + path});
      if (check.exit_code != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("compatd --check-catalog=", path, " exited ",
                         check.exit_code, ":\n", check.out, check.err));
      }
    }
    COMPATD_RETURN_IF_ERROR(compatd_.Start(CompatdFlags()));
    env_.grpc_port = compatd_.grpc_port();
    env_.metrics_port = compatd_.metrics_port();
    env_.http_port = compatd_.http_port();
    if (env_.http_port == 0) {
      return absl::InternalError(
          "compatd did not report its --http-listen port");
    }
    auto stub = v1::CompatibilityPolicy::NewStub(compatd_.NewChannel());
    grpc::ClientContext context;
    context.set_deadline(Deadline(o.call_timeout));
    v1::GetCatalogResponse catalog;
    const grpc::Status status =
        stub->GetCatalog(&context, v1::GetCatalogRequest(), &catalog);
    if (!status.ok()) {
      return absl::UnavailableError(
          absl::StrCat("GetCatalog: ", status.error_message()));
    }
    if (catalog.digest() != env_.facts.digest_a) {
      return absl::InternalError(absl::StrCat(
          "compatd serves digest ", catalog.digest(), ", the soak computed ",
          env_.facts.digest_a, " for the same bytes"));
    }
    env_.facts.features = catalog.counts().features();
    initial_generation_ = catalog.generation();
    // Descriptors before any load: the bound's base.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    absl::StatusOr<int> fds = OpenFds(compatd_.pid());
    if (!fds.ok()) return fds.status();
    fds_idle_ = *fds;
    fd_limit_ = fds_idle_ + ConnectionsHeld(o.workers) + kFdSlack;
    return absl::OkStatus();
  }

  // compatd's flags: the catalog, and every limit the soak's expectations
  // depend on, explicitly.
  std::vector<std::string> CompatdFlags() const {
    return {
        "--catalog=" + env_.catalog_path,
        absl::StrCat("--max-recv-message-bytes=", kMaxRecvMessageBytes),
        absl::StrCat("--max-evaluate-items=", kMaxEvaluateItems),
        absl::StrCat("--max-client-series=", kMaxClientSeries),
        "--http-listen=127.0.0.1:0",
        absl::StrCat("--max-http-body-bytes=", kMaxHttpBodyBytes),
        absl::StrCat("--handshake-timeout=", kHandshakeTimeoutSeconds, "s"),
        absl::StrCat("--max-connection-idle=", kMaxConnectionIdleSeconds, "s"),
        absl::StrCat("--grpc-memory-bytes=", kGrpcMemoryMiB << 20),
        absl::StrCat("--max-answer-backlog-bytes=", kMaxAnswerBacklogMiB << 20),
        absl::StrCat("--heavy-workers=", kHeavyWorkers),
        absl::StrCat("--heavy-queue=", kHeavyQueue),
        absl::StrCat("--max-heavy-work-time=", kHeavyWorkTimeSeconds, "s"),
        absl::StrCat("--max-admission-body-bytes=", kMaxAdmissionBodyBytes),
        // The audit webhook route (on by default), its bounds.
        "--audit", absl::StrCat("--audit-max-batch-bytes=", kMaxHttpBodyBytes),
        "--audit-max-concurrent-batches=1", "--audit-max-queued-batches=8",
        absl::StrCat("--max-api-usage-rows=", kMaxApiUsageRows)};
  }

  // The traffic classes' objects and a thread for each one the flags enable.
  std::vector<std::thread> StartLoad() {
    const Options& o = env_.options;
    if (o.valid || o.wrong || o.garbage || o.unknown) {
      for (int i = 0; i < o.workers; ++i) {
        workers_.push_back(std::make_unique<Worker>(&env_, i, Lane::kLight));
      }
    }
    // Each light worker's heavy-lane twin (unknown methods are light only).
    if (o.valid || o.wrong || o.garbage) {
      for (int i = 0; i < o.workers; ++i) {
        workers_.push_back(
            std::make_unique<Worker>(&env_, o.workers + i, Lane::kHeavy));
      }
    }
    if (o.watch) {
      for (int i = 0; i < 2; ++i) {
        watchers_.push_back(std::make_unique<Watcher>(&env_, i));
      }
    }
    if (o.http_valid || o.http_wrong) {
      for (int i = 0; i < 2 * kHttpWorkers; ++i) {
        http_workers_.push_back(std::make_unique<HttpWorker>(
            &env_, i, i < kHttpWorkers ? Lane::kLight : Lane::kHeavy));
      }
    }
    for (int i = 0; i < kHeavyThreads; ++i) {
      if (o.heavy_grpc) {
        heavy_workers_.push_back(
            std::make_unique<HeavyWorker>(&env_, i, false));
      }
      if (o.heavy_http) {
        heavy_workers_.push_back(
            std::make_unique<HeavyWorker>(&env_, kHeavyThreads + i, true));
      }
    }
    transport_ = std::make_unique<TransportGarbage>(&env_);
    swapper_ = std::make_unique<Swapper>(&env_, initial_generation_);
    http_abuser_ = std::make_unique<HttpAbuser>(&env_);
    slowloris_ = std::make_unique<Slowloris>(&env_);
    http2_abuser_ = std::make_unique<Http2Abuser>(&env_);
    idler_ = std::make_unique<Idler>(&env_);
    audit_sender_ = std::make_unique<AuditSender>(&env_);
    header_only_ = std::make_unique<HeaderOnly>(&env_);
    start_ = Clock::now();
    env_.load_start = start_;
    env_.measure_from = start_ + absl::ToChronoNanoseconds(o.warmup);
    std::vector<std::thread> threads;
    for (auto& w : workers_) threads.emplace_back([&w] { w->Run(); });
    for (auto& w : heavy_workers_) threads.emplace_back([&w] { w->Run(); });
    for (auto& w : watchers_) threads.emplace_back([&w] { w->Run(); });
    for (auto& w : http_workers_) threads.emplace_back([&w] { w->Run(); });
    if (o.transport) threads.emplace_back([this] { transport_->Run(); });
    if (o.swap) threads.emplace_back([this] { swapper_->Run(); });
    if (o.http_garbage || o.oversized) {
      threads.emplace_back([this] { http_abuser_->Run(); });
    }
    if (o.slowloris) threads.emplace_back([this] { slowloris_->Run(); });
    if (o.huge_prefix || o.rapid_reset || o.slow_reader) {
      threads.emplace_back([this] { http2_abuser_->Run(); });
    }
    if (o.idle) threads.emplace_back([this] { idler_->Run(); });
    if (o.audit_hostile) {
      threads.emplace_back([this] { audit_sender_->Run(); });
    }
    if (o.header_only) threads.emplace_back([this] { header_only_->Run(); });
    return threads;
  }

  // compatd's RSS and descriptors at `t`; false when it died.
  bool SampleProcess(double t) {
    const Options& o = env_.options;
    absl::StatusOr<int64_t> rss = testing::VmRssBytes(compatd_.pid());
    if (!rss.ok()) {
      // A process that exited has no VmRSS (a zombie) or no /proc entry.
      died_ = true;
      env_.failures.Add("compatd died",
                        absl::StrCat("at ", absl::StrFormat("%.0f", t),
                                     " s: ", rss.status().message()));
      return false;
    }
    rss_.push_back({t, *rss});
    if (absl::StatusOr<int> fds = OpenFds(compatd_.pid()); fds.ok()) {
      fds_.push_back({t, *fds});
      if (*fds > fd_limit_) {
        env_.failures.Add(
            "descriptors over the bound",
            absl::StrFormat("%d open descriptors at %.0f s, over %d (%d "
                            "idle + %d connections the soak holds + %d)",
                            *fds, t, fd_limit_, fds_idle_,
                            ConnectionsHeld(o.workers), kFdSlack));
      }
    }
    return true;
  }

  // One progress line: the calls since the last one, failures, RSS, swaps.
  void Progress(double t, double last_progress, uint64_t calls,
                uint64_t calls_at_last_progress) {
    const double warmup = absl::ToDoubleSeconds(env_.options.warmup);
    std::cout << absl::StrFormat(
                     "[%4.0fs] %s calls %d (%.0f/s), failures %d, RSS "
                     "%.1f MiB, fds %d, catalog generation %d (%d good, "
                     "%d bad swaps)\n",
                     t, t < warmup ? "warm-up" : "soak   ", calls,
                     static_cast<double>(calls - calls_at_last_progress) /
                         (t - last_progress),
                     env_.failures.total(), MiB(rss_.back().bytes),
                     fds_.empty() ? 0 : fds_.back().count,
                     swapper_->generation(), swapper_->good(), swapper_->bad())
              << std::flush;
  }

  void Load() {
    const Options& o = env_.options;
    std::vector<std::thread> threads = StartLoad();
    const double duration = absl::ToDoubleSeconds(o.duration);
    const int progress_every = duration >= 120 ? 30 : 5;
    uint64_t calls_at_last_progress = 0;
    double last_progress = 0;
    for (int tick = 0;; ++tick) {
      std::this_thread::sleep_until(start_ + std::chrono::seconds(tick));
      const double t = Seconds();
      // A slow scrape makes ticks late: skip the ones already past.
      tick = std::max(tick, static_cast<int>(t));
      if (t >= duration) break;
      if (!SampleProcess(t)) break;
      Scrape(/*final=*/false);
      if (t - last_progress >= progress_every) {
        const uint64_t calls = env_.calls.load();
        Progress(t, last_progress, calls, calls_at_last_progress);
        calls_at_last_progress = calls;
        last_progress = t;
      }
    }
    env_.stop.store(true);
    load_seconds_ = Seconds();
    for (std::thread& thread : threads) thread.join();
  }

  double Seconds() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }

  void Scrape(bool final) {
    ++scrapes_;
    absl::StatusOr<testing::HttpReply> reply =
        testing::HttpGet(env_.metrics_port, "/metrics");
    std::string problem;
    if (!reply.ok()) {
      problem = std::string(reply.status().message());
    } else if (reply->status != 200) {
      problem = absl::StrCat("status ", reply->status);
    } else if (reply->body.find("\ncompatd_catalog_generation ") ==
               std::string::npos) {
      problem = "no compatd_catalog_generation sample";
    } else {
      absl::StatusOr<std::vector<testing::Sample>> samples =
          testing::ParseExposition(reply->body);
      if (!samples.ok()) {
        problem = absl::StrCat("unparsable: ", samples.status().message());
      } else {
        const double backlog = SumOf(*samples, "compatd_answer_backlog_bytes");
        max_backlog_ = std::max(max_backlog_, backlog);
        if (backlog > static_cast<double>(kMaxAnswerBacklogMiB << 20)) {
          env_.failures.Add(
              "answer backlog over its bound",
              absl::StrFormat("compatd_answer_backlog_bytes %.0f, over "
                              "--max-answer-backlog-bytes %d",
                              backlog, kMaxAnswerBacklogMiB << 20));
        }
        if (!final) SampleHeavyLane(*samples);
      }
      if (samples.ok() && final) {
        final_samples_ = *std::move(samples);
        final_scrape_ok_ = true;
      }
    }
    if (!problem.empty()) {
      ++scrape_failures_;
      env_.failures.Add("metrics scrape",
                        absl::StrCat(final ? "final " : "",
                                     "GET /metrics: ", Shorten(problem)));
    }
  }

  // The heavy lane's pool after the warm-up: running and waiting calls.
  void SampleHeavyLane(const std::vector<testing::Sample>& samples) {
    if (Clock::now() < env_.measure_from) return;
    const double running =
        SumOf(samples, "compatd_lane_running", {{"lane", "heavy"}});
    const double queued =
        SumOf(samples, "compatd_lane_queued", {{"lane", "heavy"}});
    ++lane_samples_;
    if (running >= 1) ++lane_busy_samples_;
    if (queued >= kHeavyQueue) ++lane_full_samples_;
    lane_queued_sum_ += queued;
  }

  // started - handled over every method of the final scrape.
  double ServerCallsOpen() const {
    return SumOf(final_samples_, "grpc_server_started_total") -
           SumOf(final_samples_, "grpc_server_handled_total");
  }

  // The final scrape's counters: every call finished, every good catalog
  // loaded and every bad one rejected, the generation they add up to.
  void JudgeServerCounts() {
    auto reloads = [&](const char* result) {
      return static_cast<uint64_t>(SumOf(final_samples_,
                                         "compatd_catalog_reloads_total",
                                         {{"result", result}}));
    };
    loaded_ = reloads("loaded");
    unchanged_ = reloads("unchanged");
    rejected_ = reloads("rejected");
    final_generation_ = static_cast<uint64_t>(
        SumOf(final_samples_, "compatd_catalog_generation"));
    server_in_flight_ = ServerCallsOpen();
    for (const testing::Sample& started :
         testing::Select(final_samples_, "grpc_server_started_total")) {
      const std::string method = started.labels.count("grpc_method")
                                     ? started.labels.at("grpc_method")
                                     : "?";
      const double handled = SumOf(final_samples_, "grpc_server_handled_total",
                                   {{"grpc_method", method}});
      if (started.value != handled) {
        absl::StrAppendFormat(&in_flight_detail_, " %s %.0f-%.0f", method,
                              started.value, handled);
      }
    }
    if (server_in_flight_ != 0) {
      env_.failures.Add(
          "calls never finished",
          absl::StrFormat("5 s after the load stopped, "
                          "grpc_server_started_total - "
                          "grpc_server_handled_total is %.0f (started - "
                          "handled by method:%s)",
                          server_in_flight_, in_flight_detail_));
    }
    if (loaded_ != swapper_->good()) {
      env_.failures.Add(
          "catalog swap",
          absl::StrCat("compatd_catalog_reloads_total{result=\"loaded\"} ",
                       loaded_, " but ", swapper_->good(),
                       " good catalogs were swapped in"));
    }
    if (rejected_ < swapper_->bad()) {
      env_.failures.Add(
          "catalog swap",
          absl::StrCat("compatd_catalog_reloads_total{result=\"rejected\"} ",
                       rejected_, " but ", swapper_->bad(),
                       " bad catalogs were swapped in"));
    }
    if (final_generation_ != initial_generation_ + loaded_) {
      env_.failures.Add(
          "catalog swap",
          absl::StrCat("compatd_catalog_generation ", final_generation_,
                       " after ", loaded_, " reloads from generation ",
                       initial_generation_));
    }
  }

  // Every connection the soak closed must be closed by compatd too: what is
  // left is the idle count, the gRPC workers' channels, the front door
  // workers' keep-alive connections and the heavy classes' (still open),
  // and a few.
  void JudgeFdsAfterLoad() {
    const int open =
        2 * env_.options.workers + 2 * kHttpWorkers + 2 * kHeavyThreads;
    const int bound = fds_idle_ + open + 8;
    const auto settle = Clock::now() + std::chrono::seconds(10);
    do {
      absl::StatusOr<int> fds = OpenFds(compatd_.pid());
      fds_after_load_ = fds.ok() ? *fds : -1;
      if (fds_after_load_ <= bound) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } while (Clock::now() < settle);
    if (fds_after_load_ > bound) {
      env_.failures.Add(
          "descriptors kept after the load",
          absl::StrFormat("%d open descriptors 10 s after the load stopped, "
                          "over %d (%d idle + the %d connections still "
                          "open + 8)",
                          fds_after_load_, bound, fds_idle_, open));
    }
  }

  // SIGTERM: a clean exit within 10 s, else its stderr's tail is kept.
  void StopCompatd() {
    const auto stop_start = Clock::now();
    exit_code_ = compatd_.Stop();
    stop_seconds_ =
        std::chrono::duration<double>(Clock::now() - stop_start).count();
    if (!exit_code_.has_value()) {
      env_.failures.Add("compatd exit",
                        "no exit within 10 s of SIGTERM (killed)");
    } else if (*exit_code_ != 0) {
      env_.failures.Add("compatd exit",
                        absl::StrCat("exit code ", *exit_code_,
                                     *exit_code_ > 128 ? " (a signal)" : ""));
    }
    if (!exit_code_.has_value() || *exit_code_ != 0) {
      const std::string err = compatd_.Stderr();
      stderr_tail_ = err.substr(err.size() > 4000 ? err.size() - 4000 : 0);
    }
  }

  void Finish() {
    if (!died_) {
      // Every call is over on the client; the server's counters follow
      // within moments (a cancelled stream finishes asynchronously). A call
      // that never finishes is a leak.
      Scrape(/*final=*/true);
      const auto settle = Clock::now() + std::chrono::seconds(5);
      while (final_scrape_ok_ && ServerCallsOpen() != 0 &&
             Clock::now() < settle) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        Scrape(/*final=*/true);
      }
      if (final_scrape_ok_) JudgeServerCounts();
    }
    if (!died_) JudgeFdsAfterLoad();
    StopCompatd();
    JudgeRss();
    JudgeLatency();
  }

  // Every thread's latencies together; a light class whose p99 after the
  // warm-up is over --max-light-p99 fails the run.
  void JudgeLatency() {
    for (const auto& w : workers_) latency_.Merge(w->latency());
    for (const auto& w : http_workers_) latency_.Merge(w->latency());
    for (const auto& w : heavy_workers_) latency_.Merge(w->latency());
    latency_.Merge(audit_sender_->latency());
    const int64_t bound = LightBoundMicros(env_);
    for (int i = 0; i < kLatencyClassCount; ++i) {
      const auto cls = static_cast<LatencyClass>(i);
      const LatencyHistogram& h = latency_.of(cls);
      const LatencyClassInfo& info = kLatencyClasses[static_cast<size_t>(i)];
      if (!info.judged || h.count() == 0 || h.Quantile(0.99) <= bound) {
        continue;
      }
      std::vector<std::string> slowest;
      for (const SlowCall& call : latency_.slowest(cls)) {
        slowest.push_back(absl::StrFormat("%.1f ms at %.0f s: %s",
                                          call.micros / 1000.0, call.at_seconds,
                                          call.what));
      }
      env_.failures.Add(
          "light-call latency over --max-light-p99",
          absl::StrFormat("%s (%s lane): p99 %.1f ms over %.1f ms; %d of %d "
                          "calls over it; slowest: %s",
                          info.name, info.lane, h.Quantile(0.99) / 1000.0,
                          bound / 1000.0, latency_.over_bound(cls), h.count(),
                          absl::StrJoin(slowest, "; ")));
    }
  }

  void JudgeRss() {
    const double warmup = absl::ToDoubleSeconds(env_.options.warmup);
    std::vector<int64_t> tail;
    for (const RssSample& s : rss_) {
      if (s.seconds < warmup) tail.push_back(s.bytes);
    }
    if (tail.size() > 5) tail.erase(tail.begin(), tail.end() - 5);
    if (tail.empty() || died_) return;
    std::sort(tail.begin(), tail.end());
    baseline_ = tail[tail.size() / 2];
    std::vector<RssSample> after;
    for (const RssSample& s : rss_) {
      if (s.seconds < warmup) continue;
      after.push_back(s);
      ++rss_after_warmup_;
      if (s.bytes > max_after_warmup_) {
        max_after_warmup_ = s.bytes;
        max_at_ = s.seconds;
      }
    }
    // The sustained RSS: the median of each window of kWindow samples.
    constexpr size_t kWindow = 31;
    for (size_t i = 0; i < after.size(); ++i) {
      const size_t begin = i >= kWindow / 2 ? i - kWindow / 2 : 0;
      const size_t end = std::min(after.size(), i + kWindow / 2 + 1);
      std::vector<int64_t> window;
      for (size_t j = begin; j < end; ++j) window.push_back(after[j].bytes);
      std::nth_element(window.begin(), window.begin() + window.size() / 2,
                       window.end());
      const int64_t median = window[window.size() / 2];
      if (median > sustained_max_) {
        sustained_max_ = median;
        sustained_at_ = after[i].seconds;
      }
    }
    final_rss_ = rss_.back().bytes;
    const double limit =
        static_cast<double>(baseline_) *
        (1.0 + static_cast<double>(env_.options.max_rss_growth) / 100.0);
    if (static_cast<double>(sustained_max_) > limit) {
      env_.failures.Add(
          "RSS growth",
          absl::StrFormat("sustained %.1f MiB around %.0f s (median of ~30 s), "
                          "over %.1f MiB (baseline %.1f MiB + %d%%)",
                          MiB(sustained_max_), sustained_at_, limit / (1 << 20),
                          MiB(baseline_), env_.options.max_rss_growth));
    }
  }

  bool Passed() const { return env_.failures.total() == 0; }

  std::string Report() const {
    const Options& o = env_.options;
    std::string out;
    absl::StrAppend(&out, "# compatd soak: ", Passed() ? "PASS" : "FAIL",
                    "\n\n");
    absl::StrAppendFormat(
        &out,
        "compatd `%s`, %s of load (%.0f s measured) with a %s warm-up, %d "
        "workers, seed %d.\n\n",
        o.compatd, absl::FormatDuration(o.duration), load_seconds_,
        absl::FormatDuration(o.warmup), o.workers, env_.seed);

    ReportCalls(&out);
    ReportLatency(&out);
    ReportHeavyLane(&out);
    ReportHostile(&out);
    ReportAudit(&out);
    ReportReloads(&out);
    ReportMemory(&out);
    ReportDescriptors(&out);
    ReportCollateral(&out);
    ReportVerdict(&out);
    return out;
  }

  // The calls by class and code, by class and RPC; WatchCatalog and raw TCP.
  void ReportCalls(std::string* out) const {
    Tally tally;
    auto merge = [&tally](const Tally& t) {
      for (const auto& [key, n] : t) tally[key] += n;
    };
    for (const auto& w : workers_) merge(w->tally());
    for (const auto& w : watchers_) merge(w->tally());
    for (const auto& w : http_workers_) merge(w->tally());
    for (const auto& w : heavy_workers_) merge(w->tally());
    merge(swapper_->tally());
    merge(http_abuser_->tally());
    merge(audit_sender_->tally());
    std::map<std::pair<int, int>, uint64_t> by_class_code;
    std::map<std::pair<int, std::string>, uint64_t> by_class_method;
    uint64_t unary = 0;
    for (const auto& [key, n] : tally) {
      const auto& [cls, method, code] = key;
      by_class_code[{cls, code}] += n;
      by_class_method[{cls, method}] += n;
      if (cls != static_cast<int>(Class::kWatch)) unary += n;
    }
    absl::StrAppendFormat(
        out, "## Calls\n\n%d unary calls in %.0f s: **%.0f calls/s**.\n\n",
        unary, load_seconds_,
        load_seconds_ > 0 ? static_cast<double>(unary) / load_seconds_ : 0.0);
    absl::StrAppend(out, "| class | code | calls |\n|---|---|---:|\n");
    for (const auto& [key, n] : by_class_code) {
      absl::StrAppend(out, "| ", kClassNames[static_cast<size_t>(key.first)],
                      " | ",
                      !IsHttpClass(key.first)
                          ? CodeName(static_cast<grpc::StatusCode>(key.second))
                      : key.second == 0 ? std::string("no answer")
                                        : absl::StrCat("HTTP ", key.second),
                      " | ", n, " |\n");
    }
    absl::StrAppend(out,
                    "\nBy RPC (HTTP: by route or request):\n\n| class | RPC | "
                    "calls |\n|---|---|---:|\n");
    for (const auto& [key, n] : by_class_method) {
      absl::StrAppend(out, "| ", kClassNames[static_cast<size_t>(key.first)],
                      " | ", key.second, " | ", n, " |\n");
    }
    uint64_t streams = 0;
    uint64_t messages = 0;
    for (const auto& w : watchers_) {
      streams += w->streams();
      messages += w->messages();
    }
    absl::StrAppendFormat(out,
                          "\nWatchCatalog: %d streams, %d messages read.\n\n",
                          streams, messages);
    absl::StrAppend(out,
                    "Raw TCP connections (no check but that the ports "
                    "keep accepting):\n\n| scenario | connections |\n"
                    "|---|---:|\n");
    for (const auto& [scenario, n] : transport_->counts()) {
      absl::StrAppend(out, "| ", scenario, " | ", n, " |\n");
    }
  }

  // Latency per class after the warm-up; per call for the light classes,
  // with the slowest calls.
  void ReportLatency(std::string* out) const {
    const double bound_ms =
        static_cast<double>(LightBoundMicros(env_)) / 1000.0;
    absl::StrAppendFormat(
        out,
        "\n## Latency after the warm-up (ms)\n\nEvery call of a light class "
        "(its p99 must be at most --max-light-p99=%.0f ms); the heavy lane's "
        "answered calls (refusals, lane full, counted apart; not judged).\n\n"
        "| class | lane | calls | refused (lane full) | p50 | p99 | p99.9 | "
        "max | over %.0f ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
        bound_ms, bound_ms);
    auto ms = [](int64_t micros) {
      return absl::StrFormat("%.1f", static_cast<double>(micros) / 1000.0);
    };
    for (int i = 0; i < kLatencyClassCount; ++i) {
      const auto cls = static_cast<LatencyClass>(i);
      const LatencyHistogram& h = latency_.of(cls);
      const LatencyClassInfo& info = kLatencyClasses[static_cast<size_t>(i)];
      if (h.count() == 0 && latency_.refused(cls) == 0) continue;
      const bool over =
          info.judged && h.Quantile(0.99) > LightBoundMicros(env_);
      absl::StrAppend(
          out, "| ", info.name, " | ", info.lane, " | ", h.count(), " | ",
          info.judged ? "" : absl::StrCat(latency_.refused(cls)), " | ",
          ms(h.Quantile(0.5)), " | ", over ? "**" : "", ms(h.Quantile(0.99)),
          over ? "**" : "", " | ", ms(h.Quantile(0.999)), " | ", ms(h.max()),
          " | ", info.judged ? absl::StrCat(latency_.over_bound(cls)) : "",
          " |\n");
    }
    ReportLatencyByCall(out);
  }

  // The light classes by call, and their slowest calls.
  void ReportLatencyByCall(std::string* out) const {
    auto ms = [](int64_t micros) {
      return absl::StrFormat("%.1f", static_cast<double>(micros) / 1000.0);
    };
    absl::StrAppend(out,
                    "\nBy call (RPC, route or case):\n\n| class | lane | call "
                    "| calls | p50 | p99 | max |\n|---|---|---|---:|---:|---:|"
                    "---:|\n");
    for (const auto& [key, h] : latency_.by_call()) {
      const LatencyClassInfo& info =
          kLatencyClasses[static_cast<size_t>(key.first)];
      absl::StrAppend(out, "| ", info.name, " | ", info.lane, " | ", key.second,
                      " | ", h.count(), " | ", ms(h.Quantile(0.5)), " | ",
                      ms(h.Quantile(0.99)), " | ", ms(h.max()), " |\n");
    }
    absl::StrAppend(out,
                    "\nSlowest light calls (seconds since the load "
                    "started):\n\n");
    for (int i = 0; i < kLatencyClassCount; ++i) {
      const LatencyClassInfo& info = kLatencyClasses[static_cast<size_t>(i)];
      const std::vector<SlowCall>& slowest =
          latency_.slowest(static_cast<LatencyClass>(i));
      if (!info.judged || slowest.empty()) continue;
      std::vector<std::string> calls;
      for (const SlowCall& call : slowest) {
        calls.push_back(absl::StrFormat("%.1f ms at %.0f s %s",
                                        call.micros / 1000.0, call.at_seconds,
                                        call.what));
      }
      absl::StrAppend(out, "- ", info.name, ": ", absl::StrJoin(calls, "; "),
                      "\n");
    }
  }

  // The heavy classes' calls, refusals, and how busy the heavy lane was.
  void ReportHeavyLane(std::string* out) const {
    absl::StrAppendFormat(
        out,
        "\n## Heavy lane (--heavy-workers=%d, --heavy-queue=%d, "
        "--max-heavy-work-time=%ds)\n\n",
        kHeavyWorkers, kHeavyQueue, kHeavyWorkTimeSeconds);
    for (LatencyClass cls :
         {LatencyClass::kHeavyGrpc, LatencyClass::kHeavyHttp,
          LatencyClass::kValidHeavy, LatencyClass::kHttpValidHeavy}) {
      const uint64_t answered = latency_.of(cls).count();
      const uint64_t refused = latency_.refused(cls);
      if (answered + refused == 0) continue;
      const LatencyClassInfo& info = kLatencyClasses[static_cast<size_t>(cls)];
      absl::StrAppendFormat(
          out,
          "- %s (%s lane): %d calls after the warm-up, %d answered, %d "
          "refused as lane full (%.1f%%)\n",
          info.name, info.lane, answered + refused, answered, refused,
          100.0 * static_cast<double>(refused) /
              static_cast<double>(answered + refused));
    }
    if (lane_samples_ > 0) {
      const double n = static_cast<double>(lane_samples_);
      absl::StrAppendFormat(
          out,
          "\nOf %d scrapes after the warm-up, the heavy lane was running a "
          "call in %.1f%% (compatd_lane_running{lane=\"heavy\"} >= 1) and "
          "its queue was full in %.1f%%; %.1f calls waiting on average.",
          lane_samples_, 100.0 * static_cast<double>(lane_busy_samples_) / n,
          100.0 * static_cast<double>(lane_full_samples_) / n,
          lane_queued_sum_ / n);
    }
    if (final_scrape_ok_) {
      absl::StrAppendFormat(
          out, " compatd_lane_rejected_total{lane=\"heavy\"}: %.0f.",
          SumOf(final_samples_, "compatd_lane_rejected_total",
                {{"lane", "heavy"}}));
    }
    absl::StrAppend(out, "\n");
  }

  // Hostile clients' outcomes and the longest-held connections.
  void ReportHostile(std::string* out) const {
    absl::StrAppend(out,
                    "\n## Hostile clients\n\n| abuse: outcome | count "
                    "|\n|---|---:|\n");
    for (const Outcomes* outcomes :
         {&http_abuser_->outcomes(), &slowloris_->outcomes(),
          &http2_abuser_->outcomes(), &idler_->outcomes(),
          &header_only_->outcomes()}) {
      for (const auto& [outcome, n] : *outcomes) {
        absl::StrAppend(out, "| ", outcome, " | ", n, " |\n");
      }
    }
    absl::StrAppendFormat(
        out,
        "\nLongest held: a slowloris connection %.1f s (header timeout %d "
        "s), a connection without a preface %.1f s (--handshake-timeout=%ds), "
        "an idle one %.1f s (--max-connection-idle=%ds). A message declaring "
        "1 GiB was refused after at most %d MiB (--grpc-memory-bytes=%d MiB). "
        "compatd_answer_backlog_bytes peaked at %.1f MiB "
        "(--max-answer-backlog-bytes=%d MiB).\n",
        slowloris_->max_held(), kHttpHeaderTimeoutSeconds,
        idler_->max_silent_held(), kHandshakeTimeoutSeconds,
        idler_->max_idle_held(), kMaxConnectionIdleSeconds,
        http2_abuser_->max_prefix_mib(), kGrpcMemoryMiB,
        max_backlog_ / (1 << 20), kMaxAnswerBacklogMiB);
    if (env_.options.header_only) {
      absl::StrAppendFormat(
          out,
          "\nheader-only: %d heads within their bound closed by compatd "
          "without an answer after %.1f to %.1f s (body timeout %d s; limit "
          "%d s); /healthz meanwhile within %.1f ms at most.\n",
          header_only_->closed(), header_only_->min_held(),
          header_only_->max_held(), kHttpBodyTimeoutSeconds,
          kHttpBodyTimeoutSeconds + 5, header_only_->max_healthz_ms());
    }
  }

  // The audit stream with hostile fields: its outcomes and what compatd kept.
  void ReportAudit(std::string* out) const {
    if (!env_.options.audit_hostile) return;
    absl::StrAppend(out, "\n## Audit stream (audit-hostile)\n\n",
                    audit_sender_->Summary(),
                    "\n| outcome | count |\n|---|---:|\n");
    for (const auto& [outcome, n] : audit_sender_->outcomes()) {
      absl::StrAppend(out, "| ", outcome, " | ", n, " |\n");
    }
  }

  // Catalog swaps and reloads; the server's own counts; scrapes.
  void ReportReloads(std::string* out) const {
    const Options& o = env_.options;
    absl::StrAppend(out, "\n## Catalog reloads\n\n");
    absl::StrAppendFormat(
        out,
        "Swaps every %s: %d good (rename to GetCatalog serving it: p50 %.1f "
        "ms, max %.1f ms), %d bad (rename to GetCatalog reporting the "
        "rejection: p50 %.1f ms, max %.1f ms).\n\n",
        absl::FormatDuration(o.swap_interval), swapper_->good(),
        Percentile(swapper_->load_ms(), 0.5),
        Percentile(swapper_->load_ms(), 1.0), swapper_->bad(),
        Percentile(swapper_->reject_ms(), 0.5),
        Percentile(swapper_->reject_ms(), 1.0));
    std::vector<std::string> kinds;
    for (const auto& [kind, n] : swapper_->bad_kinds()) {
      kinds.push_back(absl::StrCat(kind, " ", n));
    }
    absl::StrAppend(out, "Bad catalogs: ", absl::StrJoin(kinds, ", "), ".\n\n");
    if (final_scrape_ok_) {
      absl::StrAppendFormat(
          out,
          "compatd_catalog_reloads_total: loaded %d, unchanged %d, rejected "
          "%d; compatd_catalog_generation %d (from %d).\n\n",
          loaded_, unchanged_, rejected_, final_generation_,
          initial_generation_);
      std::map<std::string, double> server_codes;
      for (const testing::Sample& s :
           testing::Select(final_samples_, "grpc_server_handled_total")) {
        server_codes[s.labels.count("grpc_code") ? s.labels.at("grpc_code")
                                                 : "?"] += s.value;
      }
      std::vector<std::string> codes;
      for (const auto& [code, n] : server_codes) {
        if (n > 0) codes.push_back(absl::StrFormat("%s %.0f", code, n));
      }
      absl::StrAppendFormat(
          out,
          "Server side, grpc_server_handled_total by code: %s; "
          "grpc_server_started_total - handled once the load stopped: "
          "%.0f%s.\n\n",
          absl::StrJoin(codes, ", "), server_in_flight_, in_flight_detail_);
    }
    absl::StrAppendFormat(out, "/metrics scrapes: %d, failed %d.\n\n", scrapes_,
                          scrape_failures_);
  }

  // RSS: baseline, sustained and momentary maxima, a series.
  void ReportMemory(std::string* out) const {
    const Options& o = env_.options;
    absl::StrAppend(out, "## Memory (compatd VmRSS, sampled every second)\n\n");
    if (baseline_ > 0) {
      absl::StrAppendFormat(
          out,
          "Baseline (median of the last 5 warm-up samples) %.1f MiB; "
          "sustained max after warm-up (median of ~30 s) %.1f MiB around %.0f "
          "s (%+.1f%%, limit +%d%%); momentary max %.1f MiB at %.0f s "
          "(%+.1f%%); final %.1f MiB (%+.1f%%); %d samples after "
          "warm-up.\n\n",
          MiB(baseline_), MiB(sustained_max_), sustained_at_,
          100.0 * (static_cast<double>(sustained_max_) /
                       static_cast<double>(baseline_) -
                   1),
          o.max_rss_growth, MiB(max_after_warmup_), max_at_,
          100.0 * (static_cast<double>(max_after_warmup_) /
                       static_cast<double>(baseline_) -
                   1),
          MiB(final_rss_),
          100.0 * (static_cast<double>(final_rss_) /
                       static_cast<double>(baseline_) -
                   1),
          rss_after_warmup_);
    }
    if (!rss_.empty()) {
      const size_t step = std::max<size_t>(1, rss_.size() / 20);
      std::vector<std::string> series;
      for (size_t i = 0; i < rss_.size(); i += step) {
        series.push_back(
            absl::StrFormat("%.0fs %.1f", rss_[i].seconds, MiB(rss_[i].bytes)));
      }
      if ((rss_.size() - 1) % step != 0) {
        series.push_back(absl::StrFormat("%.0fs %.1f", rss_.back().seconds,
                                         MiB(rss_.back().bytes)));
      }
      absl::StrAppend(out, "Series (MiB): ", absl::StrJoin(series, ", "),
                      ".\n\n");
    }
  }

  // Open descriptors before, during and after the load.
  void ReportDescriptors(std::string* out) const {
    const Options& o = env_.options;
    if (!fds_.empty()) {
      int max_fds = 0;
      double max_fds_at = 0;
      for (const FdSample& f : fds_) {
        if (f.count > max_fds) {
          max_fds = f.count;
          max_fds_at = f.seconds;
        }
      }
      absl::StrAppendFormat(
          out,
          "## Descriptors (compatd's /proc/PID/fd, sampled every second)\n\n"
          "Before the load %d; max %d at %.0f s (bound %d: %d before the "
          "load + %d connections the soak holds at most + %d); %d once the "
          "load stopped.\n\n",
          fds_idle_, max_fds, max_fds_at, fd_limit_, fds_idle_,
          ConnectionsHeld(o.workers), kFdSlack, fds_after_load_);
    }
  }

  // The huge-prefix attack's collateral (Env::QuotaCollateral).
  void ReportCollateral(std::string* out) const {
    const Options& o = env_.options;
    if (o.huge_prefix) {
      absl::StrAppend(out,
                      "## gRPC memory-quota collateral (known limitation, "
                      "grpc/grpc#43012)\n\n");
      const auto collateral = env_.collateral.Entries();
      if (collateral.empty()) {
        absl::StrAppend(out,
                        "No call was reset by gRPC's memory-quota "
                        "reclamation during the huge-prefix attacks.\n\n");
      } else {
        absl::StrAppend(
            out,
            "Calls gRPC's memory-quota reclamation reset while a huge-prefix "
            "attacker held the quota (or within ",
            kQuotaCollateralGrace.count(),
            " s after): what a deployment without a body-bounding proxy in "
            "front of the gRPC port sees (docs/limits.md). "
            "Not counted as failures.\n\n");
        for (const auto& [kind, entry] : collateral) {
          absl::StrAppend(out, "- ", kind, ": ", entry.count, "\n");
          for (const std::string& example : entry.examples) {
            absl::StrAppend(out, "  - ", example, "\n");
          }
        }
        absl::StrAppend(out, "\n");
      }
    }
  }

  // Shutdown and verdict.
  void ReportVerdict(std::string* out) const {
    absl::StrAppend(out, "## Verdict\n\n");
    if (exit_code_.has_value()) {
      absl::StrAppendFormat(out, "SIGTERM: exit code %d after %.2f s.\n\n",
                            *exit_code_, stop_seconds_);
    } else {
      absl::StrAppend(out, "SIGTERM: no exit within 10 s.\n\n");
    }
    const auto entries = env_.failures.Entries();
    if (entries.empty()) {
      absl::StrAppend(out,
                      "**PASS**: no crash, no unexpected status code, every "
                      "checked answer right, every good catalog picked up and "
                      "no bad one served, every scrape answered, every "
                      "hostile connection cut within its limit, RSS and "
                      "descriptors within their bounds, every light class's "
                      "p99 within --max-light-p99, clean exit.\n");
    } else {
      absl::StrAppendFormat(out, "**FAIL**: %d failures.\n\n",
                            env_.failures.total());
      for (const auto& [kind, entry] : entries) {
        absl::StrAppend(out, "- ", kind, ": ", entry.count, "\n");
        for (const std::string& example : entry.examples) {
          absl::StrAppend(out, "  - ", example, "\n");
        }
      }
      if (!stderr_tail_.empty()) {
        absl::StrAppend(out, "\ncompatd's stderr (tail):\n\n```\n",
                        stderr_tail_, "\n```\n");
      }
    }
  }

  Env env_;
  testing::TempDir dir_;
  CompatdProcess compatd_;
  uint64_t initial_generation_ = 0;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Watcher>> watchers_;
  std::unique_ptr<TransportGarbage> transport_;
  std::unique_ptr<Swapper> swapper_;
  std::vector<std::unique_ptr<HttpWorker>> http_workers_;
  std::vector<std::unique_ptr<HeavyWorker>> heavy_workers_;
  std::unique_ptr<HttpAbuser> http_abuser_;
  std::unique_ptr<Slowloris> slowloris_;
  std::unique_ptr<Http2Abuser> http2_abuser_;
  std::unique_ptr<Idler> idler_;
  std::unique_ptr<AuditSender> audit_sender_;
  std::unique_ptr<HeaderOnly> header_only_;
  LatencyRecorder latency_;  // every thread's, after the load
  uint64_t lane_samples_ = 0;
  uint64_t lane_busy_samples_ = 0;
  uint64_t lane_full_samples_ = 0;
  double lane_queued_sum_ = 0;
  std::vector<FdSample> fds_;
  int fds_idle_ = 0;
  int fd_limit_ = 0;
  int fds_after_load_ = -1;
  double max_backlog_ = 0;
  Clock::time_point start_;
  double load_seconds_ = 0;
  bool died_ = false;
  std::vector<RssSample> rss_;
  int64_t baseline_ = 0;
  int64_t max_after_warmup_ = 0;
  double max_at_ = 0;
  int64_t sustained_max_ = 0;
  double sustained_at_ = 0;
  int64_t final_rss_ = 0;
  int rss_after_warmup_ = 0;
  uint64_t scrapes_ = 0;
  uint64_t scrape_failures_ = 0;
  bool final_scrape_ok_ = false;
  std::vector<testing::Sample> final_samples_;
  uint64_t loaded_ = 0;
  uint64_t unchanged_ = 0;
  uint64_t rejected_ = 0;
  uint64_t final_generation_ = 0;
  double server_in_flight_ = 0;
  std::string in_flight_detail_;
  std::optional<int> exit_code_;
  double stop_seconds_ = 0;
  std::string stderr_tail_;
};

// compatd-soak's flags, into `options`, `classes` and `help`.
void AddFlags(base::FlagTable* flags, Options* options, std::string* classes,
              bool* help) {
  flags->AddString("compatd", &options->compatd, "the compatd binary to soak");
  flags->AddString("catalog", &options->catalog,
                   "a valid catalog without a cluster section; the soak "
                   "swaps it, a variant of it and bad catalogs");
  flags->AddDuration("duration", &options->duration,
                     "how long the load runs (warm-up included)");
  flags->AddDuration("warmup", &options->warmup,
                     "RSS before this is the warm-up (0: 10% of --duration, at "
                     "least 5s); the baseline is the median of its last 5 "
                     "samples");
  flags->AddInt("workers", &options->workers, 1, 64,
                "threads making valid, wrong and garbage calls");
  flags->AddInt("seed", &options->seed, 0, 2000000000,
                "random seed (0: from the clock; printed either way)");
  flags->AddString("report", &options->report,
                   "also write the report (markdown) to this file");
  flags->AddInt("max-rss-growth", &options->max_rss_growth, 0, 10000,
                "FAIL when RSS after the warm-up, held for ~30 s, exceeds the "
                "baseline by more than this many percent");
  flags->AddDuration("swap-interval", &options->swap_interval,
                     "time between catalog swaps");
  flags->AddDuration("reload-timeout", &options->reload_timeout,
                     "how long a swapped catalog may take to be served or "
                     "rejected");
  flags->AddDuration("call-timeout", &options->call_timeout,
                     "deadline of each unary call of the light lane");
  flags->AddDuration("max-light-p99", &options->max_light_p99,
                     "FAIL when the p99 latency after the warm-up of a light "
                     "class (valid gRPC and /v1 calls of the light lane, "
                     "AdmissionReviews, the Gatekeeper provider, /healthz) "
                     "exceeds this");
  flags->AddString("classes", classes,
                   "the load that runs: all, or some of valid, wrong, garbage, "
                   "unknown, watch, transport, swap, http-valid, http-wrong, "
                   "http-garbage, oversized, slowloris, huge-prefix, "
                   "rapid-reset, slow-reader, idle, heavy-grpc, heavy-http, "
                   "audit-hostile, header-only (comma-separated)");
  flags->AddBool("help", help, "print this help and exit");
}

// --classes=a,b,...: only those classes run.
absl::Status SelectClasses(const std::string& classes, Options* options) {
  const std::vector<std::pair<absl::string_view, bool*>> names = {
      {"valid", &options->valid},
      {"wrong", &options->wrong},
      {"garbage", &options->garbage},
      {"unknown", &options->unknown},
      {"watch", &options->watch},
      {"transport", &options->transport},
      {"swap", &options->swap},
      {"http-valid", &options->http_valid},
      {"http-wrong", &options->http_wrong},
      {"http-garbage", &options->http_garbage},
      {"oversized", &options->oversized},
      {"slowloris", &options->slowloris},
      {"huge-prefix", &options->huge_prefix},
      {"rapid-reset", &options->rapid_reset},
      {"slow-reader", &options->slow_reader},
      {"idle", &options->idle},
      {"heavy-grpc", &options->heavy_grpc},
      {"heavy-http", &options->heavy_http},
      {"audit-hostile", &options->audit_hostile},
      {"header-only", &options->header_only}};
  std::vector<absl::string_view> accepted = {"all"};
  for (const auto& [name, flag] : names) {
    *flag = false;
    accepted.push_back(name);
  }
  for (absl::string_view name : absl::StrSplit(classes, ',')) {
    bool* flag = nullptr;
    for (const auto& [known, f] : names) {
      if (name == known) flag = f;
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--classes: unknown class \"", name,
                       "\"; accepted: ", absl::StrJoin(accepted, ", ")));
    }
    *flag = true;
  }
  return absl::OkStatus();
}

// The flags' values together: the binary and catalog readable, the warm-up,
// duration and timeouts in range.
absl::Status CheckOptions(Options* options) {
  if (options->compatd.empty()) {
    return absl::InvalidArgumentError("--compatd=PATH is required");
  }
  if (access(options->compatd.c_str(), X_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--compatd: \"", options->compatd, "\" is not an executable file"));
  }
  if (access(options->catalog.c_str(), R_OK) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--catalog: cannot read \"", options->catalog, "\""));
  }
  if (options->warmup == absl::ZeroDuration()) {
    options->warmup = std::max(absl::Seconds(5), options->duration / 10);
  }
  if (options->warmup < absl::Seconds(5)) {
    return absl::InvalidArgumentError(
        "--warmup must be at least 5s (the baseline is the "
        "median of its last 5 one-second samples)");
  }
  if (options->duration < options->warmup + absl::Seconds(5)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--duration must exceed --warmup (",
        absl::FormatDuration(options->warmup), ") by at least 5s"));
  }
  if (options->max_light_p99 <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--max-light-p99 must be positive");
  }
  if (options->swap_interval < absl::Milliseconds(10)) {
    return absl::InvalidArgumentError("--swap-interval must be at least 10ms");
  }
  if (options->reload_timeout < absl::Seconds(1) ||
      options->call_timeout < absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        "--reload-timeout and --call-timeout must be at least "
        "1s");
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  Options options;
  bool help = false;
  std::string classes = "all";
  base::FlagTable flags;
  AddFlags(&flags, &options, &classes, &help);
  std::vector<std::string> positional;
  if (absl::Status s = flags.Parse(argc, argv, 1, &positional); !s.ok()) {
    std::cerr << "compatd-soak: " << s.message() << "\n";
    return kExitUsage;
  }
  if (help) {
    std::cout << kUsage << flags.Usage();
    return 0;
  }
  absl::Status status = absl::OkStatus();
  if (!positional.empty()) {
    status = absl::InvalidArgumentError(
        absl::StrCat("unexpected argument \"", positional[0], "\""));
  } else if (classes != "all") {
    status = SelectClasses(classes, &options);
  }
  if (status.ok()) status = CheckOptions(&options);
  if (!status.ok()) {
    std::cerr << "compatd-soak: " << status.message() << " (see --help)\n";
    return kExitUsage;
  }
  g_compatd_binary = options.compatd;
  // Garbage requests make protobuf log every parse failure (invalid UTF-8);
  // the soak judges the status codes instead.
  google::protobuf::SetLogHandler(nullptr);
  Soak soak(std::move(options));
  return soak.Run();
}

}  // namespace

const std::string& CompatdBinary() { return g_compatd_binary; }

}  // namespace compatd::soak

int main(int argc, char** argv) { return compatd::soak::Main(argc, argv); }
