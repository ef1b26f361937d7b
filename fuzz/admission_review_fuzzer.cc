// Fuzzes the validating admission webhook (gateway/admission.h): an
// AdmissionReview read with simdjson On-Demand, judged over the embedded
// Kubernetes 1.36 catalog, through gateway::Gateway::Handle as
// kube-apiserver calls it (POST /admission/v1/validate?<query>).
//
// Input: "[unloaded ]<query>\n<AdmissionReview JSON>" ("mode=enforce\n{...}");
// "unloaded" asks a gateway with no catalog yet. The same document is read a
// second time with simdjson's DOM parser (a full parse), and the decision
// taken again from that reading: a differential of the On-Demand reader.
// Beyond "no crash, no sanitizer report, no hang":
//   - the status is 200, 400, or 503 (no catalog yet, for a well-formed
//     review only); errors are google.rpc.Status bodies;
//   - a document the DOM parser refuses (malformed JSON, bad UTF-8, bytes
//     after it) is 400: never answered, never allowed by accident;
//   - a 200 is a well-formed AdmissionReview (admission.k8s.io/v1) that
//     echoes request.uid (non-empty in the request), with allowed a bool,
//     and status.code 403 with a message exactly when it denies;
//   - its verdict is the DOM reading's: denied when a CRD UPDATE drops a
//     stored version, or when ?mode=enforce and the catalog's upgrade target
//     does not serve the object's API (a subresource's: its resource's);
//     allowed otherwise.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "api/handlers.h"
#include "api/object_check.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/gateway_fuzz.h"
#include "gateway/gateway.h"
#include "gateway/url_query.h"
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

// What the webhook reads of an object, read from the DOM with the webhook's
// rules (fields of CRD shape only; repeated spec.versions and
// storedVersions add up, as the On-Demand reader walks them in order).
struct Facts {
  bool present = false;
  std::string api_version;
  std::string kind;
  std::vector<std::string> versions;
  std::vector<std::string> stored;
};

Facts ReadFacts(dom::element request, std::string_view key) {
  Facts facts;
  dom::object object;
  if (request[key].get(object) != simdjson::SUCCESS) return facts;
  facts.present = true;
  for (auto field : object) {
    std::string_view text;
    if (field.key == "apiVersion" &&
        field.value.get(text) == simdjson::SUCCESS) {
      facts.api_version = std::string(text);
    } else if (field.key == "kind" &&
               field.value.get(text) == simdjson::SUCCESS) {
      facts.kind = std::string(text);
    } else if (field.key == "spec" && field.value.is_object()) {
      for (auto part : dom::object(field.value)) {
        if (part.key != "versions" || !part.value.is_array()) continue;
        for (dom::element entry : dom::array(part.value)) {
          if (!entry.is_object()) continue;
          std::string name;
          for (auto v : dom::object(entry)) {
            std::string_view text;
            if (v.key == "name" && v.value.get(text) == simdjson::SUCCESS) {
              name = std::string(text);
            }
          }
          facts.versions.push_back(name);
        }
      }
    } else if (field.key == "status" && field.value.is_object()) {
      for (auto part : dom::object(field.value)) {
        if (part.key != "storedVersions" || !part.value.is_array()) continue;
        for (dom::element stored : dom::array(part.value)) {
          std::string_view text;
          if (stored.get(text) == simdjson::SUCCESS)
            facts.stored.emplace_back(text);
        }
      }
    }
  }
  return facts;
}

struct Gvk {
  std::string group, version, kind;
  bool set() const { return !version.empty() && !kind.empty(); }
};

Gvk GvkAt(dom::element request, std::string_view key) {
  dom::element gvk;
  if (request[key].get(gvk) != simdjson::SUCCESS) return {};
  return {StringAt(gvk, "group"), StringAt(gvk, "version"),
          StringAt(gvk, "kind")};
}

// A subresource's review is judged by the resource it was made to
// (requestResource, else resource): its kind from the catalog's apis, else
// its apiHistory.
Gvk ResourceGvk(dom::element request, const compatd::engine::Catalog& catalog) {
  dom::element chosen;
  for (const char* key : {"requestResource", "resource"}) {
    dom::element e;
    if (request[key].get(e) != simdjson::SUCCESS) continue;
    if (!StringAt(e, "version").empty() && !StringAt(e, "resource").empty()) {
      chosen = e;
      break;
    }
    if (std::string_view(key) == "resource") chosen = e;
  }
  Gvk gvk{StringAt(chosen, "group"), StringAt(chosen, "version"), ""};
  const std::string resource = StringAt(chosen, "resource");
  for (const auto& gv : catalog.apis) {
    if (gv.group != gvk.group || gv.version != gvk.version) continue;
    for (const auto& r : gv.resources) {
      if (r.resource == resource) return {gvk.group, gvk.version, r.kind};
    }
  }
  for (const auto& entry : catalog.api_history) {
    if (entry.group == gvk.group && entry.version == gvk.version &&
        entry.resource == resource) {
      return {gvk.group, gvk.version, entry.kind};
    }
  }
  return gvk;
}

