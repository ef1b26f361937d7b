// compatd-load: a gRPC load generator for compatd (and bench/null_server).
//
//   compatd-load --target=127.0.0.1:50051 --concurrency=16 --channels=4
//                --duration=5s --mix=GetFeature:8,CheckSkew:2
//   compatd-load --target=127.0.0.1:50051 --rate=10000 --duration=5s
//
// Closed loop (default): --concurrency calls in flight, spread over --channels
// separate HTTP/2 connections (distinct channel arguments and a local
// subchannel pool, so gRPC cannot share one connection); each completion
// starts the next call. Open loop (--rate): calls start on a fixed schedule
// whatever the server does, and latency is measured from each call's intended
// start time, so a stalled server shows up in the percentiles instead of
// slowing the generator down (no coordinated omission).
//
// Both are bounded by --duration and/or --requests (calls after --warmup).
// Only loopback targets are accepted. The report (text, or one JSON object
// with --json) has QPS and p50/p90/p99/p99.9/max latency in microseconds from
// a log-linear histogram (bench/load_stats.h), per RPC and overall, and every
// failed call by status code. Exit 0 when every call succeeded, 1 when some
// failed (or the target could not be reached), 2 for bad flags.
//
// --swap-catalog=PATH --swap-variants=A,B: meanwhile, replace PATH with A, B,
// A, ... every --swap-interval (write a temp file, then rename over PATH, as
// an editor or a ConfigMap update does) and watch compatd's WatchCatalog
// stream: the report adds how many catalogs were published and the time from
// each rename to the WatchCatalog message announcing it.

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/flags.h"
#include "bench/load_stats.h"
#include "compatd/v1/compatd.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace compatd::bench {
namespace {

constexpr int kExitFailedCalls = 1;
constexpr int kExitUsage = 2;

int64_t NowNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

void SleepUntil(int64_t nanos) {
  timespec ts;
  ts.tv_sec = nanos / 1000000000;
  ts.tv_nsec = nanos % 1000000000;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) ==
         EINTR) {
  }
}

double CpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) /
             1e6;
}

struct Options {
  std::string target;
  int concurrency = 1;
  int channels = 1;
  int rate = 0;  // open loop when > 0
  absl::Duration duration = absl::Seconds(5);
  int requests = 0;
  absl::Duration warmup = absl::ZeroDuration();
  absl::Duration timeout = absl::Seconds(5);
  std::string mix = "GetFeature";
  std::string feature = "WatchList";
  std::string skew_component = "kubelet";
  std::string skew_version = "1.34";
  std::string storage_group = "apps";
  std::string storage_resource = "deployments";
  std::string user_agent =
      "kube-apiserver/v1.36.0 (linux/amd64) kubernetes/0000000";
  std::string swap_catalog;
  std::string swap_variants;
  absl::Duration swap_interval = absl::Milliseconds(100);
  bool json = false;
};

// Per-RPC results.
struct RpcStats {
  LatencyHistogram latency;  // successful calls only
  std::atomic<uint64_t> ok{0};
  std::atomic<uint64_t> failed{0};
};

// The catalog swapper's and the WatchCatalog stream's observations.
struct ReloadStats {
  std::mutex mu;
  std::vector<int64_t> renames;                         // monotonic ns
  std::vector<std::pair<int64_t, uint64_t>> publishes;  // (ns, generation)
  int rename_failures = 0;
  std::string watch_error;
};

// gRPC hands our objects between its threads with synchronization that
// ThreadSanitizer cannot see (Debian's gRPC is not built with it): tell TSan
// about that order (release before handing an object to gRPC, acquire when
// gRPC gives it back), as service/reflection.cc does. Nothing in other builds;
// COMPATD_TSAN comes from CMake (COMPATD_SANITIZE=thread).
#ifdef COMPATD_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
void HandedBack(void* object) { __tsan_acquire(object); }
void HandedOver(void* object) { __tsan_release(object); }
#else
void HandedBack(void* /*object*/) {}
void HandedOver(void* /*object*/) {}
#endif

