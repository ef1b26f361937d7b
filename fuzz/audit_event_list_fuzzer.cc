// Fuzzes kube-apiserver's audit webhook reader (gateway/audit.h): an
// audit.k8s.io/v1 EventList (or Event) read with simdjson On-Demand by
// ReadAuditEvents, then fed to the client tracker and the API use tracker
// through AuditIngest, as POST /audit/v1/events does, on the embedded
// Kubernetes 1.36 catalog.
//
// The document is read again with simdjson's DOM parser (a full parse).
// Beyond "no crash, no sanitizer report, no hang":
//   - a document the DOM parser refuses is refused (INVALID_ARGUMENT, or
//     RESOURCE_EXHAUSTED when the bound on items comes first), and feeds
//     nothing;
//   - an accepted EventList has stats.events == its items' count, and the
//     events fed plus the malformed ones are all of them;
//   - at most kMaxEvents items are read (RESOURCE_EXHAUSTED past it);
//   - the trackers stay within their bounds (rows, clients).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "api/handlers.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "fuzz/fuzz_check.h"
#include "gateway/audit.h"
#include "runtime/api_usage.h"
#include "runtime/catalog_pipeline.h"
#include "runtime/client_tracker.h"
#include "simdjson.h"

namespace {

namespace gateway = compatd::gateway;
namespace runtime = compatd::runtime;
namespace dom = simdjson::dom;

constexpr size_t kMaxEvents = 64;
constexpr size_t kMaxRows = 16;
constexpr size_t kMaxClients = 16;

struct World {
  World() {
    runtime::CatalogPipeline::Options options;
    options.derive = compatd::api::DeriveAnswers;
    pipeline = std::make_unique<runtime::CatalogPipeline>(std::move(options));
    auto catalog = compatd::catalog::ParseCatalog(
        compatd::catalog::EmbeddedCatalogYaml(),
        compatd::catalog::EmbeddedCatalogSource());
    FUZZ_CHECK(catalog.ok(), "the embedded catalog loads");
    pipeline->Publish(*std::move(catalog), /*initial=*/true);
    runtime::ClientTracker::Options client_options;
    client_options.max_entries = kMaxClients;
    clients = std::make_unique<runtime::ClientTracker>(&pipeline->store(),
                                                       nullptr, client_options);
    runtime::ApiUsageTracker::Options usage_options;
    usage_options.max_rows = kMaxRows;
    usage = std::make_unique<runtime::ApiUsageTracker>(nullptr, usage_options);
    gateway::AuditIngest::Options ingest_options;
    ingest_options.max_batch_events = kMaxEvents;
    ingest = std::make_unique<gateway::AuditIngest>(clients.get(), usage.get(),
                                                    nullptr, ingest_options);
  }
  std::unique_ptr<runtime::CatalogPipeline> pipeline;
  std::unique_ptr<runtime::ClientTracker> clients;
  std::unique_ptr<runtime::ApiUsageTracker> usage;
  std::unique_ptr<gateway::AuditIngest> ingest;
};

// The number of items of a document the DOM parser reads as an EventList of
// audit.k8s.io/v1 (-1 when it is something else).
int64_t ItemsOf(dom::element root) {
  dom::object object;
  if (root.get(object) != simdjson::SUCCESS) return -1;
  std::string_view kind, api_version;
  int64_t items = -1;
  for (auto field : object) {
    if (field.key == "kind") {
      if (field.value.get(kind) != simdjson::SUCCESS) return -1;
    } else if (field.key == "apiVersion") {
      if (field.value.get(api_version) != simdjson::SUCCESS) return -1;
    } else if (field.key == "items") {
      dom::array array;
      if (field.value.get(array) != simdjson::SUCCESS) return -1;
      items = static_cast<int64_t>(array.size());
    }
  }
  if (kind != "EventList" || api_version != "audit.k8s.io/v1") return -1;
  return items;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* world = new World();
  const std::string body(reinterpret_cast<const char*>(data), size);
  size_t fed = 0;
  gateway::AuditReadStats stats;
  const absl::Status status = gateway::ReadAuditEvents(
      body, kMaxEvents,
      [&](const gateway::AuditEvent& event) {
        ++fed;
        FUZZ_CHECK(event.user_agent.size() <= body.size(),
                   "views point into the document");
      },
      &stats);
  FUZZ_CHECK(status.ok() ||
                 status.code() == absl::StatusCode::kInvalidArgument ||
                 status.code() == absl::StatusCode::kResourceExhausted,
             "errors are INVALID_ARGUMENT or RESOURCE_EXHAUSTED");
  FUZZ_CHECK(status.ok() || fed == 0, "a refused document feeds nothing");

  dom::parser parser;
  dom::element root;
  const simdjson::error_code parsed = parser.parse(body).get(root);
  // A number the DOM cannot hold (an integer past 64 bits) is still JSON: the
  // reader skips the event whose field it is (a malformed event, counted),
  // which is no reason to refuse the whole batch.
  if (parsed == simdjson::NUMBER_ERROR) return 0;
  if (parsed != simdjson::SUCCESS) {
    FUZZ_CHECK(!status.ok(), "what a full parse refuses is refused");
  } else if (status.ok()) {
    const int64_t items = ItemsOf(root);
    if (items >= 0) {
      FUZZ_CHECK(stats.events == static_cast<size_t>(items),
                 "every item of an EventList is read");
      FUZZ_CHECK(items <= static_cast<int64_t>(kMaxEvents),
                 "no more items than the bound are read");
    }
    FUZZ_CHECK(fed + stats.malformed == stats.events,
               "each item is fed or counted malformed");
  }

  // The same body through the handler, against the trackers' bounds.
  compatd::http::Request request;
  request.method = "POST";
  request.path = "/audit/v1/events";
  request.body = body;
  compatd::http::Response response;
  const auto snapshot = world->pipeline->store().Current();
  world->ingest->Serve(snapshot.get(), request, &response);
  FUZZ_CHECK(response.status == 200 || response.status == 400 ||
                 response.status == 413,
             "200, 400 or 413");
  FUZZ_CHECK((response.status == 200) == status.ok(),
             "the handler accepts what the reader accepts");
  FUZZ_CHECK(world->usage->size() <= kMaxRows, "rows stay bounded");
  FUZZ_CHECK(world->clients->size() < kMaxClients, "clients stay bounded");
  return 0;
}
