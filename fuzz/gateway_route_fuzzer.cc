// Fuzzes the front door's routing and request decoding: one HTTP request
// (method, path, query, headers, body) through gateway::Gateway::Handle, wired
// as compatd wires it (client tracker, metrics, handlers over the embedded
// Kubernetes 1.36 catalog), or through a gateway with no catalog yet.
//
// Input: "<METHOD> <target>[ unloaded]\n<name>: <value>\n...\n\n<body>", as
// an HTTP/1.1 request without the version ("POST /v1/GetFeature\n\n{...}");
// the headers are optional. Beyond "no crash, no sanitizer report, no hang":
//   - the status is one the front door documents (gateway/gateway.h): 200,
//     400, 404, 405, 429, or 503 only before a catalog is loaded; never
//     another 5xx;
//   - 405, and only 405, carries Allow, naming the path's methods;
//   - every body but /healthz's text is JSON (strict: UTF-8 checked), typed
//     application/json; every error body is a google.rpc.Status whose code
//     grpc-gateway maps to the status;
//   - an RPC answered 200 is a JSON object; before a catalog, every RPC is
//     503 and /healthz is 503;
//   - a /v1/<RPC> body the reflection reader accepts (gateway/json.h,
//     ParseJsonByReflection) is one protobuf's JSON parser accepts too, into
//     the same request message.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "api/handlers.h"
#include "api/rpcs.h"
#include "compatd/v1/compatd.pb.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/gateway_fuzz.h"
#include "gateway/gateway.h"
#include "gateway/json.h"
#include "google/protobuf/util/message_differencer.h"
#include "metrics/registry.h"
#include "runtime/client_tracker.h"
#include "runtime/service_metrics.h"
#include "simdjson.h"

namespace {

namespace api = compatd::api;
namespace fuzz = compatd::fuzz;
namespace gateway = compatd::gateway;
namespace http = compatd::http;
namespace runtime = compatd::runtime;

// compatd's wiring (service/server.cc), once per process.
struct Wiring {
  compatd::metrics::Registry registry;
  std::unique_ptr<runtime::ServiceMetrics> metrics;
  std::unique_ptr<runtime::ClientTracker> clients;
  std::unique_ptr<api::PolicyHandlers> handlers;
  std::unique_ptr<gateway::Gateway> loaded;
  std::unique_ptr<gateway::Gateway> unloaded;