// Reads WatchCatalog messages until cancelled.
class CatalogWatcher final
    : public grpc::ClientReadReactor<v1::GetCatalogResponse> {
 public:
  CatalogWatcher(v1::CompatibilityPolicy::Stub* stub, ReloadStats* stats)
      : stats_(stats) {
    stub->async()->WatchCatalog(&context_, &request_, this);
    StartRead(&message_);
    HandedOver(this);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    HandedBack(this);
    if (!ok) return;  // the stream is over; OnDone follows
    {
      std::lock_guard<std::mutex> lock(stats_->mu);
      stats_->publishes.emplace_back(NowNanos(), message_.generation());
    }
    HandedOver(this);
    StartRead(&message_);
  }

  void OnDone(const grpc::Status& status) override {
    HandedBack(this);
    std::lock_guard<std::mutex> lock(mu_);
    if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) {
      std::lock_guard<std::mutex> stats_lock(stats_->mu);
      stats_->watch_error =
          absl::StrCat(status.error_code(), ": ", status.error_message());
    }
    done_ = true;
    cv_.notify_all();
  }

  // Cancels the stream and waits until gRPC is done with this object.
  void Stop() {
    context_.TryCancel();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }

 private:
  ReloadStats* stats_;
  grpc::ClientContext context_;
  v1::WatchCatalogRequest request_;
  v1::GetCatalogResponse message_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

class LoadRun final {
 public:
  LoadRun(Options options, std::vector<LoadRpc> schedule)
      : options_(std::move(options)), schedule_(std::move(schedule)) {
    get_feature_.set_name(options_.feature);
    check_skew_.set_component(options_.skew_component);
    check_skew_.set_client_version(options_.skew_version);
    get_storage_version_.set_group(options_.storage_group);
    get_storage_version_.set_resource(options_.storage_resource);
    for (auto& stats : stats_) stats = std::make_unique<RpcStats>();
  }

