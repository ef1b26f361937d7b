// Fuzzes the request path of `compatd eval`, which is the server's too: the
// RPC name, the request JSON (protobuf's JSON parser into the compatd.v1
// request message), request validation (api/request_validation.h) and
// every handler of api/handlers.h, over the embedded Kubernetes 1.36
// catalog loaded once.
//
// Input: "<rpc>\n<request JSON>" ("GetFeature\n{\"name\":\"WatchList\"}").
// Beyond "no crash, no sanitizer report, no hang":
//   - the exit code is 0 (JSON on out, nothing on err), 1 (an RPC error) or 2
//     (usage: unknown RPC, JSON that is not the request message), and an
//     error starts "ERROR: ";
//   - no request makes a handler fail with INTERNAL or UNKNOWN: bad input is
//     the caller's error, never the server's.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "api/handlers.h"
#include "api/offline.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "engine/catalog.h"
#include "fuzz/fuzz_check.h"
#include "runtime/catalog_pipeline.h"

namespace {

namespace engine = compatd::engine;
namespace catalog = compatd::catalog;
namespace runtime = compatd::runtime;
namespace api = compatd::api;

const api::PolicyHandlers& Handlers() {
  static const api::PolicyHandlers* const handlers = new api::PolicyHandlers();
  return *handlers;
}

// The embedded catalog through the pipeline every process publishes with.
const runtime::ServingSnapshot& Snapshot() {
  static const runtime::ServingSnapshot* const snapshot = [] {
    absl::StatusOr<std::unique_ptr<engine::Catalog>> parsed =
        catalog::ParseCatalog(compatd::catalog::EmbeddedCatalogYaml(),
                              compatd::catalog::EmbeddedCatalogSource());
    FUZZ_CHECK(parsed.ok(), "the embedded catalog does not load");
    runtime::CatalogPipeline::Options options;
    options.derive = api::DeriveAnswers;
    runtime::CatalogPipeline pipeline(std::move(options));
    pipeline.Publish(*std::move(parsed), /*initial=*/true);
    return new runtime::ServingSnapshot(*pipeline.Current());
  }();
  return *snapshot;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Handlers();
  Snapshot();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const absl::string_view rpc = input.substr(0, newline);
  const std::string json(newline == absl::string_view::npos
                             ? absl::string_view()
                             : input.substr(newline + 1));
  std::ostringstream out;
  std::ostringstream err;
  const int code =
      api::EvalRequest(Handlers(), Snapshot(), rpc, json, out, err);
  const std::string error = err.str();
  switch (code) {
    case api::kExitOk:
      FUZZ_CHECK(error.empty() && !out.str().empty(),
                 "success without a response, or with an error");
      break;
    case api::kExitError:
    case api::kExitUsage:
      FUZZ_CHECK(absl::StartsWith(error, "ERROR: "), "an unworded error");
      FUZZ_CHECK(!absl::StartsWith(error, "ERROR: INTERNAL") &&
                     !absl::StartsWith(error, "ERROR: UNKNOWN"),
                 "a request made the server fail (INTERNAL/UNKNOWN)");
      break;
    default:
      FUZZ_CHECK(false, "an exit code other than 0, 1 or 2");
  }
  return 0;
}
