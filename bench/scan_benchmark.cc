// Google Benchmark of `compatd scan`'s reading and checking against the bound
// any YAML scanner has: libyaml's own event parsing of the same bytes.
//
// The input is 10,000 objects (a large rendered chart: Deployments with full
// pod specs, Services, ConfigMaps, old Ingresses and CronJobs, custom
// resources), about 9 MB. Each benchmark reports bytes/s (MB/s) and
// items/s (objects/s), and checks its answer before timing.
//
//   scan_benchmark --benchmark_repetitions=5
//                  --benchmark_report_aggregates_only=true

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/handlers.h"
#include "api/scan.h"
#include "benchmark/benchmark.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "manifest/manifest_reader.h"
#include "runtime/catalog_pipeline.h"
#include "yaml.h"

namespace {

constexpr int kObjects = 10000;

std::string Deployment(int i) {
  return absl::StrCat(R"(# Source: shop/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-)",
                      i, R"(
  namespace: shop
  labels:
    app.kubernetes.io/name: web
    app.kubernetes.io/instance: release-)",
                      i, R"(
    helm.sh/chart: shop-1.2.3
  annotations:
    deployment.kubernetes.io/revision: "3"
spec:
  replicas: 3
  selector:
    matchLabels:
      app.kubernetes.io/name: web
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web
    spec:
      serviceAccountName: web
      securityContext: {runAsNonRoot: true, fsGroup: 2000}
      containers:
        - name: web
          image: "registry.example.com/shop/web:1.2.3"
          imagePullPolicy: IfNotPresent
          args: ["--listen=:8080", "--log-level=info"]
          ports:
            - {name: http, containerPort: 8080, protocol: TCP}
          env:
            - {name: SHOP_MODE, value: production}
            - name: SHOP_TOKEN
              valueFrom: {secretKeyRef: {name: web, key: token}}
          livenessProbe:
            httpGet: {path: /healthz, port: http}
            initialDelaySeconds: 10
          readinessProbe:
            httpGet: {path: /ready, port: http}
          resources:
            limits: {cpu: 500m, memory: 256Mi}
            requests: {cpu: 100m, memory: 128Mi}
          volumeMounts:
            - {name: config, mountPath: /etc/shop}
      volumes:
        - name: config
          configMap: {name: web}
)");
}

std::string Other(int i) {
  switch (i % 5) {
    case 0:
      return absl::StrCat(
          "apiVersion: v1\nkind: Service\nmetadata:\n  name: web-", i,
          "\n  namespace: shop\nspec:\n  type: ClusterIP\n  ports:\n  - port: "
          "80\n    targetPort: http\n  selector:\n    app.kubernetes.io/name: "
          "web\n");
    case 1:
      return absl::StrCat(
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-", i,
          "\n  namespace: shop\ndata:\n  config.yaml: |\n    listen: :8080\n"
          "    features: [a, b, c]\n    cache: {size: 128, ttl: 30s}\n");
    case 2:
      return absl::StrCat(
          "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: "
          "web-",
          i,
          "\n  namespace: shop\nspec:\n  rules:\n  - host: shop.example.com\n"
          "    http:\n      paths:\n      - path: /\n        backend:\n"
          "          serviceName: web\n          servicePort: 80\n");
    case 3:
      return absl::StrCat(
          "{\"apiVersion\": \"batch/v1beta1\", \"kind\": \"CronJob\", "
          "\"metadata\": {\"name\": \"report-",
          i,
          "\", \"namespace\": \"shop\"}, \"spec\": {\"schedule\": \"0 3 * * "
          "*\", \"jobTemplate\": {\"spec\": {\"template\": {\"spec\": "
          "{\"restartPolicy\": \"OnFailure\", \"containers\": [{\"name\": "
          "\"r\", \"image\": \"busybox\"}]}}}}}}\n");
    default:
      return absl::StrCat(
          "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\n"
          "metadata:\n  name: web-",
          i,
          "\n  namespace: shop\nspec:\n  selector: {matchLabels: {app: web}}\n"
          "  endpoints: [{port: metrics, interval: 30s}]\n");
  }
}

// Half Deployments, half the rest.
const std::string& Input() {
  static const std::string* const input = [] {
    auto* text = new std::string;
    for (int i = 0; i < kObjects; ++i) {
      absl::StrAppend(text, "---\n", i % 2 == 0 ? Deployment(i) : Other(i));
    }
    return text;
  }();
  return *input;
}

void Report(benchmark::State& state) {
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(Input().size()));
  state.SetItemsProcessed(state.iterations() * kObjects);
  state.SetLabel(absl::StrCat(Input().size(), " bytes"));
}

// Events counted, with libyaml doing nothing else: the bound.
int LibyamlEvents(const std::string& text) {
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(
      &parser, reinterpret_cast<const unsigned char*>(text.data()),
      text.size());
  int events = 0;
  yaml_event_t event;
  while (yaml_parser_parse(&parser, &event) != 0) {
    ++events;
    const bool end = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
    if (end) break;
  }
  yaml_parser_delete(&parser);
  return events;
}

void BM_LibyamlEvents(benchmark::State& state) {
  if (LibyamlEvents(Input()) < kObjects * 4) {
    state.SkipWithError("libyaml did not read the input");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(LibyamlEvents(Input()));
  Report(state);
}
BENCHMARK(BM_LibyamlEvents)->Unit(benchmark::kMillisecond);

void BM_ReadManifests(benchmark::State& state) {
  const compatd::manifest::ManifestContents check =
      compatd::manifest::ReadManifests(Input());
  if (check.objects.size() != kObjects || !check.problems.empty()) {
    state.SkipWithError("ReadManifests did not read every object");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(compatd::manifest::ReadManifests(Input()));
  }
  Report(state);
}
BENCHMARK(BM_ReadManifests)->Unit(benchmark::kMillisecond);

std::shared_ptr<const compatd::runtime::ServingSnapshot> Embedded() {
  auto catalog = compatd::catalog::ParseCatalog(
      compatd::catalog::EmbeddedCatalogYaml(), "embedded");
  if (!catalog.ok()) std::abort();
  compatd::runtime::CatalogPipeline::Options options;
  options.derive = compatd::api::DeriveAnswers;
  compatd::runtime::CatalogPipeline pipeline(std::move(options));
  pipeline.Publish(*std::move(catalog), /*initial=*/true);
  return pipeline.Current();
}

// The whole scan (read + check), at a target inside the emulation window
// (1.36) and outside it (1.29: the API history alone).
void BM_ScanManifests(benchmark::State& state, const char* target) {
  const auto snapshot = Embedded();
  const std::vector<compatd::api::ScanText> texts = {
      compatd::api::ScanText{"chart.yaml", Input()}};
  auto scan = [&] {
    compatd::v1::ScanObjectsResponse response;
    if (!compatd::api::ScanManifests(snapshot->default_line(),
                                     compatd::engine::VersionQuery{}, target,
                                     texts, &response)
             .ok()) {
      std::abort();
    }
    return response;
  };
  // Ingress and CronJob (2 in 10 objects) are removed by both targets.
  const compatd::v1::ScanObjectsResponse check = scan();
  if (check.objects() != kObjects || check.blocking() != kObjects / 5) {
    state.SkipWithError("ScanManifests gave a wrong answer");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(scan());
  Report(state);
}
BENCHMARK_CAPTURE(BM_ScanManifests, in_window_1_36, "1.36")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ScanManifests, history_1_29, "1.29")
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