  // Opens the channels and waits until each is connected.
  absl::Status Connect() {
    const auto deadline =
        std::chrono::system_clock::now() + std::chrono::seconds(10);
    for (int i = 0; i < options_.channels; ++i) {
      grpc::ChannelArguments args;
      // A distinct argument per channel and a channel-local subchannel pool:
      // one TCP connection each.
      args.SetInt("compatd.load.channel", i);
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      args.SetString(GRPC_ARG_PRIMARY_USER_AGENT_STRING, options_.user_agent);
      std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
          options_.target, grpc::InsecureChannelCredentials(), args);
      if (!channel->WaitForConnected(deadline)) {
        return absl::UnavailableError(
            absl::StrCat("cannot connect to ", options_.target, " (channel ", i,
                         "): is a server listening there?"));
      }
      stubs_.push_back(v1::CompatibilityPolicy::NewStub(channel));
      channels_.push_back(std::move(channel));
    }
    return absl::OkStatus();
  }

  // Reads the --swap-variants files.
  absl::Status LoadVariants() {
    if (options_.swap_variants.empty()) return absl::OkStatus();
    for (absl::string_view path : absl::StrSplit(options_.swap_variants, ',')) {
      std::ifstream in{std::string(path), std::ios::binary};
      std::stringstream bytes;
      if (!in || !(bytes << in.rdbuf())) {
        return absl::InvalidArgumentError(
            absl::StrCat("--swap-variants: cannot read \"", path, "\""));
      }
      variants_.push_back(bytes.str());
    }
    return absl::OkStatus();
  }

  void Run() {
    cpu_start_ = CpuSeconds();
    start_ns_ = NowNanos();
    measure_start_ns_ = start_ns_ + absl::ToInt64Nanoseconds(options_.warmup);
    end_ns_ =
        options_.duration > absl::ZeroDuration()
            ? measure_start_ns_ + absl::ToInt64Nanoseconds(options_.duration)
            : INT64_MAX;
    std::unique_ptr<CatalogWatcher> watcher;
    std::thread swapper;
    if (!options_.swap_catalog.empty()) {
      watcher = std::make_unique<CatalogWatcher>(stubs_[0].get(), &reload_);
      swapper = std::thread([this] { SwapCatalogs(); });
    }
    if (options_.rate > 0) {
      RunOpenLoop();
    } else {
      for (int worker = 0; worker < options_.concurrency; ++worker) {
        in_flight_.fetch_add(1);
        Issue(static_cast<uint64_t>(worker), worker % options_.channels,
              NowNanos(), /*closed_loop=*/true);
      }
    }
    {
      std::unique_lock<std::mutex> lock(done_mu_);
      done_cv_.wait(lock, [this] { return in_flight_.load() == 0; });
    }
    stop_swapping_.store(true);
    if (swapper.joinable()) swapper.join();
    if (watcher != nullptr) {
      // Let the last rename's publish arrive.
      absl::SleepFor(absl::Milliseconds(300));
      watcher->Stop();
    }
    cpu_seconds_ = CpuSeconds() - cpu_start_;
    wall_seconds_ = static_cast<double>(NowNanos() - start_ns_) / 1e9;
  }

  uint64_t Failed() const {
    uint64_t failed = 0;
    for (const auto& s : stats_) failed += s->failed.load();
    return failed;
  }

  void Report(std::ostream& out) const;
  void ReportJson(std::ostream& out) const;

 private:
  template <typename Response>
  struct Call {
    grpc::ClientContext context;
    Response response;
  };

  // Whether a call intended at `intended_ns` may start: inside the time
  // bound, and inside the count bound (calls in the warm-up are free).
  bool Admit(int64_t intended_ns) {
    if (intended_ns >= end_ns_) return false;
    if (intended_ns < measure_start_ns_ || options_.requests <= 0) return true;
    return admitted_.fetch_add(1) < static_cast<uint64_t>(options_.requests);
  }

  void RunOpenLoop() {
    const double period_ns = 1e9 / options_.rate;
    // The generator itself holds one in-flight token until it stops issuing,
    // so the wait in Run() cannot end between two calls.
    in_flight_.fetch_add(1);
    for (uint64_t k = 0;; ++k) {
      const int64_t intended =
          start_ns_ + static_cast<int64_t>(static_cast<double>(k) * period_ns);
      if (!Admit(intended)) break;
      if (NowNanos() < intended) SleepUntil(intended);
      in_flight_.fetch_add(1);
      Issue(k, static_cast<int>(k % static_cast<uint64_t>(options_.channels)),
            intended, /*closed_loop=*/false);
    }
    Release();
  }

  void Release() {
    if (in_flight_.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(done_mu_);
      done_cv_.notify_all();
    }
  }

  // Starts call number `k` of the schedule on `channel`. The caller has taken
  // an in-flight token for it.
  void Issue(uint64_t k, int channel, int64_t intended_ns, bool closed_loop) {
    if (closed_loop && !Admit(intended_ns)) {
      Release();
      return;
    }
    const LoadRpc rpc = schedule_[k % schedule_.size()];
    auto* async = stubs_[static_cast<size_t>(channel)]->async();
    switch (rpc) {
      case LoadRpc::kGetFeature:
        return Start<v1::GetFeatureResponse>(
            rpc, k, channel, intended_ns, closed_loop,
            [&](auto* ctx, auto* resp, auto done) {
              async->GetFeature(ctx, &get_feature_, resp, std::move(done));
            });
      case LoadRpc::kCheckSkew:
        return Start<v1::CheckSkewResponse>(
            rpc, k, channel, intended_ns, closed_loop,
            [&](auto* ctx, auto* resp, auto done) {
              async->CheckSkew(ctx, &check_skew_, resp, std::move(done));
            });
      case LoadRpc::kGetStorageVersion:
        return Start<v1::GetStorageVersionResponse>(
            rpc, k, channel, intended_ns, closed_loop,
            [&](auto* ctx, auto* resp, auto done) {
              async->GetStorageVersion(ctx, &get_storage_version_, resp,
                                       std::move(done));
            });
      case LoadRpc::kListAPIVersions:
        return Start<v1::ListAPIVersionsResponse>(
            rpc, k, channel, intended_ns, closed_loop,
            [&](auto* ctx, auto* resp, auto done) {
              async->ListAPIVersions(ctx, &list_api_versions_, resp,
                                     std::move(done));
            });
      case LoadRpc::kResolveVersions:
        return Start<v1::ResolveVersionsResponse>(
            rpc, k, channel, intended_ns, closed_loop,
            [&](auto* ctx, auto* resp, auto done) {
              async->ResolveVersions(ctx, &resolve_versions_, resp,
                                     std::move(done));
            });
      case LoadRpc::kListFeatures:
        return Start<v1::ListFeaturesResponse>(
            rpc, k, channel, intended_ns, closed_loop,
            [&](auto* ctx, auto* resp, auto done) {
              async->ListFeatures(ctx, &list_features_, resp, std::move(done));
            });
      case LoadRpc::kGetCatalog:
        return Start<v1::GetCatalogResponse>(
            rpc, k, channel, intended_ns, closed_loop,
            [&](auto* ctx, auto* resp, auto done) {
              async->GetCatalog(ctx, &get_catalog_, resp, std::move(done));
            });
    }
  }

  template <typename Response, typename StartFn>
  void Start(LoadRpc rpc, uint64_t k, int channel, int64_t intended_ns,
             bool closed_loop, StartFn start) {
    auto* call = new Call<Response>();
    call->context.set_deadline(std::chrono::system_clock::now() +
                               absl::ToChronoNanoseconds(options_.timeout));
    HandedOver(call);
    start(&call->context, &call->response,
          [this, call, rpc, k, channel, intended_ns,
           closed_loop](grpc::Status status) {
            const int64_t now = NowNanos();
            HandedBack(call);
            delete call;
            Done(rpc, status, intended_ns, now);
            if (closed_loop) {
              // The same worker goes on with its next slot of the schedule.
              Issue(k + static_cast<uint64_t>(options_.concurrency), channel,
                    now, /*closed_loop=*/true);
            } else {
              Release();
            }
          });
  }

  void Done(LoadRpc rpc, const grpc::Status& status, int64_t intended_ns,
            int64_t now) {
    if (intended_ns < measure_start_ns_) return;
    RpcStats& stats = *stats_[static_cast<int>(rpc)];
    if (status.ok()) {
      stats.latency.Record(static_cast<uint64_t>(now - intended_ns));
      stats.ok.fetch_add(1, std::memory_order_relaxed);
    } else {
      stats.failed.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(errors_mu_);
      std::string& example = error_examples_[status.error_code()];
      if (example.empty()) example = status.error_message();
      ++errors_[status.error_code()];
    }
    int64_t seen = last_done_ns_.load(std::memory_order_relaxed);
    while (now > seen && !last_done_ns_.compare_exchange_weak(
                             seen, now, std::memory_order_relaxed)) {
    }
  }

  void SwapCatalogs() {
    const std::string tmp = options_.swap_catalog + ".compatd-load.tmp";
    const int64_t interval = absl::ToInt64Nanoseconds(options_.swap_interval);
    int64_t next = measure_start_ns_ + interval;
    for (size_t i = 0; !stop_swapping_.load() && next < end_ns_; ++i) {
      SleepUntil(next);
      next += interval;
      if (stop_swapping_.load()) break;
      const std::string& bytes = variants_[i % variants_.size()];
      bool ok = false;
      if (FILE* f = std::fopen(tmp.c_str(), "wb")) {
        ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
        ok = std::fclose(f) == 0 && ok;
      }
      ok = ok && std::rename(tmp.c_str(), options_.swap_catalog.c_str()) == 0;
      std::lock_guard<std::mutex> lock(reload_.mu);
      if (ok) {
        reload_.renames.push_back(NowNanos());
      } else {
        ++reload_.rename_failures;
      }
    }
  }

  double MeasuredSeconds() const {
    const int64_t last = last_done_ns_.load();
    return last > measure_start_ns_
               ? static_cast<double>(last - measure_start_ns_) / 1e9
               : 0.0;
  }

  // Rename-to-publish latencies in ms: each WatchCatalog message after the
  // first (the catalog in force when the stream opened) is matched with the
  // latest rename before it.
  std::vector<double> ReloadLatenciesMs() const {
    std::vector<double> latencies;
    for (size_t i = 1; i < reload_.publishes.size(); ++i) {
      const int64_t at = reload_.publishes[i].first;
      auto it =
          std::upper_bound(reload_.renames.begin(), reload_.renames.end(), at);
      if (it == reload_.renames.begin()) continue;
      latencies.push_back(static_cast<double>(at - *(it - 1)) / 1e6);
    }
    std::sort(latencies.begin(), latencies.end());
    return latencies;
  }

  static double Micros(uint64_t nanos) {
    return static_cast<double>(nanos) / 1000.0;
  }

  const Options options_;
  const std::vector<LoadRpc> schedule_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::vector<std::unique_ptr<v1::CompatibilityPolicy::Stub>> stubs_;
  v1::GetFeatureRequest get_feature_;
  v1::CheckSkewRequest check_skew_;
  v1::GetStorageVersionRequest get_storage_version_;
  v1::ListAPIVersionsRequest list_api_versions_;
  v1::ResolveVersionsRequest resolve_versions_;
  v1::ListFeaturesRequest list_features_;
  v1::GetCatalogRequest get_catalog_;

  int64_t start_ns_ = 0;
  int64_t measure_start_ns_ = 0;
  int64_t end_ns_ = 0;
  double cpu_start_ = 0;
  double cpu_seconds_ = 0;
  double wall_seconds_ = 0;
  std::atomic<uint64_t> admitted_{0};
  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> last_done_ns_{0};
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  std::array<std::unique_ptr<RpcStats>, kLoadRpcCount> stats_;
  std::mutex errors_mu_;
  std::map<grpc::StatusCode, uint64_t> errors_;
  std::map<grpc::StatusCode, std::string> error_examples_;
  std::vector<std::string> variants_;
  std::atomic<bool> stop_swapping_{false};
  ReloadStats reload_;

  friend struct Summary;
};

