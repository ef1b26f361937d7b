// Google Benchmark of the HTTPS/JSON front door's own work (gateway/), without
// the network: what Gateway::Handle costs per request on the real embedded
// Kubernetes 1.36 catalog, wired as compatd wires it (client tracker and
// metrics), and its parts (reading a request body, writing an answer as
// JSON). make bench's wrk rows measure the same requests through sockets,
// where the VM's loopback costs dominate and vary between runs; these rows
// are the part compatd controls. Each benchmark checks its answer once before
// timing.
//
//   gateway_benchmark --benchmark_repetitions=3
//   --benchmark_report_aggregates_only

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/handlers.h"
#include "benchmark/benchmark.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "compatd/v1/compatd.pb.h"
#include "gateway/gateway.h"
#include "gateway/json.h"
#include "metrics/registry.h"
#include "runtime/api_usage.h"
#include "runtime/catalog_pipeline.h"
#include "runtime/client_tracker.h"
#include "runtime/service_metrics.h"
#include "tests/testing/audit_events.h"

namespace {

namespace gateway = compatd::gateway;
namespace http = compatd::http;
namespace runtime = compatd::runtime;
namespace v1 = compatd::v1;

void Die(const std::string& what) {
  std::cerr << "gateway_benchmark: " << what << "\n";
  std::exit(1);
}

struct Fixture {
  Fixture() {
    runtime::CatalogPipeline::Options options;
    options.derive = compatd::api::DeriveAnswers;
    pipeline = std::make_unique<runtime::CatalogPipeline>(std::move(options));
    auto catalog = compatd::catalog::ParseCatalog(
        compatd::catalog::EmbeddedCatalogYaml(),
        compatd::catalog::EmbeddedCatalogSource());
    if (!catalog.ok()) Die(catalog.status().ToString());
    pipeline->Publish(*std::move(catalog), /*initial=*/true);
    runtime::ServiceMetrics::Options metrics_options;
    metrics_options.version = "bench";
    metrics_options.revision = "bench";
    auto created = runtime::ServiceMetrics::Create(&registry, metrics_options);
    if (!created.ok()) Die(created.status().ToString());
    metrics = *std::move(created);
    clients = std::make_unique<runtime::ClientTracker>(
        &pipeline->store(), metrics.get(), runtime::ClientTracker::Options());
    handlers =
        std::make_unique<compatd::api::PolicyHandlers>(nullptr, clients.get());
    cached = std::make_unique<gateway::Gateway>(
        handlers.get(), &pipeline->store(), clients.get(), metrics.get());
    uncached = std::make_unique<gateway::Gateway>(
        handlers.get(), &pipeline->store(), clients.get(), metrics.get(),
        nullptr, /*gatekeeper_cache_bytes=*/0);
    usage = std::make_unique<runtime::ApiUsageTracker>(
        metrics.get(), runtime::ApiUsageTracker::Options());
    ingest = std::make_unique<gateway::AuditIngest>(
        clients.get(), usage.get(), metrics.get(),
        gateway::AuditIngest::Options());
    audit = std::make_unique<gateway::Gateway>(
        handlers.get(), &pipeline->store(), clients.get(), metrics.get(),
        nullptr, 0, gateway::HeavyLane(), ingest.get());
  }