  Wiring() {
    runtime::ServiceMetrics::Options options;
    options.version = "fuzz";
    options.revision = "fuzz";
    auto created = runtime::ServiceMetrics::Create(&registry, options);
    FUZZ_CHECK(created.ok(), "the service metrics do not register");
    metrics = *std::move(created);
    clients = std::make_unique<runtime::ClientTracker>(
        &fuzz::LoadedPipeline().store(), metrics.get(),
        runtime::ClientTracker::Options());
    handlers = std::make_unique<api::PolicyHandlers>(nullptr, clients.get());
    loaded = std::make_unique<gateway::Gateway>(handlers.get(),
                                                &fuzz::LoadedPipeline().store(),
                                                clients.get(), metrics.get());
    unloaded = std::make_unique<gateway::Gateway>(
        handlers.get(), &fuzz::UnloadedPipeline().store(), clients.get(),
        metrics.get());
  }
};

Wiring& TheWiring() {
  static Wiring* const wiring = new Wiring();
  return *wiring;
}

std::string AllowOf(const http::Response& response) {
  std::string allow;
  int count = 0;
  for (const auto& [name, value] : response.headers) {
    if (name == "Allow") {
      allow = value;
      ++count;
    }
  }
  FUZZ_CHECK(count <= 1, "Allow given twice");
  return allow;
}

// The methods a path takes, "" for a path the gateway does not serve.
std::string AllowedMethods(absl::string_view path) {
  if (path == "/healthz") return "GET, HEAD";
  // The admission webhook takes its options as path segments too
  // (/admission/v1/validate/enforce/emulation-1.35), and so does the
  // Gatekeeper provider (/gatekeeper/v1/binary-1.34): every path below them
  // is theirs (a bad segment is the webhook's 400 and the provider's 200 with
  // a systemError, not a 404).
  for (absl::string_view prefix :
       {"/admission/v1/validate", "/gatekeeper/v1"}) {
    absl::string_view below = path;
    if (absl::ConsumePrefix(&below, prefix) &&
        (below.empty() || below.front() == '/')) {
      return "POST";
    }
  }
  absl::string_view rpc = path;
  if (!absl::ConsumePrefix(&rpc, "/v1/")) return "";
  const std::optional<api::Rpc> found = api::FindRpc(rpc);
  if (!found.has_value() || api::IsServerStreaming(*found) ||
      absl::StrContains(rpc, "/") || absl::StrContains(rpc, ".")) {
    return "";
  }
  return "GET, POST";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  TheWiring();
  return 0;
}

// The front door reads most /v1 bodies with its own reflection walk and the
// rest with protobuf's parser; both must read a body alike.
void CheckReflectionReader(const http::Request& request) {
  absl::string_view rpc = request.path;
  if (!absl::ConsumePrefix(&rpc, "/v1/")) return;
  static const google::protobuf::ServiceDescriptor* const service =
      compatd::v1::GetFeatureRequest::descriptor()
          ->file()
          ->pool()
          ->FindServiceByName(std::string(api::kServiceName));
  const google::protobuf::MethodDescriptor* method =
      service->FindMethodByName(std::string(rpc));
  if (method == nullptr) return;
  const google::protobuf::Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(
          method->input_type());
  std::unique_ptr<google::protobuf::Message> ours(prototype->New());
  std::unique_ptr<google::protobuf::Message> theirs(prototype->New());
  if (!gateway::ParseJsonByReflection(request.body, ours.get())) return;
  FUZZ_CHECK(gateway::ParseJsonByProtobuf(request.body, theirs.get()).ok(),
             "a body the reflection reader accepts, protobuf refuses");
  FUZZ_CHECK(google::protobuf::util::MessageDifferencer::Equals(*ours, *theirs),
             "the reflection reader and protobuf read a body differently");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t line_end = input.find('\n');
  const absl::string_view first_line = input.substr(0, line_end);
  absl::string_view rest = line_end == absl::string_view::npos
                               ? absl::string_view()
                               : input.substr(line_end + 1);
  const std::vector<absl::string_view> words =
      absl::StrSplit(first_line, absl::MaxSplits(' ', 2));
  const absl::string_view method = words[0];
  const absl::string_view target = words.size() > 1 ? words[1] : "";
  const bool unloaded = words.size() > 2 && words[2] == "unloaded";

  // Headers up to the first empty line, then the body.
  std::vector<std::pair<std::string, std::string>> headers;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const absl::string_view line = rest.substr(0, end);
    rest = end == absl::string_view::npos ? absl::string_view()
                                          : rest.substr(end + 1);
    if (line.empty()) break;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    headers.emplace_back(
        absl::AsciiStrToLower(line.substr(0, colon)),
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  http::Request request = fuzz::MakeRequest(method, target, rest);
  request.headers = std::move(headers);

  const Wiring& wiring = TheWiring();
  http::Response response;
  (unloaded ? wiring.unloaded : wiring.loaded)->Handle(request, &response);

  const int status = response.status;
  FUZZ_CHECK(status == 200 || status == 400 || status == 404 || status == 405 ||
                 status == 429 || status == 503,
             "a status the front door does not document");
  FUZZ_CHECK(status != 503 || unloaded,
             "503 with a catalog loaded (only 'no catalog yet' is 503)");

  const std::string allowed = AllowedMethods(request.path);
  const std::string allow = AllowOf(response);
  FUZZ_CHECK((status == 405) == !allow.empty(),
             "405 without Allow, or Allow without 405");
  if (status == 405) {
    FUZZ_CHECK(allow == allowed, "Allow does not name the path's methods");
    for (absl::string_view m : absl::StrSplit(allowed, ", ")) {
      FUZZ_CHECK(m != request.method, "405 for a method the path takes");
    }
  }
  if (allowed.empty()) {
    FUZZ_CHECK(status == 404, "a path the gateway does not serve is not 404");
  }

  const bool healthz_text =
      request.path == "/healthz" && (status == 200 || status == 503);
  if (healthz_text) {
    FUZZ_CHECK(absl::StartsWith(response.content_type, "text/plain"),
               "/healthz text not typed text/plain");
    FUZZ_CHECK(response.body ==
                   (status == 200 ? "ok\n" : "no catalog is loaded yet\n"),
               "/healthz says something else");
    FUZZ_CHECK((status == 503) == unloaded,
               "/healthz not 503 exactly when no catalog is loaded");
    FUZZ_CHECK(response.omit_body == (request.method == "HEAD"),
               "a body left out of an answer that is not HEAD's");
    return 0;
  }
  FUZZ_CHECK(response.content_type == "application/json",
             "a JSON answer not typed application/json");
  FUZZ_CHECK(!response.omit_body,
             "a body left out of an answer that is not HEAD's");
  if (status != 200) {
    fuzz::CheckStatusBody(response);
  } else {
    simdjson::dom::parser parser;
    simdjson::dom::object object;
    FUZZ_CHECK(fuzz::MustParseJson(parser, response.body,
                                   "a 200 answer that is not JSON")
                       .get(object) == simdjson::SUCCESS,
               "a 200 answer that is not a JSON object");
  }
  CheckReflectionReader(request);
  if (unloaded && allowed == "GET, POST" &&
      (request.method == "GET" || request.method == "POST")) {
    FUZZ_CHECK(status == 503, "an RPC answered before a catalog is loaded");
  }
  return 0;
}