// Everything the reports print, computed once.
struct Summary {
  explicit Summary(const LoadRun& run) {
    for (int i = 0; i < kLoadRpcCount; ++i) {
      const RpcStats& s = *run.stats_[i];
      if (s.ok.load() + s.failed.load() == 0) continue;
      rpcs.push_back(static_cast<LoadRpc>(i));
      all.Merge(s.latency);
      ok += s.ok.load();
      failed += s.failed.load();
    }
    seconds = run.MeasuredSeconds();
    qps = seconds > 0 ? static_cast<double>(ok + failed) / seconds : 0;
    client_cpu =
        run.wall_seconds_ > 0 ? run.cpu_seconds_ / run.wall_seconds_ : 0;
  }
  std::vector<LoadRpc> rpcs;
  LatencyHistogram all;
  uint64_t ok = 0;
  uint64_t failed = 0;
  double seconds = 0;
  double qps = 0;
  double client_cpu = 0;
};

void LoadRun::Report(std::ostream& out) const {
  const Summary sum(*this);
  out << absl::StrFormat(
      "compatd-load %s: %s, %d channel(s), mix %s\n", options_.target,
      options_.rate > 0
          ? absl::StrFormat("open loop at %d req/s", options_.rate)
          : absl::StrFormat("closed loop, concurrency %d",
                            options_.concurrency),
      options_.channels, options_.mix);
  out << absl::StrFormat(
      "calls %d ok %d failed %d in %.3f s: %.0f req/s (client CPU %.0f%%)\n",
      sum.ok + sum.failed, sum.ok, sum.failed, sum.seconds, sum.qps,
      100 * sum.client_cpu);
  out << absl::StrFormat("%-18s %10s %9s %9s %9s %9s %9s %9s\n", "latency µs",
                         "calls", "p50", "p90", "p99", "p99.9", "max", "mean");
  auto row = [&](absl::string_view name, const LatencyHistogram& h,
                 uint64_t calls) {
    out << absl::StrFormat(
        "%-18s %10d %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", name, calls,
        Micros(h.ValueAtQuantile(0.5)), Micros(h.ValueAtQuantile(0.9)),
        Micros(h.ValueAtQuantile(0.99)), Micros(h.ValueAtQuantile(0.999)),
        Micros(h.max()), h.mean() / 1000.0);
  };
  for (LoadRpc rpc : sum.rpcs) {
    const RpcStats& s = *stats_[static_cast<int>(rpc)];
    row(LoadRpcName(rpc), s.latency, s.ok.load() + s.failed.load());
  }
  if (sum.rpcs.size() > 1) row("all", sum.all, sum.ok + sum.failed);
  for (const auto& [code, n] : errors_) {
    out << absl::StrFormat("failed: %d x code %d (%s)\n", n,
                           static_cast<int>(code), error_examples_.at(code));
  }
  if (!options_.swap_catalog.empty()) {
    const std::vector<double> ms = ReloadLatenciesMs();
    out << absl::StrFormat(
        "catalog swaps %d (failed %d), publishes seen %d, rename -> "
        "WatchCatalog ms: p50 %.1f max %.1f%s\n",
        reload_.renames.size(), reload_.rename_failures,
        reload_.publishes.empty() ? 0 : reload_.publishes.size() - 1,
        ms.empty() ? 0.0 : ms[ms.size() / 2], ms.empty() ? 0.0 : ms.back(),
        reload_.watch_error.empty()
            ? ""
            : absl::StrCat(" (watch error ", reload_.watch_error, ")"));
  }
}

