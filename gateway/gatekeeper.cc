#include "gateway/gatekeeper.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/object_check.h"
#include "gateway/json.h"
#include "gateway/ondemand.h"
#include "simdjson.h"

namespace compatd::gateway {
namespace {

namespace od = simdjson::ondemand;

constexpr absl::string_view kProviderApiVersion =
    "externaldata.gatekeeper.sh/v1beta1";

absl::Status ReadKeys(const std::string& body, std::vector<std::string>* keys) {
  thread_local od::parser parser;
  simdjson::padded_string padded(body);
  od::document document;
  std::string api_version;
  std::string kind;
  auto malformed = [](simdjson::error_code error) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ProviderRequest is not valid JSON: ",
                     simdjson::error_message(error)));
  };
  if (const auto error = Iterate(parser, padded).get(document); error) {
    return malformed(error);
  }
  od::object root;
  if (const auto error = document.get_object().get(root); error) {
    return malformed(error);
  }
  bool has_keys = false;
  for (auto field : root) {
    std::string_view key;
    if (const auto error = field.unescaped_key().get(key); error) {
      return malformed(error);
    }
    std::string_view text;
    if (key == "apiVersion" || key == "kind") {
      if (const auto error = field.value().get_string().get(text); error) {
        return malformed(error);
      }
      (key == "apiVersion" ? api_version : kind) = std::string(text);
    } else if (key == "request") {
      od::object request;
      if (const auto error = field.value().get_object().get(request); error) {
        return malformed(error);
      }
      for (auto r : request) {
        std::string_view rkey;
        if (const auto error = r.unescaped_key().get(rkey); error) {
          return malformed(error);
        }
        if (rkey != "keys") {
          // Not read, but JSON all the same.
          if (const auto error = SkipValue(r.value()); error) {
            return malformed(error);
          }
          continue;
        }
        if (has_keys) {
          return absl::InvalidArgumentError("request.keys appears twice");
        }
        has_keys = true;
        od::array array;
        if (const auto error = r.value().get_array().get(array); error) {
          return malformed(error);
        }
        for (auto element : array) {
          if (const auto error = element.get_string().get(text); error) {
            return malformed(error);
          }
          if (keys->size() == kMaxProviderKeys) {
            return absl::ResourceExhaustedError(
                absl::StrCat("request.keys has more than ", kMaxProviderKeys,
                             " keys; split the request"));
          }
          keys->emplace_back(text);
        }
      }
    } else if (const auto error = SkipValue(field.value()); error) {
      return malformed(error);
    }
  }
  if (const auto error = CheckEnd(document); error) return malformed(error);
  if (api_version != kProviderApiVersion || kind != "ProviderRequest") {
    return absl::InvalidArgumentError(
        absl::StrCat("expected apiVersion ", kProviderApiVersion,
                     " and kind ProviderRequest, got ", JsonQuote(api_version),
                     " ", JsonQuote(kind)));
  }
  if (!has_keys) {
    return absl::InvalidArgumentError(
        "the ProviderRequest has no request.keys");
  }
  return absl::OkStatus();
}

const char kGrammar[] =
    "expected feature:NAME[@EMULATION], api:[GROUP/]VERSION/KIND[@EMULATION], "
    "storage:[GROUP/]RESOURCE[@EMULATION] or skew:COMPONENT/VERSION";

