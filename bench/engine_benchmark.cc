// Google Benchmark for the request hot paths, on the real embedded Kubernetes
// 1.36 catalog: what one question costs in the engine, through the service's
// handlers (a request minus the transport), the per-request bookkeeping
// (metrics, client capture), and parsing the catalog itself.
//
// Every benchmark reports allocs/op: heap allocations per iteration on the
// benchmark's own thread, counted by the replaced global operator new below.
// Each benchmark checks its answer once before timing it; a wrong or failed
// answer marks the run failed (exit 1), so the harness cannot rot silently.
//
//   engine_benchmark --benchmark_repetitions=5
//                    --benchmark_report_aggregates_only=true

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/handlers.h"
#include "benchmark/benchmark.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/api_availability.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/features.h"
#include "engine/query.h"
#include "engine/skew.h"
#include "engine/storage_version.h"
#include "engine/user_agent.h"
#include "metrics/histogram.h"
#include "metrics/registry.h"
#include "prometheus/histogram.h"
#include "runtime/catalog_pipeline.h"
#include "runtime/client_tracker.h"
#include "runtime/service_metrics.h"

// ---------------------------------------------------------------------------
// Allocation counting: every operator new of this process goes through here.
// Counted per thread, so a multi-threaded benchmark reports its own thread.
// (GCC cannot see that the replaced operator new and delete form a pair.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
thread_local uint64_t t_allocations = 0;

void* CountedAlloc(std::size_t size) {
  ++t_allocations;
  return std::malloc(size == 0 ? 1 : size);
}

void* CountedAlignedAlloc(std::size_t size, std::align_val_t align) {
  ++t_allocations;
  const std::size_t alignment = static_cast<std::size_t>(align);
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
}
}  // namespace