void LoadRun::ReportJson(std::ostream& out) const {
  const Summary sum(*this);
  auto latency = [](const LatencyHistogram& h) {
    return absl::StrFormat(
        "{\"p50\": %.3f, \"p90\": %.3f, \"p99\": %.3f, \"p999\": %.3f, "
        "\"max\": %.3f, \"min\": %.3f, \"mean\": %.3f}",
        Micros(h.ValueAtQuantile(0.5)), Micros(h.ValueAtQuantile(0.9)),
        Micros(h.ValueAtQuantile(0.99)), Micros(h.ValueAtQuantile(0.999)),
        Micros(h.max()), Micros(h.min()), h.mean() / 1000.0);
  };
  std::vector<std::string> per_rpc;
  for (LoadRpc rpc : sum.rpcs) {
    const RpcStats& s = *stats_[static_cast<int>(rpc)];
    per_rpc.push_back(absl::StrFormat(
        "\"%s\": {\"ok\": %d, \"failed\": %d, \"latency_us\": %s}",
        LoadRpcName(rpc), s.ok.load(), s.failed.load(), latency(s.latency)));
  }
  std::vector<std::string> errors;
  for (const auto& [code, n] : errors_) {
    errors.push_back(absl::StrFormat("\"%d\": %d", static_cast<int>(code), n));
  }
  std::string reload = "null";
  if (!options_.swap_catalog.empty()) {
    const std::vector<double> ms = ReloadLatenciesMs();
    reload = absl::StrFormat(
        "{\"swaps\": %d, \"swap_failures\": %d, \"publishes\": %d, "
        "\"rename_to_publish_ms\": [%s], \"watch_error\": \"%s\"}",
        reload_.renames.size(), reload_.rename_failures,
        reload_.publishes.empty() ? 0 : reload_.publishes.size() - 1,
        absl::StrJoin(ms, ", ",
                      [](std::string* o, double v) {
                        absl::StrAppendFormat(o, "%.3f", v);
                      }),
        reload_.watch_error.empty() ? "" : "stream failed");
  }
  out << absl::StrFormat(
      "{\"target\": \"%s\", \"mode\": \"%s\", \"concurrency\": %d, "
      "\"channels\": %d, \"rate\": %d, \"mix\": \"%s\", \"seconds\": %.6f, "
      "\"calls\": %d, \"ok\": %d, \"failed\": %d, \"qps\": %.1f, "
      "\"client_cpu\": %.3f, \"latency_us\": %s, \"rpcs\": {%s}, "
      "\"errors_by_code\": {%s}, \"reload\": %s}\n",
      options_.target, options_.rate > 0 ? "open" : "closed",
      options_.concurrency, options_.channels, options_.rate, options_.mix,
      sum.seconds, sum.ok + sum.failed, sum.ok, sum.failed, sum.qps,
      sum.client_cpu, latency(sum.all), absl::StrJoin(per_rpc, ", "),
      absl::StrJoin(errors, ", "), reload);
}