  compatd::metrics::Registry registry;
  std::unique_ptr<runtime::CatalogPipeline> pipeline;
  std::unique_ptr<runtime::ServiceMetrics> metrics;
  std::unique_ptr<runtime::ClientTracker> clients;
  std::unique_ptr<compatd::api::PolicyHandlers> handlers;
  std::unique_ptr<gateway::Gateway> cached;
  std::unique_ptr<gateway::Gateway> uncached;
  std::unique_ptr<runtime::ApiUsageTracker> usage;
  std::unique_ptr<gateway::AuditIngest> ingest;
  std::unique_ptr<gateway::Gateway> audit;
};

Fixture& TheFixture() {
  static Fixture* fixture = new Fixture();
  return *fixture;
}

http::Request Post(std::string path, std::string body) {
  http::Request request;
  request.method = "POST";
  request.target = path;
  request.path = std::move(path);
  request.body = std::move(body);
  request.headers = {
      {"content-type", "application/json"},
      {"user-agent", "kube-apiserver-admission/v1.36.1 (linux/amd64)"}};
  request.peer = "127.0.0.1:40000";
  return request;
}

void Handle(benchmark::State& state, const gateway::Gateway& gateway,
            const http::Request& request, absl::string_view expect) {
  http::Response response;
  gateway.Handle(request, &response);
  if (response.status != 200 || !absl::StrContains(response.body, expect)) {
    Die(absl::StrCat(request.path, ": ", response.status, " ", response.body));
  }
  for (auto _ : state) {
    http::Response r;
    gateway.Handle(request, &r);
    benchmark::DoNotOptimize(r.body.data());
  }
}

void BM_Handle_GetFeature(benchmark::State& state) {
  Handle(state, *TheFixture().cached,
         Post("/v1/GetFeature", R"({"name":"WatchList"})"),
         R"("enabled":true)");
}
BENCHMARK(BM_Handle_GetFeature);

void BM_ParseJsonRequest_GetFeature(benchmark::State& state) {
  const std::string body =
      R"({"name":"WatchList","versions":{"emulationVersion":"1.34"}})";
  for (auto _ : state) {
    v1::GetFeatureRequest request;
    if (!gateway::ParseJsonRequest(body, &request).ok()) Die("parse");
    benchmark::DoNotOptimize(request.name().data());
  }
}
BENCHMARK(BM_ParseJsonRequest_GetFeature);

void BM_ToJson_GetFeatureResponse(benchmark::State& state) {
  v1::GetFeatureRequest request;
  request.set_name("WatchList");
  v1::GetFeatureResponse response;
  const auto snapshot = TheFixture().pipeline->store().Current();
  if (!TheFixture().handlers->GetFeature(*snapshot, request, &response).ok()) {
    Die("GetFeature");
  }
  if (gateway::ToJson(response) != gateway::ToJsonByProtobuf(response)) {
    Die("ToJson differs from protobuf's printer");
  }
  for (auto _ : state) {
    std::string json = gateway::ToJson(response);
    benchmark::DoNotOptimize(json.data());
  }
}
BENCHMARK(BM_ToJson_GetFeatureResponse);

// 100 distinct keys, 25 of each kind (the same as make bench's wrk row).
std::string ProviderRequest() {
  std::vector<std::string> keys;
  for (const char* gate : {"WatchList",
                           "APIResponseCompression",
                           "APIServerIdentity",
                           "APIServerTracing",
                           "ConsistentListFromCache",
                           "JobManagedBy",
                           "NodeSwap",
                           "SidecarContainers",
                           "StorageVersionAPI",
                           "InPlacePodVerticalScaling",
                           "DynamicResourceAllocation",
                           "KubeletTracing",
                           "PodLevelResources",
                           "UserNamespacesSupport",
                           "VolumeAttributesClass",
                           "MutatingAdmissionPolicy",
                           "SchedulerQueueingHints",
                           "RelaxedDNSSearchValidation",
                           "StorageVersionMigrator",
                           "CoordinatedLeaderElection",
                           "DRAAdminAccess",
                           "AuthorizeNodeWithSelectors",
                           "AnonymousAuthConfigurableEndpoints",
                           "CPUManagerPolicyAlphaOptions",
                           "RecoverVolumeExpansionFailure"}) {
    keys.push_back(absl::StrCat("\"feature:", gate, "\""));
  }
  for (const char* gvk : {"v1/Pod",
                          "v1/Service",
                          "v1/ConfigMap",
                          "v1/Secret",
                          "v1/Namespace",
                          "v1/Node",
                          "v1/PersistentVolume",
                          "v1/PersistentVolumeClaim",
                          "v1/ServiceAccount",
                          "apps/v1/Deployment",
                          "apps/v1/StatefulSet",
                          "apps/v1/DaemonSet",
                          "apps/v1/ReplicaSet",
                          "batch/v1/Job",
                          "batch/v1/CronJob",
                          "batch/v1beta1/CronJob",
                          "networking.k8s.io/v1/Ingress",
                          "networking.k8s.io/v1/NetworkPolicy",
                          "extensions/v1beta1/Ingress",
                          "policy/v1/PodDisruptionBudget",
                          "rbac.authorization.k8s.io/v1/Role",
                          "rbac.authorization.k8s.io/v1/ClusterRole",
                          "rbac.authorization.k8s.io/v1/RoleBinding",
                          "autoscaling/v2/HorizontalPodAutoscaler",
                          "storage.k8s.io/v1/StorageClass"}) {
    keys.push_back(absl::StrCat("\"api:", gvk, "\""));
  }
  for (const char* gr : {"pods",
                         "services",
                         "configmaps",
                         "secrets",
                         "namespaces",
                         "nodes",
                         "persistentvolumes",
                         "persistentvolumeclaims",
                         "serviceaccounts",
                         "events",
                         "apps/deployments",
                         "apps/statefulsets",
                         "apps/daemonsets",
                         "apps/replicasets",
                         "batch/jobs",
                         "batch/cronjobs",
                         "networking.k8s.io/ingresses",
                         "networking.k8s.io/networkpolicies",
                         "policy/poddisruptionbudgets",
                         "rbac.authorization.k8s.io/roles",
                         "rbac.authorization.k8s.io/clusterroles",
                         "autoscaling/horizontalpodautoscalers",
                         "storage.k8s.io/storageclasses",
                         "coordination.k8s.io/leases",
                         "discovery.k8s.io/endpointslices"}) {
    keys.push_back(absl::StrCat("\"storage:", gr, "\""));
  }
  for (int minor = 32; minor <= 36; ++minor) {
    for (int patch = 0; patch < 5; ++patch) {
      keys.push_back(
          absl::StrCat("\"skew:kubelet/1.", minor, ".", patch, "\""));
    }
  }
  return absl::StrCat(R"({"apiVersion":"externaldata.gatekeeper.sh/v1beta1",)",
                      R"("kind":"ProviderRequest","request":{"keys":[)",
                      absl::StrJoin(keys, ","), "]}}");
}

void BM_Handle_Gatekeeper100Keys(benchmark::State& state) {
  const bool cache = state.range(0) != 0;
  Handle(state, cache ? *TheFixture().cached : *TheFixture().uncached,
         Post("/gatekeeper/v1", ProviderRequest()), R"("systemError":"")");
}
BENCHMARK(BM_Handle_Gatekeeper100Keys)->ArgName("cache")->Arg(0)->Arg(1);

}  // namespace