// Appends one key's value as JSON to `out`, or returns its lasting error
// (and appends nothing).
absl::Status AnswerKey(const api::PolicyHandlers& handlers,
                       const runtime::ServingSnapshot& snapshot,
                       absl::string_view key, std::string* out) {
  absl::string_view rest = key;
  std::string emulation;
  auto take_emulation = [&rest, &emulation] {
    const size_t at = rest.rfind('@');
    if (at == absl::string_view::npos) return;
    emulation = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
  };
  if (absl::ConsumePrefix(&rest, "feature:")) {
    take_emulation();
    v1::GetFeatureRequest request;
    request.set_name(std::string(rest));
    request.mutable_versions()->set_emulation_version(emulation);
    v1::GetFeatureResponse response;
    if (absl::Status s = handlers.GetFeature(snapshot, request, &response);
        !s.ok()) {
      return s;
    }
    AppendJson(response, out);
    return absl::OkStatus();
  }
  if (absl::ConsumePrefix(&rest, "api:")) {
    take_emulation();
    const std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
    if (parts.size() != 2 && parts.size() != 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("key ", JsonQuote(key), ": ", kGrammar));
    }
    const absl::string_view group = parts.size() == 3 ? parts[0] : "";
    engine::VersionQuery query;
    query.emulation_version = emulation;
    absl::StatusOr<api::ObjectApiVerdict> verdict = api::CheckObjectApi(
        snapshot, query, group, parts[parts.size() - 2], parts.back());
    if (!verdict.ok()) return verdict.status();
    using State = api::ObjectApiVerdict::State;
    const absl::string_view state =
        verdict->state == State::kServed       ? "served"
        : verdict->state == State::kDeprecated ? "deprecated"
        : verdict->state == State::kNotServed  ? "notServed"
                                               : "unknown";
    absl::StrAppend(
        out, R"({"state":)", JsonQuote(state), R"(,"served":)",
        verdict->state == State::kServed || verdict->state == State::kDeprecated
            ? "true"
            : "false",
        R"(,"resource":)", JsonQuote(verdict->resource), R"(,"deprecated":)",
        JsonQuote(verdict->deprecated), R"(,"removed":)",
        JsonQuote(verdict->removed), R"(,"replacement":)",
        JsonQuote(verdict->replacement), R"(,"emulationVersion":)",
        JsonQuote(verdict->emulation), R"(,"reason":)",
        JsonQuote(verdict->message), "}");
    return absl::OkStatus();
  }
  if (absl::ConsumePrefix(&rest, "storage:")) {
    take_emulation();
    const std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
    if (parts.size() > 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("key ", JsonQuote(key), ": ", kGrammar));
    }
    v1::GetStorageVersionRequest request;
    if (parts.size() == 2) request.set_group(std::string(parts[0]));
    request.set_resource(std::string(parts.back()));
    request.mutable_versions()->set_emulation_version(emulation);
    v1::GetStorageVersionResponse response;
    if (absl::Status s =
            handlers.GetStorageVersion(snapshot, request, &response);
        !s.ok()) {
      return s;
    }
    AppendJson(response, out);
    return absl::OkStatus();
  }
  if (absl::ConsumePrefix(&rest, "skew:")) {
    const size_t slash = rest.find('/');
    if (slash == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("key ", JsonQuote(key), ": ", kGrammar));
    }
    v1::CheckSkewRequest request;
    request.set_component(std::string(rest.substr(0, slash)));
    request.set_client_version(std::string(rest.substr(slash + 1)));
    v1::CheckSkewResponse response;
    if (absl::Status s = handlers.CheckSkew(snapshot, request, &response);
        !s.ok()) {
      return s;
    }
    AppendJson(response, out);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("key ", JsonQuote(key), ": ", kGrammar));
}

std::string ProviderResponse(const std::string& items,
                             absl::string_view system_error) {
  return absl::StrCat(R"({"apiVersion":)", JsonQuote(kProviderApiVersion),
                      R"(,"kind":"ProviderResponse","response":{)",
                      R"("idempotent":true,"items":[)", items, "]",
                      R"(,"systemError":)", JsonQuote(system_error), "}}");
}

}  // namespace

void ServeGatekeeper(const api::PolicyHandlers& handlers,
                     const runtime::ServingSnapshot* snapshot,
                     const http::Request& request, http::Response* response) {
  std::vector<std::string> keys;
  if (absl::Status s = ReadKeys(request.body, &keys); !s.ok()) {
    response->status = HttpStatusOf(s.code());
    response->body = StatusJson(s);
    return;
  }
  if (snapshot == nullptr) {
    // Transient: Gatekeeper does not cache a systemError.
    response->body = ProviderResponse(
        "", "no catalog is loaded yet; retry once compatd reports ready");
    return;
  }
  std::string items;
  items.reserve(keys.size() * 640);
  for (const std::string& key : keys) {
    if (!items.empty()) items += ",";
    absl::StrAppend(&items, R"({"key":)", JsonQuote(key), R"(,"value":)");
    const size_t value_at = items.size();
    if (absl::Status s = AnswerKey(handlers, *snapshot, key, &items); s.ok()) {
      items.append(R"(,"error":""})");
    } else {
      items.resize(value_at);
      absl::StrAppend(&items, R"(null,"error":)",
                      JsonQuote(absl::StrCat(absl::StatusCodeToString(s.code()),
                                             ": ", s.message())),
                      "}");
    }
  }
  response->body = ProviderResponse(items, "");
}

}  // namespace compatd::gateway