// The verdict the webhook must give a review it answered 200, from the DOM.
bool ExpectedAllowed(dom::element request, const gateway::UrlVersions& url,
                     const compatd::runtime::ServingSnapshot& snapshot) {
  const std::string operation = StringAt(request, "operation");
  const Facts object = ReadFacts(request, "object");
  Facts old_object = ReadFacts(request, "oldObject");
  Gvk gvk = GvkAt(request, "requestKind");
  if (!gvk.set()) gvk = GvkAt(request, "kind");
  const bool subresource = !StringAt(request, "subResource").empty() ||
                           !StringAt(request, "requestSubResource").empty();
  if (subresource) {
    gvk = ResourceGvk(request, snapshot.default_catalog());
  } else if (!gvk.set()) {
    const Facts& o = object.present ? object : old_object;
    const size_t slash = o.api_version.find('/');
    gvk = slash == std::string::npos
              ? Gvk{"", o.api_version, o.kind}
              : Gvk{o.api_version.substr(0, slash),
                    o.api_version.substr(slash + 1), o.kind};
  }
  if (operation == "UPDATE" && old_object.present &&
      gvk.group == "apiextensions.k8s.io" &&
      gvk.kind == "CustomResourceDefinition") {
    for (const std::string& stored : old_object.stored) {
      bool kept = false;
      for (const std::string& v : object.versions) kept |= v == stored;
      if (!kept) return false;
    }
  }
  if (operation == "DELETE" || operation == "CONNECT" || !gvk.set()) {
    return true;
  }
  absl::StatusOr<api::ObjectApiVerdict> verdict = api::CheckObjectApi(
      snapshot, url.Query(), gvk.group, gvk.version, gvk.kind);
  FUZZ_CHECK(verdict.ok(), "answered 200 although the API check failed");
  // kube-apiserver served it: only what the upgrade target will not serve
  // is denied, in enforce mode.
  return !(url.mode == "enforce" && verdict->target_not_served);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  LoadedGateway();
  UnloadedGateway();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  absl::string_view query = input.substr(0, newline);
  const std::string body(newline == absl::string_view::npos
                             ? absl::string_view()
                             : input.substr(newline + 1));
  const bool unloaded = absl::ConsumePrefix(&query, "unloaded ");
  const http::Request request = fuzz::MakeRequest(
      "POST",
      query.empty() ? "/admission/v1/validate"
                    : absl::StrCat("/admission/v1/validate?", query),
      body);
  http::Response response;
  (unloaded ? UnloadedGateway() : LoadedGateway()).Handle(request, &response);

  FUZZ_CHECK(response.status == 200 || response.status == 400 ||
                 response.status == 503,
             "a status other than 200, 400 or 503");
  FUZZ_CHECK(response.content_type == "application/json",
             "an answer not typed application/json");
  if (response.status != 200) fuzz::CheckStatusBody(response);

  // The document, fully parsed.
  dom::parser parser;
  dom::element review;
  dom::element review_request;
  const bool well_formed =
      parser.parse(body).get(review) == simdjson::SUCCESS &&
      review.is_object() &&
      StringAt(review, "apiVersion") == "admission.k8s.io/v1" &&
      StringAt(review, "kind") == "AdmissionReview" &&
      review["request"].get(review_request) == simdjson::SUCCESS &&
      !StringAt(review_request, "uid").empty();
  gateway::UrlVersions url;
  const bool query_ok = gateway::ParseUrlVersions(request.query, &url).ok();
  if (!well_formed || !query_ok) {
    FUZZ_CHECK(response.status == 400,
               "a malformed review or query not refused with 400");
    return 0;
  }
  if (unloaded) {
    FUZZ_CHECK(response.status != 200, "answered without a catalog");
  }
  FUZZ_CHECK(response.status != 503 || unloaded, "503 with a catalog loaded");
  if (response.status != 200) return 0;

  dom::parser answer_parser;
  const dom::element answer = fuzz::MustParseJson(answer_parser, response.body,
                                                  "an answer that is not JSON");
  FUZZ_CHECK(StringAt(answer, "apiVersion") == "admission.k8s.io/v1" &&
                 StringAt(answer, "kind") == "AdmissionReview",
             "an answer that is not an admission.k8s.io/v1 AdmissionReview");
  FUZZ_CHECK(answer["request"].error() == simdjson::NO_SUCH_FIELD,
             "an answer that carries a request");
  dom::element result;
  FUZZ_CHECK(
      answer["response"].get(result) == simdjson::SUCCESS && result.is_object(),
      "an answer without a response");
  FUZZ_CHECK(StringAt(result, "uid") == StringAt(review_request, "uid"),
             "response.uid is not request.uid");
  bool allowed = false;
  FUZZ_CHECK(result["allowed"].get(allowed) == simdjson::SUCCESS,
             "response.allowed is not a bool");
  if (allowed) {
    FUZZ_CHECK(result["status"].error() == simdjson::NO_SUCH_FIELD,
               "an allowed review with a status");
  } else {
    int64_t code = 0;
    dom::element status;
    FUZZ_CHECK(result["status"].get(status) == simdjson::SUCCESS &&
                   status["code"].get(code) == simdjson::SUCCESS &&
                   code == 403 && !StringAt(status, "message").empty(),
               "a denial without status.code 403 and a message");
  }
  const bool expected =
      ExpectedAllowed(review_request, url, *fuzz::LoadedPipeline().Current());
  if (allowed != expected) {
    std::fprintf(stderr, "allowed %d, the DOM reading says %d\n", allowed,
                 expected);
  }
  FUZZ_CHECK(allowed == expected,
             "a verdict other than the one the full parse gives");
  return 0;
}