// kube-apiserver's default audit batch (--audit-webhook-batch-max-size 400)
// of Metadata-level events from a mixed cluster: kubelets, kube-proxy, the
// controller manager, the scheduler, kubectl and two operators, one call in
// ten to an API the 1.36 catalog does not serve (policy/v1beta1,
// flowcontrol v1beta3), one in ten a watch's ResponseStarted (skipped).
// Target: the batch in at most 2 ms of compatd CPU (README, "Seeing the
// whole cluster").
std::string AuditBatch400() {
  using compatd::testing::AuditEventJson;
  using compatd::testing::AuditEventSpec;
  const char* const agents[] = {
      "kubelet/v1.35.2 (linux/amd64) kubernetes/9a1b2c3",
      "kube-proxy/v1.35.2 (linux/amd64) kubernetes/9a1b2c3",
      "kube-controller-manager/v1.36.0 (linux/amd64) kubernetes/5d3a1f0/"
      "system:serviceaccount:kube-system:replicaset-controller",
      "kube-scheduler/v1.36.0 (linux/amd64) kubernetes/5d3a1f0/scheduler",
      "kubectl/v1.36.0 (darwin/arm64) kubernetes/5d3a1f0",
      "cluster-autoscaler/v1.28.2 (linux/amd64) kubernetes/1a2b3c4",
      "cert-manager-cainjector/v1.17.2 (linux/amd64) kubernetes/6e3f1f8",
      "argocd-application-controller/v2.14.1 (linux/amd64) kubernetes/0f1e2d3"};
  std::vector<std::string> items;
  for (int i = 0; i < 400; ++i) {
    AuditEventSpec e;
    e.user_agent = agents[i % 8];
    e.username = i % 8 == 0 ? absl::StrCat("system:node:node-", i % 50)
                            : "system:serviceaccount:kube-system:x";
    e.verb = i % 3 == 0 ? "list" : "get";
    e.audit_id = absl::StrCat("0b7c4a4e-3f4b-4c53-9d5e-", 100000000000 + i);
    if (i % 10 == 3) {
      e.api_group = "policy";
      e.api_version = "v1beta1";
      e.resource = "poddisruptionbudgets";
      e.code = 404;
    } else if (i % 10 == 7) {
      e.api_group = "flowcontrol.apiserver.k8s.io";
      e.api_version = "v1beta3";
      e.resource = "flowschemas";
      e.code = 404;
    } else if (i % 10 == 5) {
      e.resource = "pods";
      e.stage = "ResponseStarted";
      e.verb = "watch";
    } else {
      e.resource = i % 2 == 0 ? "pods" : "configmaps";
      if (i % 4 == 1) e.subresource = "status";
    }
    items.push_back(AuditEventJson(e));
  }
  return compatd::testing::AuditEventListJson(items);
}

void BM_Handle_AuditBatch400(benchmark::State& state) {
  const http::Request request = Post("/audit/v1/events", AuditBatch400());
  http::Response check;
  TheFixture().audit->Handle(request, &check);
  if (check.status != 200 ||
      !absl::StrContains(check.body, R"("events":400,"recorded":360)")) {
    Die(absl::StrCat("audit batch: ", check.status, " ", check.body));
  }
  for (auto _ : state) {
    http::Response r;
    TheFixture().audit->Handle(request, &r);
    benchmark::DoNotOptimize(r.body.data());
  }
  state.SetItemsProcessed(state.iterations() * 400);
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(request.body.size()));
}
BENCHMARK(BM_Handle_AuditBatch400)->Unit(benchmark::kMicrosecond);

// `gateway_benchmark --write-audit-batch=FILE` writes AuditBatch400() to FILE
// and exits: bench/run_bench.py posts it to a running compatd (the row
// "GetFeature p99 while audit batches arrive").
int main(int argc, char** argv) {
  constexpr absl::string_view kWrite = "--write-audit-batch=";
  if (argc == 2 && absl::StartsWith(argv[1], kWrite)) {
    std::ofstream out(
        std::string(absl::string_view(argv[1]).substr(kWrite.size())));
    out << AuditBatch400();
    return out.good() ? 0 : 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