constexpr char kUsage[] =
    "compatd-load: closed- or open-loop gRPC load against compatd or "
    "bench/null_server on this machine.\n\n"
    "Usage:\n"
    "  compatd-load --target=127.0.0.1:PORT [--concurrency=N] [--channels=N]\n"
    "               [--rate=REQ_PER_S] [--duration=5s] [--requests=N]\n"
    "               [--mix=GetFeature:8,CheckSkew:2] [--json]\n\n"
    "Flags:\n";

int Main(int argc, char** argv) {
  Options options;
  bool help = false;
  base::FlagTable flags;
  flags.AddString("target", &options.target,
                  "server address; loopback only (127.x.y.z:PORT, "
                  "localhost:PORT, [::1]:PORT)");
  flags.AddInt("concurrency", &options.concurrency, 1, 100000,
               "closed loop: calls in flight");
  flags.AddInt("channels", &options.channels, 1, 1024,
               "separate connections the calls are spread over");
  flags.AddInt("rate", &options.rate, 0, 10000000,
               "open loop at this many calls per second (0: closed loop)");
  flags.AddDuration("duration", &options.duration,
                    "how long to measure after the warm-up (0: until "
                    "--requests calls)");
  flags.AddInt("requests", &options.requests, 0, 2000000000,
               "stop after this many measured calls (0: no count bound)");
  flags.AddDuration("warmup", &options.warmup,
                    "calls during this first period are not measured");
  flags.AddDuration("timeout", &options.timeout, "deadline of each call");
  flags.AddString("mix", &options.mix,
                  "RPCs in proportion, e.g. GetFeature:8,CheckSkew:2 (also "
                  "GetStorageVersion, ListAPIVersions, ResolveVersions, "
                  "ListFeatures, GetCatalog)");
  flags.AddString("feature", &options.feature, "GetFeature's gate name");
  flags.AddString("skew-component", &options.skew_component,
                  "CheckSkew's component");
  flags.AddString("skew-version", &options.skew_version,
                  "CheckSkew's client version");
  flags.AddString("storage-group", &options.storage_group,
                  "GetStorageVersion's group");
  flags.AddString("storage-resource", &options.storage_resource,
                  "GetStorageVersion's resource");
  flags.AddString("user-agent", &options.user_agent,
                  "the calls' User-Agent (gRPC appends its own tokens)");
  flags.AddString("swap-catalog", &options.swap_catalog,
                  "catalog file the server watches: replace it every "
                  "--swap-interval with the --swap-variants in turn");
  flags.AddString("swap-variants", &options.swap_variants,
                  "comma-separated catalog files to swap in");
  flags.AddDuration("swap-interval", &options.swap_interval,
                    "time between catalog swaps");
  flags.AddBool("json", &options.json, "print one JSON object");
  flags.AddBool("help", &help, "print this help and exit");

  std::vector<std::string> positional;
  if (absl::Status s = flags.Parse(argc, argv, 1, &positional); !s.ok()) {
    std::cerr << "compatd-load: " << s.message() << "\n";
    return kExitUsage;
  }
  if (help) {
    std::cout << kUsage << flags.Usage();
    return 0;
  }
  auto usage_error = [](absl::string_view message) {
    std::cerr << "compatd-load: " << message << "\n";
    return kExitUsage;
  };
  if (!positional.empty()) {
    return usage_error(absl::StrCat("unexpected argument \"", positional[0],
                                    "\" (see --help)"));
  }
  if (options.target.empty()) {
    return usage_error("--target is required, e.g. --target=127.0.0.1:50051");
  }
  if (absl::Status s = CheckLoopbackTarget(options.target); !s.ok()) {
    return usage_error(s.message());
  }
  if (options.duration == absl::ZeroDuration() && options.requests == 0) {
    return usage_error(
        "give --duration or --requests (or both): the run must be bounded");
  }
  if (options.swap_catalog.empty() != options.swap_variants.empty()) {
    return usage_error("--swap-catalog and --swap-variants go together");
  }
  if (!options.swap_catalog.empty() &&
      options.swap_interval < absl::Milliseconds(1)) {
    return usage_error("--swap-interval must be at least 1ms");
  }
  absl::StatusOr<std::vector<MixEntry>> mix = ParseMix(options.mix);
  if (!mix.ok()) return usage_error(mix.status().message());

  LoadRun run(options, MixSchedule(*mix));
  if (absl::Status s = run.LoadVariants(); !s.ok()) {
    return usage_error(s.message());
  }
  if (absl::Status s = run.Connect(); !s.ok()) {
    std::cerr << "compatd-load: " << s.message() << "\n";
    return kExitFailedCalls;
  }
  run.Run();
  if (options.json) {
    run.ReportJson(std::cout);
  } else {
    run.Report(std::cout);
  }
  return run.Failed() == 0 ? 0 : kExitFailedCalls;
}

}  // namespace
}  // namespace compatd::bench

int main(int argc, char** argv) { return compatd::bench::Main(argc, argv); }
