#pragma once

// What the front door's fuzz targets (gateway_route, gateway_query,
// admission_review, provider_request) share: the embedded Kubernetes 1.36
// catalog published through the pipeline every process uses (once per
// process), a pipeline that has published nothing (the 503 paths), and the
// checks every answer of the front door must pass.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "api/handlers.h"
#include "catalog/catalog_loader.h"
#include "catalog/embedded_catalog.h"
#include "fuzz/fuzz_check.h"
#include "gateway/gateway.h"
#include "gateway/json.h"
#include "http/server.h"
#include "runtime/catalog_pipeline.h"
#include "simdjson.h"

namespace compatd::fuzz {

// The embedded catalog, published once.
inline runtime::CatalogPipeline& LoadedPipeline() {
  static runtime::CatalogPipeline* const pipeline = [] {
    runtime::CatalogPipeline::Options options;
    options.derive = api::DeriveAnswers;
    auto* p = new runtime::CatalogPipeline(std::move(options));
    absl::StatusOr<std::unique_ptr<engine::Catalog>> parsed =
        catalog::ParseCatalog(catalog::EmbeddedCatalogYaml(),
                              catalog::EmbeddedCatalogSource());
    FUZZ_CHECK(parsed.ok(), "the embedded catalog does not load");
    p->Publish(*std::move(parsed), /*initial=*/true);
    return p;
  }();
  return *pipeline;
}

// A pipeline before its first catalog.
inline runtime::CatalogPipeline& UnloadedPipeline() {
  static runtime::CatalogPipeline* const pipeline =
      new runtime::CatalogPipeline(runtime::CatalogPipeline::Options());
  return *pipeline;
}

// The front door over LoadedPipeline() and UnloadedPipeline(), with the
// handlers compatd serves (no client tracking, no metrics).
inline const api::PolicyHandlers& Handlers() {
  static const api::PolicyHandlers* const handlers = new api::PolicyHandlers();
  return *handlers;
}

inline const gateway::Gateway& LoadedGateway() {
  static const gateway::Gateway* const g = new gateway::Gateway(
      &Handlers(), &LoadedPipeline().store(), nullptr, nullptr);
  return *g;
}

inline const gateway::Gateway& UnloadedGateway() {
  static const gateway::Gateway* const g = new gateway::Gateway(
      &Handlers(), &UnloadedPipeline().store(), nullptr, nullptr);
  return *g;
}

// The string at `key` of a JSON object, or "" (not an object, no such key,
// not a string).
inline std::string StringAt(simdjson::dom::element element,
                            std::string_view key) {
  std::string_view text;
  if (element.is_object() && element[key].get(text) == simdjson::SUCCESS) {
    return std::string(text);
  }
  return "";
}

// `text` as a JSON document, strictly (RFC 8259, UTF-8 checked): what a
// client of the front door (Go's encoding/json, Python's json) must be able
// to read. Aborts when it is not.
inline simdjson::dom::element MustParseJson(simdjson::dom::parser& parser,
                                            const std::string& text,
                                            const char* what) {
  simdjson::dom::element root;
  const auto error = parser.parse(text).get(root);
  if (error != simdjson::SUCCESS) {
    std::fprintf(stderr, "%s: %s in: %s\n", what,
                 simdjson::error_message(error), text.c_str());
  }
  FUZZ_CHECK(error == simdjson::SUCCESS, what);
  return root;
}

// A google.rpc.Status body ({"code","message","details":[]}) whose code
// grpc-gateway maps to `http_status` (405 carries INVALID_ARGUMENT).
inline void CheckStatusBody(const http::Response& response) {
  simdjson::dom::parser parser;
  const simdjson::dom::element root =
      MustParseJson(parser, response.body, "an error body that is not JSON");
  int64_t code = 0;
  std::string_view message;
  simdjson::dom::array details;
  FUZZ_CHECK(root["code"].get(code) == simdjson::SUCCESS,
             "an error body without an integer code");
  FUZZ_CHECK(
      root["message"].get(message) == simdjson::SUCCESS && !message.empty(),
      "an error body without a message");
  FUZZ_CHECK(
      root["details"].get(details) == simdjson::SUCCESS && details.size() == 0,
      "an error body without an empty details array");
  FUZZ_CHECK(code > 0 && code <= 16, "an error body with a code out of range");
  if (response.status == 405) {
    FUZZ_CHECK(code == 3, "405 without INVALID_ARGUMENT in its body");
    return;
  }
  const int expected =
      gateway::HttpStatusOf(static_cast<absl::StatusCode>(code));
  if (expected != response.status) {
    std::fprintf(stderr, "status %d, code %lld\n", response.status,
                 static_cast<long long>(code));
  }
  FUZZ_CHECK(expected == response.status,
             "an HTTP status that is not grpc-gateway's for the body's code");
}

// The request the front door hands a handler, as http::Server builds it.
inline http::Request MakeRequest(absl::string_view method,
                                 absl::string_view target,
                                 absl::string_view body) {
  http::Request request;
  request.method = std::string(method);
  request.target = std::string(target);
  const size_t question = request.target.find('?');
  request.path = request.target.substr(0, question);
  if (question != std::string::npos) {
    request.query = request.target.substr(question + 1);
  }
  request.body = std::string(body);
  request.peer = "127.0.0.1:1";
  return request;
}

}  // namespace compatd::fuzz