void* operator new(std::size_t size) {
  if (void* p = CountedAlloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = CountedAlloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return CountedAlloc(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return CountedAlloc(size);
}
void* operator new(std::size_t size, std::align_val_t align) {
  if (void* p = CountedAlignedAlloc(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) {
  if (void* p = CountedAlignedAlloc(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t align,
                   const std::nothrow_t&) noexcept {
  return CountedAlignedAlloc(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align,
                     const std::nothrow_t&) noexcept {
  return CountedAlignedAlloc(size, align);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

namespace compatd::bench {
namespace {

using engine::Catalog;
using engine::EffectiveVersions;
using engine::VersionQuery;

std::atomic<bool> g_failed{false};

// Marks the benchmark (and the whole run) failed.
void Fail(benchmark::State& state, const std::string& why) {
  g_failed.store(true);
  state.SkipWithError(why.c_str());
}

// Counts this thread's allocations from construction to Report().
class AllocCounter {
 public:
  AllocCounter() : start_(t_allocations) {}
  void Report(benchmark::State& state) const {
    state.counters["allocs/op"] =
        benchmark::Counter(static_cast<double>(t_allocations - start_),
                           benchmark::Counter::kAvgIterations);
  }

 private:
  uint64_t start_;
};

// The gates of GetFeature's --feature-gates variant: what a cluster that
// turned a beta gate off and an alpha gate on sends (none of them locked in
// 1.36).
constexpr absl::string_view kFeatureGates =
    "WatchList=false,InPlacePodVerticalScalingExclusiveCPUs=true,"
    "AllAlpha=false";
constexpr absl::string_view kUserAgent =
    "kubelet/v1.34.2 (linux/amd64) kubernetes/a1b2c3d grpc-c++/1.51.1 "
    "grpc-c/29.0.0 (linux; chttp2)";

// Every embedded catalog (one per release line, 1.31 to 1.37), parsed once and
// published through the pipeline as compatd serves them; `catalog` is the
// default line's.
struct World {
  std::shared_ptr<const Catalog> catalog;
  std::unique_ptr<runtime::CatalogPipeline> pipeline;
  std::unique_ptr<api::PolicyHandlers> handlers;
  EffectiveVersions versions;  // the cluster's (empty query)
  std::vector<std::string> feature_names;
};

World& TheWorld() {
  static World* world = [] {
    auto* w = new World;
    const auto embedded = catalog::EmbeddedCatalogs();
    runtime::CatalogPipeline::Options options;
    options.derive = api::DeriveAnswers;
    options.sources = embedded.size();
    w->pipeline =
        std::make_unique<runtime::CatalogPipeline>(std::move(options));
    for (size_t i = 0; i < embedded.size(); ++i) {
      absl::StatusOr<std::unique_ptr<Catalog>> parsed =
          catalog::ParseCatalog(embedded[i].bytes, embedded[i].name);
      if (!parsed.ok()) {
        std::fprintf(stderr, "engine_benchmark: %s: %s\n",
                     std::string(embedded[i].name).c_str(),
                     std::string(parsed.status().message()).c_str());
        std::exit(1);
      }
      if (!w->pipeline->PublishLine(i, *std::move(parsed), /*initial=*/true)
               .ok()) {
        std::fprintf(stderr, "engine_benchmark: publishing %s failed\n",
                     std::string(embedded[i].name).c_str());
        std::exit(1);
      }
    }
    w->catalog = w->pipeline->Current()->default_line().catalog;
    w->handlers = std::make_unique<api::PolicyHandlers>();
    absl::StatusOr<EffectiveVersions> versions =
        engine::ResolveEffectiveVersions(*w->catalog, VersionQuery{});
    if (!versions.ok()) {
      std::fprintf(stderr, "engine_benchmark: cluster versions: %s\n",
                   std::string(versions.status().message()).c_str());
      std::exit(1);
    }
    w->versions = *versions;
    for (const engine::Feature& f : w->catalog->features) {
      w->feature_names.push_back(f.name);
    }
    return w;
  }();
  return *world;
}

// ---------------------------------------------------------------------------
// Catalog

void BM_ParseCatalog(benchmark::State& state) {
  const absl::string_view yaml = catalog::EmbeddedCatalogYaml();
  if (!catalog::ParseCatalog(yaml, "embedded").ok()) {
    return Fail(state, "the embedded catalog does not parse");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    auto catalog = catalog::ParseCatalog(yaml, "embedded");
    benchmark::DoNotOptimize(catalog);
  }
  allocs.Report(state);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(yaml.size()));
}
BENCHMARK(BM_ParseCatalog)->Unit(benchmark::kMillisecond);

// Freeing a replaced catalog: whoever drops the last reference pays this. The
// reloader keeps replaced catalogs and frees them on its own thread, so that
// it is not the last request still holding the old snapshot.
void BM_FreeCatalog(benchmark::State& state) {
  const absl::string_view yaml = catalog::EmbeddedCatalogYaml();
  for (auto _ : state) {
    state.PauseTiming();
    auto catalog = catalog::ParseCatalog(yaml, "embedded");
    if (!catalog.ok())
      return Fail(state, "the embedded catalog does not parse");
    state.ResumeTiming();
    catalog->reset();
  }
}
BENCHMARK(BM_FreeCatalog)->Unit(benchmark::kMicrosecond);

void BM_CatalogStoreCurrent(benchmark::State& state) {
  World& w = TheWorld();
  AllocCounter allocs;
  for (auto _ : state) {
    std::shared_ptr<const runtime::ServingSnapshot> c = w.pipeline->Current();
    benchmark::DoNotOptimize(c);
  }
  allocs.Report(state);
}
BENCHMARK(BM_CatalogStoreCurrent);

void BM_ResolveEffectiveVersions(benchmark::State& state) {
  World& w = TheWorld();
  AllocCounter allocs;
  for (auto _ : state) {
    auto versions = engine::ResolveEffectiveVersions(*w.catalog, {});
    benchmark::DoNotOptimize(versions);
  }
  allocs.Report(state);
}
BENCHMARK(BM_ResolveEffectiveVersions);

// ---------------------------------------------------------------------------
// GetFeature

// engine::DecideFeature for one gate at the cluster's versions.
void BM_DecideFeature(benchmark::State& state) {
  World& w = TheWorld();
  VersionQuery query;
  auto check =
      engine::DecideFeature(*w.catalog, w.versions, query, "WatchList");
  if (!check.ok() || !check->enabled) {
    return Fail(state, "WatchList is not enabled at 1.36");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    auto d = engine::DecideFeature(*w.catalog, w.versions, query, "WatchList");
    benchmark::DoNotOptimize(d);
  }
  allocs.Report(state);
}
BENCHMARK(BM_DecideFeature);

// The same over every gate of the catalog in turn (cache and branch
// behaviour of a realistic spread of names).
void BM_DecideFeature_EveryGate(benchmark::State& state) {
  World& w = TheWorld();
  VersionQuery query;
  for (const std::string& name : w.feature_names) {
    if (!engine::DecideFeature(*w.catalog, w.versions, query, name).ok()) {
      return Fail(state, absl::StrCat("DecideFeature(", name, ") failed"));
    }
  }
  AllocCounter allocs;
  size_t i = 0;
  for (auto _ : state) {
    auto d = engine::DecideFeature(*w.catalog, w.versions, query,
                                   w.feature_names[i]);
    benchmark::DoNotOptimize(d);
    if (++i == w.feature_names.size()) i = 0;
  }
  allocs.Report(state);
}
BENCHMARK(BM_DecideFeature_EveryGate);

// With a --feature-gates string to parse, validate and apply.
void BM_DecideFeature_FeatureGates(benchmark::State& state) {
  World& w = TheWorld();
  VersionQuery query;
  query.feature_gates = kFeatureGates;
  auto check =
      engine::DecideFeature(*w.catalog, w.versions, query, "WatchList");
  if (!check.ok() || check->enabled || !check->overridden) {
    return Fail(state, "feature_gates did not turn WatchList off");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    auto d = engine::DecideFeature(*w.catalog, w.versions, query, "WatchList");
    benchmark::DoNotOptimize(d);
  }
  allocs.Report(state);
}
BENCHMARK(BM_DecideFeature_FeatureGates);

// What the engine does per GetFeature request: pick the release line from the
// request's binary version (binary_version=0: none given, the default line;
// 1: "1.36", as kubectl-style callers send it; 2: a patch, "1.35.2", whose
// line has patch-level data), resolve the versions, decide; the world serves
// every embedded line.
void BM_GetFeature_Engine(benchmark::State& state) {
  World& w = TheWorld();
  VersionQuery query;
  if (state.range(0) == 1) query.binary_version = "1.36";
  if (state.range(0) == 2) query.binary_version = "1.35.2";
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      w.pipeline->Current();
  AllocCounter allocs;
  for (auto _ : state) {
    auto line = snapshot->Line(query.binary_version);
    const Catalog& catalog = *(*line)->catalog;
    auto versions = engine::ResolveEffectiveVersions(catalog, query);
    auto d = engine::DecideFeature(catalog, *versions, query, "WatchList");
    benchmark::DoNotOptimize(d);
  }
  allocs.Report(state);
}
BENCHMARK(BM_GetFeature_Engine)
    ->ArgName("binary_version")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2);

// The release line's selection alone (ServingSnapshot::Line), what every call
// adds: none given, "1.36", "v1.36.2".
void BM_ResolveLine(benchmark::State& state) {
  World& w = TheWorld();
  const absl::string_view binary = state.range(0) == 0   ? ""
                                   : state.range(0) == 1 ? "1.36"
                                                         : "v1.36.2";
  const std::shared_ptr<const runtime::ServingSnapshot> snapshot =
      w.pipeline->Current();
  AllocCounter allocs;
  for (auto _ : state) {
    auto line = snapshot->Line(binary);
    benchmark::DoNotOptimize(line);
  }
  allocs.Report(state);
}
BENCHMARK(BM_ResolveLine)->ArgName("binary_version")->Arg(0)->Arg(1)->Arg(2);

// api::PolicyHandlers::GetFeature: a request minus the transport. Each
// iteration fills a fresh response message, as the server does for each call
// (its allocations are the reply's fields: protobuf without an arena puts
// every string on the heap), and frees it.
void BM_GetFeature_Handler(benchmark::State& state) {
  World& w = TheWorld();
  v1::GetFeatureRequest request;
  request.set_name("WatchList");
  if (state.range(0) == 1) {
    request.mutable_versions()->set_feature_gates(std::string(kFeatureGates));
  }
  v1::GetFeatureResponse response;
  if (absl::Status s =
          w.handlers->GetFeature(*w.pipeline->Current(), request, &response);
      !s.ok()) {
    return Fail(state, std::string(s.message()));
  }
  AllocCounter allocs;
  for (auto _ : state) {
    decltype(response) reply;  // fresh, as gRPC gives each call
    absl::Status s =
        w.handlers->GetFeature(*w.pipeline->Current(), request, &reply);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(reply);
  }
  allocs.Report(state);
}
BENCHMARK(BM_GetFeature_Handler)->ArgName("feature_gates")->Arg(0)->Arg(1);

// ---------------------------------------------------------------------------
// CheckSkew

void BM_CheckSkew(benchmark::State& state) {
  World& w = TheWorld();
  const absl::string_view version = state.range(0) == 0 ? "1.34" : "1.30";
  auto check = engine::CheckSkew(*w.catalog, w.versions, "kubelet", version);
  if (!check.ok() || (check->verdict == engine::SkewVerdict::kAllowed) !=
                         (state.range(0) == 0)) {
    return Fail(state, "unexpected kubelet skew verdict");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    auto d = engine::CheckSkew(*w.catalog, w.versions, "kubelet", version);
    benchmark::DoNotOptimize(d);
  }
  allocs.Report(state);
}
BENCHMARK(BM_CheckSkew)->ArgName("too_old")->Arg(0)->Arg(1);

void BM_CheckSkew_Handler(benchmark::State& state) {
  World& w = TheWorld();
  v1::CheckSkewRequest request;
  request.set_component("kubelet");
  request.set_client_version("1.34");
  v1::CheckSkewResponse response;
  if (absl::Status s =
          w.handlers->CheckSkew(*w.pipeline->Current(), request, &response);
      !s.ok() || !response.allowed()) {
    return Fail(state, "CheckSkew handler: kubelet 1.34 not allowed");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    decltype(response) reply;  // fresh, as gRPC gives each call
    absl::Status s =
        w.handlers->CheckSkew(*w.pipeline->Current(), request, &reply);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(reply);
  }
  allocs.Report(state);
}
BENCHMARK(BM_CheckSkew_Handler);

// ---------------------------------------------------------------------------
// GetStorageVersion, ListAPIVersions

void BM_DecideStorageVersion(benchmark::State& state) {
  World& w = TheWorld();
  auto check = engine::DecideStorageVersion(*w.catalog, w.versions, "apps",
                                            "deployments");
  if (!check.ok() || check->version != "v1") {
    return Fail(state, "apps/deployments is not stored as v1");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    auto d = engine::DecideStorageVersion(*w.catalog, w.versions, "apps",
                                          "deployments");
    benchmark::DoNotOptimize(d);
  }
  allocs.Report(state);
}
BENCHMARK(BM_DecideStorageVersion);

void BM_GetStorageVersion_Handler(benchmark::State& state) {
  World& w = TheWorld();
  v1::GetStorageVersionRequest request;
  request.set_group("apps");
  request.set_resource("deployments");
  v1::GetStorageVersionResponse response;
  if (!w.handlers->GetStorageVersion(*w.pipeline->Current(), request, &response)
           .ok()) {
    return Fail(state, "GetStorageVersion handler failed");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    decltype(response) reply;  // fresh, as gRPC gives each call
    absl::Status s =
        w.handlers->GetStorageVersion(*w.pipeline->Current(), request, &reply);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(reply);
  }
  allocs.Report(state);
}
BENCHMARK(BM_GetStorageVersion_Handler);

void BM_ListServedAPIs(benchmark::State& state) {
  World& w = TheWorld();
  VersionQuery query;
  auto check = engine::ListServedAPIs(*w.catalog, w.versions, query);
  if (!check.ok() || check->empty()) {
    return Fail(state, "ListServedAPIs served nothing");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    auto served = engine::ListServedAPIs(*w.catalog, w.versions, query);
    benchmark::DoNotOptimize(served);
  }
  allocs.Report(state);
}
BENCHMARK(BM_ListServedAPIs)->Unit(benchmark::kMicrosecond);

// versions:0 copies the answer the handler computed once for the catalog;
// versions:1 (an explicit emulation version) computes it per call.
void BM_ListAPIVersions_Handler(benchmark::State& state) {
  World& w = TheWorld();
  v1::ListAPIVersionsRequest request;
  if (state.range(0) != 0) {
    request.mutable_versions()->set_emulation_version("1.35");
  }
  v1::ListAPIVersionsResponse response;
  if (!w.handlers->ListAPIVersions(*w.pipeline->Current(), request, &response)
           .ok()) {
    return Fail(state, "ListAPIVersions handler failed");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    decltype(response) reply;  // fresh, as gRPC gives each call
    absl::Status s =
        w.handlers->ListAPIVersions(*w.pipeline->Current(), request, &reply);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(reply);
  }
  allocs.Report(state);
}
BENCHMARK(BM_ListAPIVersions_Handler)
    ->ArgName("versions")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond);

void BM_ListFeatures_Handler(benchmark::State& state) {
  World& w = TheWorld();
  v1::ListFeaturesRequest request;
  v1::ListFeaturesResponse response;
  if (!w.handlers->ListFeatures(*w.pipeline->Current(), request, &response)
           .ok() ||
      response.features_size() != static_cast<int>(w.feature_names.size())) {
    return Fail(state, "ListFeatures did not list every gate");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    decltype(response) reply;  // fresh, as gRPC gives each call
    absl::Status s =
        w.handlers->ListFeatures(*w.pipeline->Current(), request, &reply);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(reply);
  }
  allocs.Report(state);
}
BENCHMARK(BM_ListFeatures_Handler)->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------
// Client identification (every call)

void BM_ParseUserAgent(benchmark::State& state) {
  const engine::ClientIdentity check = engine::ParseUserAgent(kUserAgent);
  if (check.component != "kubelet" || check.minor != 34) {
    return Fail(state, "the kubelet User-Agent was not read");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    auto id = engine::ParseUserAgent(kUserAgent);
    benchmark::DoNotOptimize(id);
  }
  allocs.Report(state);
}
BENCHMARK(BM_ParseUserAgent);

void BM_IdentifyClient(benchmark::State& state) {
  const bool metadata = state.range(0) == 1;
  const absl::string_view component = metadata ? "kubelet" : "";
  const absl::string_view version = metadata ? "v1.34.2" : "";
  if (engine::IdentifyClient(component, version, kUserAgent).component !=
      "kubelet") {
    return Fail(state, "IdentifyClient did not find kubelet");
  }
  AllocCounter allocs;
  for (auto _ : state) {
    auto id = engine::IdentifyClient(component, version, kUserAgent);
    benchmark::DoNotOptimize(id);
  }
  allocs.Report(state);
}
BENCHMARK(BM_IdentifyClient)->ArgName("metadata")->Arg(0)->Arg(1);

// ---------------------------------------------------------------------------
// Per-request bookkeeping: metrics and client capture

struct Bookkeeping {
  metrics::Registry registry;
  std::unique_ptr<runtime::ServiceMetrics> metrics;
  std::unique_ptr<runtime::ClientTracker> tracker;
  const runtime::MethodMetrics* get_feature = nullptr;
};

Bookkeeping& TheBookkeeping() {
  static Bookkeeping* b = [] {
    auto* b = new Bookkeeping;
    runtime::ServiceMetrics::Options options;
    options.methods = {
        {"compatd.v1.CompatibilityPolicy", "GetFeature",
         runtime::RpcType::kUnary},
        {"compatd.v1.CompatibilityPolicy", "CheckSkew",
         runtime::RpcType::kUnary},
    };
    options.version = "bench";
    options.revision = "bench";
    auto created =
        runtime::ServiceMetrics::Create(&b->registry, std::move(options));
    if (!created.ok()) {
      std::fprintf(stderr, "engine_benchmark: metrics: %s\n",
                   std::string(created.status().message()).c_str());
      std::exit(1);
    }
    b->metrics = std::move(*created);
    b->get_feature =
        b->metrics->Method("compatd.v1.CompatibilityPolicy", "GetFeature");
    b->tracker = std::make_unique<runtime::ClientTracker>(
        &TheWorld().pipeline->store(), b->metrics.get(),
        runtime::ClientTracker::Options{});
    return b;
  }();
  return *b;
}

// grpc_server_started_total and grpc_server_handled_total + the handling
// histogram: what the server records for every call.
void BM_MethodMetrics_StartedHandled(benchmark::State& state) {
  const runtime::MethodMetrics* m = TheBookkeeping().get_feature;
  const absl::Duration latency = absl::Microseconds(42);
  AllocCounter allocs;
  for (auto _ : state) {
    m->Started();
    m->Handled(absl::StatusCode::kOk, latency);
  }
  allocs.Report(state);
}
BENCHMARK(BM_MethodMetrics_StartedHandled)->Threads(1)->Threads(2);

// The choice of docs/decisions/metrics.md, kept measurable: the latency
// histogram's Observe, compatd's lock-free metrics::Histogram against
// prometheus-cpp's prometheus::Histogram (a mutex per call), same buckets.
template <typename H>
void BM_HistogramObserve(benchmark::State& state) {
  static H* histogram = new H(runtime::HandlingSecondsBuckets());
  for (auto _ : state) histogram->Observe(42e-6);
}
BENCHMARK(BM_HistogramObserve<metrics::Histogram>)->Threads(1)->Threads(2);
BENCHMARK(BM_HistogramObserve<prometheus::Histogram>)->Threads(1)->Threads(2);

// ClientTracker::Record for a client already known (every call after its
// first).
void BM_ClientTracker_RecordKnown(benchmark::State& state) {
  Bookkeeping& b = TheBookkeeping();
  World& w = TheWorld();
  const engine::ClientIdentity id = engine::IdentifyClient("", "", kUserAgent);
  b.tracker->Record(*w.pipeline->Current(), id);
  AllocCounter allocs;
  for (auto _ : state) {
    b.tracker->Record(*w.pipeline->Current(), id);
  }
  allocs.Report(state);
}
BENCHMARK(BM_ClientTracker_RecordKnown)->Threads(1)->Threads(2);

// Everything the server's RpcObserver does around one handler call: started,
// the snapshot, who called, the tracker, handled.
void BM_RequestBookkeeping(benchmark::State& state) {
  Bookkeeping& b = TheBookkeeping();
  World& w = TheWorld();
  const absl::Duration latency = absl::Microseconds(42);
  AllocCounter allocs;
  for (auto _ : state) {
    b.get_feature->Started();
    std::shared_ptr<const runtime::ServingSnapshot> snapshot =
        w.pipeline->Current();
    b.tracker->Record(*snapshot, engine::IdentifyClient("", "", kUserAgent));
    b.get_feature->Handled(absl::StatusCode::kOk, latency);
  }
  allocs.Report(state);
}
BENCHMARK(BM_RequestBookkeeping);

}  // namespace
}  // namespace compatd::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (compatd::bench::g_failed.load()) {
    std::fprintf(stderr, "engine_benchmark: a benchmark failed its check\n");
    return 1;
  }
  return 0;
}
