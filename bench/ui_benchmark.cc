// Google Benchmark of the status page (ui/): what one page view costs the
// server, rendered through StatusPage::Handle from the real embedded
// Kubernetes 1.36 catalog, a cluster at emulation 1.34 with an upgrade target
// of 1.36, and 72 recorded client component/versions (the
// page is not on the admission hot path, but an operator's browser polls it
// during an upgrade). Each benchmark checks its answer once before timing.
//
//   ui_benchmark --benchmark_repetitions=3 --benchmark_report_aggregates_only

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/handlers.h"
#include "benchmark/benchmark.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/user_agent.h"
#include "runtime/catalog_pipeline.h"
#include "runtime/client_tracker.h"
#include "ui/status_page.h"

namespace {

struct Fixture {
  Fixture() {
    runtime_options.derive = compatd::api::DeriveAnswers;
    pipeline = std::make_unique<compatd::runtime::CatalogPipeline>(
        std::move(runtime_options));
    // A cluster at emulation 1.34 being upgraded to 1.36: every view also
    // renders what changes at the target.
    const std::string yaml = absl::StrCat(
        compatd::catalog::EmbeddedCatalogYaml(),
        "\ncluster:\n  emulationVersion: \"1.34\"\n  upgradeTarget: "
        "{emulationVersion: \"1.36\"}\n");
    auto catalog = compatd::catalog::ParseCatalog(yaml, "bench.yaml");
    if (!catalog.ok()) {
      std::cerr << catalog.status() << "\n";
      std::exit(1);
    }
    pipeline->Publish(*std::move(catalog), /*initial=*/true);
    clients = std::make_unique<compatd::runtime::ClientTracker>(
        &pipeline->store(), nullptr,
        compatd::runtime::ClientTracker::Options());
    const auto snapshot = pipeline->store().Current();
    for (const char* component :
         {"kubelet", "kube-proxy", "kubectl", "kube-scheduler",
          "kube-controller-manager", "cloud-controller-manager"}) {
      for (int minor = 27; minor <= 38; ++minor) {
        const std::string ua = absl::StrCat(component, "/v1.", minor,
                                            ".2 (linux/amd64) kubernetes/abc");
        clients->Record(*snapshot, compatd::engine::IdentifyClient("", "", ua));
      }
    }
    handlers =
        std::make_unique<compatd::api::PolicyHandlers>(nullptr, clients.get());
    page = std::make_unique<compatd::ui::StatusPage>(
        handlers.get(), compatd::ui::StatusPage::Options());
  }

  compatd::runtime::CatalogPipeline::Options runtime_options;
  std::unique_ptr<compatd::runtime::CatalogPipeline> pipeline;
  std::unique_ptr<compatd::runtime::ClientTracker> clients;
  std::unique_ptr<compatd::api::PolicyHandlers> handlers;
  std::unique_ptr<compatd::ui::StatusPage> page;
};

Fixture& TheFixture() {
  static Fixture* const fixture = new Fixture();
  return *fixture;
}

void BM_Page(benchmark::State& state, const char* target,
             const char* must_contain) {
  Fixture& f = TheFixture();
  compatd::http::Request request;
  request.method = "GET";
  request.target = target;
  const std::string t = target;
  request.path = t.substr(0, t.find('?'));
  if (t.find('?') != std::string::npos)
    request.query = t.substr(t.find('?') + 1);
  {
    compatd::http::Response response;
    const auto snapshot = f.pipeline->store().Current();
    f.page->Handle(request, snapshot.get(), &response);
    if (response.status != 200 ||
        response.body.find(must_contain) == std::string::npos) {
      state.SkipWithError(absl::StrCat(target, ": status ", response.status,
                                       ", no \"", must_contain, "\"")
                              .c_str());
      return;
    }
    state.counters["bytes"] = static_cast<double>(response.body.size());
  }
  for (auto _ : state) {
    compatd::http::Response response;
    // One snapshot per page view, as the gateway takes it.
    const auto snapshot = f.pipeline->store().Current();
    f.page->Handle(request, snapshot.get(), &response);
    benchmark::DoNotOptimize(response.body.data());
  }
}

BENCHMARK_CAPTURE(BM_Page, overview, "/ui/", "id=\"binary-version\"");
BENCHMARK_CAPTURE(BM_Page, clients, "/ui/clients",
                  "data-component=\"kubelet\"");
BENCHMARK_CAPTURE(BM_Page, features, "/ui/features", "id=\"gate-WatchList\"");
BENCHMARK_CAPTURE(BM_Page, features_filtered, "/ui/features?q=watch",
                  "id=\"gate-WatchList\"");
BENCHMARK_CAPTURE(BM_Page, feature, "/ui/features/WatchList",
                  "<h1 id=\"gate\">WatchList</h1>");
BENCHMARK_CAPTURE(BM_Page, apis, "/ui/apis", "data-group-version=\"apps/v1\"");
BENCHMARK_CAPTURE(BM_Page, plan, "/ui/plan", "id=\"steps\"");
BENCHMARK_CAPTURE(BM_Page, status_json, "/ui/status.json", "\"generation\":1");

}  // namespace

BENCHMARK_MAIN();
