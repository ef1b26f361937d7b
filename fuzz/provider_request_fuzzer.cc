// Fuzzes the Gatekeeper external data provider (gateway/gatekeeper.h): a
// ProviderRequest read with simdjson On-Demand, every key answered from the
// embedded Kubernetes 1.36 catalog, through gateway::Gateway::Handle as
// Gatekeeper calls it (POST /gatekeeper/v1).
//
// Input: "[unloaded\n]<ProviderRequest JSON>"; "unloaded" asks a gateway
// with no catalog yet. The document is read again with simdjson's DOM
// parser (a full parse) for a differential of the keys. Beyond "no crash, no
// sanitizer report, no hang":
//   - the status is 200 (Gatekeeper reads only 200 answers), the answer a
//     well-formed ProviderResponse (externaldata.gatekeeper.sh/v1beta1) with
//     response.idempotent true;
//   - a document the DOM parser refuses, or one of more than
//     kMaxProviderKeys keys, gets no item and a systemError;
//   - with a catalog and no systemError, one item per key of the request,
//     in order, each with the key, and either a non-null value and error ""
//     or a null value and an error; without a catalog, no item and a
//     systemError.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "api/handlers.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/gateway_fuzz.h"
#include "gateway/gatekeeper.h"
#include "gateway/gateway.h"
#include "simdjson.h"

namespace {

namespace api = compatd::api;
namespace fuzz = compatd::fuzz;
namespace gateway = compatd::gateway;
namespace http = compatd::http;
namespace dom = simdjson::dom;

using fuzz::LoadedGateway;
using fuzz::StringAt;
using fuzz::UnloadedGateway;

// The keys of a well-formed request, read from the DOM in document order;
// false when the provider must refuse the document (wrong apiVersion or
// kind, no request.keys, a key that is not a string).
bool ReadKeys(dom::element root, std::vector<std::string>* keys) {
  dom::object object;
  if (root.get(object) != simdjson::SUCCESS) return false;
  // apiVersion and kind: the last one given counts, as in Go's decoder.
  std::string api_version;
  std::string kind;
  bool has_keys = false;
  for (auto field : object) {
    if (field.key == "apiVersion" || field.key == "kind") {
      std::string_view text;
      if (field.value.get(text) != simdjson::SUCCESS) return false;
      (field.key == "apiVersion" ? api_version : kind) = std::string(text);
      continue;
    }
    if (field.key != "request") continue;
    dom::object request;
    if (field.value.get(request) != simdjson::SUCCESS) return false;
    for (auto r : request) {
      if (r.key != "keys") continue;
      dom::array array;
      if (has_keys || r.value.get(array) != simdjson::SUCCESS) return false;
      has_keys = true;
      for (dom::element key : array) {
        std::string_view text;
        if (key.get(text) != simdjson::SUCCESS) return false;
        keys->emplace_back(text);
      }
    }
  }
  return has_keys && api_version == "externaldata.gatekeeper.sh/v1beta1" &&
         kind == "ProviderRequest";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  LoadedGateway();
  UnloadedGateway();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view input(reinterpret_cast<const char*>(data), size);
  const bool unloaded = absl::ConsumePrefix(&input, "unloaded\n");
  const std::string body(input);
  const http::Request request =
      fuzz::MakeRequest("POST", "/gatekeeper/v1", body);
  http::Response response;
  (unloaded ? UnloadedGateway() : LoadedGateway()).Handle(request, &response);

  FUZZ_CHECK(response.status == 200,
             "a status other than 200 (Gatekeeper reads only 200 answers)");
  FUZZ_CHECK(response.content_type == "application/json",
             "an answer not typed application/json");

  dom::parser parser;
  dom::element root;
  std::vector<std::string> keys;
  const bool well_formed = parser.parse(body).get(root) == simdjson::SUCCESS &&
                           ReadKeys(root, &keys);

  dom::parser answer_parser;
  const dom::element answer = fuzz::MustParseJson(answer_parser, response.body,
                                                  "an answer that is not JSON");
  FUZZ_CHECK(
      StringAt(answer, "apiVersion") == "externaldata.gatekeeper.sh/v1beta1" &&
          StringAt(answer, "kind") == "ProviderResponse",
      "an answer that is not a ProviderResponse");
  dom::element result;
  FUZZ_CHECK(answer["response"].get(result) == simdjson::SUCCESS,
             "an answer without a response");
  bool idempotent = false;
  FUZZ_CHECK(
      result["idempotent"].get(idempotent) == simdjson::SUCCESS && idempotent,
      "response.idempotent is not true");
  dom::array items;
  FUZZ_CHECK(result["items"].get(items) == simdjson::SUCCESS,
             "response.items is not an array");
  const std::string system_error = StringAt(result, "systemError");
  if (!well_formed || keys.size() > gateway::kMaxProviderKeys) {
    // More keys than allowed stop the reading before the end.
    FUZZ_CHECK(items.size() == 0 && !system_error.empty(),
               "a malformed ProviderRequest without a systemError");
    return 0;
  }
  if (unloaded) {
    FUZZ_CHECK(items.size() == 0 && !system_error.empty(),
               "answered without a catalog, or no systemError");
    return 0;
  }
  // The DOM reading accepts what the provider may still refuse (a repeated
  // key in an object, which On-Demand sees and the DOM hides): a
  // systemError, then, and no item.
  if (!system_error.empty()) {
    FUZZ_CHECK(items.size() == 0, "items beside a systemError");
    return 0;
  }
  FUZZ_CHECK(items.size() == keys.size(), "not one item per key");
  size_t i = 0;
  for (dom::element item : items) {
    FUZZ_CHECK(StringAt(item, "key") == keys[i],
               "an item whose key is not the request's, in order");
    dom::element value;
    FUZZ_CHECK(item["value"].get(value) == simdjson::SUCCESS,
               "an item without a value");
    const std::string error = StringAt(item, "error");
    FUZZ_CHECK(item["error"].is_string(), "an item without an error string");
    FUZZ_CHECK(error.empty() != value.is_null(),
               "an item with both a value and an error, or neither");
    if (!value.is_null()) {
      FUZZ_CHECK(value.is_object(), "an item value that is not an object");
    }
    ++i;
  }
  return 0;
}
