#include "gateway/gatekeeper.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "api/object_check.h"
#include "gateway/json.h"
#include "gateway/ondemand.h"
#include "gateway/stack_arena.h"
#include "gateway/url_query.h"
#include "simdjson.h"

namespace compatd::gateway {
namespace {

namespace od = simdjson::ondemand;

constexpr absl::string_view kProviderApiVersion =
    "externaldata.gatekeeper.sh/v1beta1";

absl::Status Malformed(simdjson::error_code error) {
  return absl::InvalidArgumentError(
      absl::StrCat("the ProviderRequest is not valid JSON: ",
                   simdjson::error_message(error)));
}

// The ProviderRequest's "request" member: its keys (other members are
// checked as JSON and skipped).
absl::Status ReadRequestKeys(od::object request, bool* has_keys,
                             std::vector<std::string>* keys) {
  for (auto member : request) {
    std::string_view name;
    if (const auto error = member.unescaped_key().get(name); error) {
      return Malformed(error);
    }
    if (name != "keys") {
      if (const auto error = SkipValue(member.value()); error) {
        return Malformed(error);
      }
      continue;
    }
    if (*has_keys) {
      return absl::InvalidArgumentError("request.keys appears twice");
    }
    *has_keys = true;
    od::array array;
    if (const auto error = member.value().get_array().get(array); error) {
      return Malformed(error);
    }
    for (auto element : array) {
      std::string_view text;
      if (const auto error = element.get_string().get(text); error) {
        return Malformed(error);
      }
      if (keys->size() == kMaxProviderKeys) {
        return absl::ResourceExhaustedError(
            absl::StrCat("request.keys has more than ", kMaxProviderKeys,
                         " keys; split the request"));
      }
      keys->emplace_back(text);
    }
  }
  return absl::OkStatus();
}

absl::Status ReadKeys(const std::string& body, std::vector<std::string>* keys) {
  thread_local od::parser parser;
  const ParserLease lease(parser);
  simdjson::padded_string padded(body);
  od::document document;
  std::string api_version;
  std::string kind;
  if (const auto error = Iterate(parser, padded).get(document); error) {
    return Malformed(error);
  }
  od::object root;
  if (const auto error = document.get_object().get(root); error) {
    return Malformed(error);
  }
  bool has_keys = false;
  for (auto field : root) {
    std::string_view key;
    if (const auto error = field.unescaped_key().get(key); error) {
      return Malformed(error);
    }
    if (key == "apiVersion" || key == "kind") {
      std::string_view text;
      if (const auto error = field.value().get_string().get(text); error) {
        return Malformed(error);
      }
      (key == "apiVersion" ? api_version : kind) = std::string(text);
    } else if (key == "request") {
      od::object request;
      if (const auto error = field.value().get_object().get(request); error) {
        return Malformed(error);
      }
      if (absl::Status s = ReadRequestKeys(request, &has_keys, keys); !s.ok()) {
        return s;
      }
    } else if (const auto error = SkipValue(field.value()); error) {
      return Malformed(error);
    }
  }
  if (const auto error = CheckEnd(document); error) return Malformed(error);
  if (api_version == "externaldata.gatekeeper.sh/v1alpha1" &&
      kind == "ProviderRequest") {
    return absl::InvalidArgumentError(absl::StrCat(
        "compatd answers externaldata.gatekeeper.sh/v1beta1 ProviderRequests, "
        "not v1alpha1: a Gatekeeper release that sends ",
        kProviderApiVersion, " is needed"));
  }
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

using Handlers = api::PolicyHandlers;

// The provider URL's versions (binary-, emulation-, min-compatibility-
// segments) with the key's own emulation version.
void SetVersions(const UrlVersions& scope, const std::string& emulation,
                 v1::VersionContext* versions) {
  versions->set_binary_version(scope.binary_version);
  versions->set_emulation_version(emulation);
  versions->set_min_compatibility_version(scope.min_compatibility_version);
}

absl::Status KeyError(absl::string_view key) {
  return absl::InvalidArgumentError(
      absl::StrCat("key ", JsonQuote(key), ": ", kGrammar));
}

// One "@EMULATION" at the end of `rest`, taken off; else `scope`'s (the
// provider URL's). A second '@' leaves one in `rest`, which CheckKeyParts
// refuses.
std::string TakeEmulation(const UrlVersions& scope, absl::string_view* rest) {
  const size_t at = rest->rfind('@');
  if (at == absl::string_view::npos) return scope.emulation_version;
  std::string emulation(rest->substr(at + 1));
  *rest = rest->substr(0, at);
  return emulation;
}

// A key's name parts: none empty, none with '@' (api:apps/v1/Deployment@
// 1.34@1.35 is malformed, not an unknown kind "Deployment@1.34").
absl::Status CheckKeyParts(absl::string_view key,
                           absl::Span<const absl::string_view> parts) {
  for (absl::string_view part : parts) {
    if (part.empty() || absl::StrContains(part, '@')) return KeyError(key);
  }
  return absl::OkStatus();
}

// feature:NAME[@EMULATION]: GetFeature.
absl::Status AnswerFeatureKey(const Handlers& handlers,
                              const runtime::ServingSnapshot& snapshot,
                              const UrlVersions& scope, absl::string_view key,
                              absl::string_view rest, std::string* out) {
  const std::string emulation = TakeEmulation(scope, &rest);
  if (absl::Status s = CheckKeyParts(key, {rest}); !s.ok()) return s;
  StackArena arena;
  v1::GetFeatureRequest& request =
      *StackArena::Create<v1::GetFeatureRequest>(arena);
  request.set_name(std::string(rest));
  SetVersions(scope, emulation, request.mutable_versions());
  v1::GetFeatureResponse& response =
      *StackArena::Create<v1::GetFeatureResponse>(arena);
  if (absl::Status s = handlers.GetFeature(snapshot, request, &response);
      !s.ok()) {
    return s;
  }
  AppendJson(response, out);
  return absl::OkStatus();
}

// api:[GROUP/]VERSION/KIND[@EMULATION]: CheckObjectApi (engine::JudgeApi, the
// verdict every surface gives: "verdict" is its state's name).
absl::Status AnswerApiKey(const runtime::ServingSnapshot& snapshot,
                          const UrlVersions& scope, absl::string_view key,
                          absl::string_view rest, std::string* out) {
  const std::string emulation = TakeEmulation(scope, &rest);
  const std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
  if (parts.size() != 2 && parts.size() != 3) return KeyError(key);
  if (absl::Status s = CheckKeyParts(key, parts); !s.ok()) return s;
  const absl::string_view group = parts.size() == 3 ? parts[0] : "";
  engine::VersionQuery query;
  query.binary_version = scope.binary_version;
  query.emulation_version = emulation;
  query.min_compatibility_version = scope.min_compatibility_version;
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
      out, R"({"state":)", JsonQuote(state), R"(,"verdict":)",
      JsonQuote(engine::ApiStateName(verdict->verdict)), R"(,"served":)",
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

// storage:[GROUP/]RESOURCE[@EMULATION]: GetStorageVersion.
absl::Status AnswerStorageKey(const Handlers& handlers,
                              const runtime::ServingSnapshot& snapshot,
                              const UrlVersions& scope, absl::string_view key,
                              absl::string_view rest, std::string* out) {
  const std::string emulation = TakeEmulation(scope, &rest);
  const std::vector<absl::string_view> parts = absl::StrSplit(rest, '/');
  if (parts.size() > 2) return KeyError(key);
  if (absl::Status s = CheckKeyParts(key, parts); !s.ok()) return s;
  StackArena arena;
  v1::GetStorageVersionRequest& request =
      *StackArena::Create<v1::GetStorageVersionRequest>(arena);
  if (parts.size() == 2) request.set_group(std::string(parts[0]));
  request.set_resource(std::string(parts.back()));
  SetVersions(scope, emulation, request.mutable_versions());
  v1::GetStorageVersionResponse& response =
      *StackArena::Create<v1::GetStorageVersionResponse>(arena);
  if (absl::Status s = handlers.GetStorageVersion(snapshot, request, &response);
      !s.ok()) {
    return s;
  }
  AppendJson(response, out);
  return absl::OkStatus();
}

// skew:COMPONENT/VERSION: CheckSkew.
absl::Status AnswerSkewKey(const Handlers& handlers,
                           const runtime::ServingSnapshot& snapshot,
                           const UrlVersions& scope, absl::string_view key,
                           absl::string_view rest, std::string* out) {
  const size_t slash = rest.find('/');
  if (slash == absl::string_view::npos) return KeyError(key);
  if (absl::Status s =
          CheckKeyParts(key, {rest.substr(0, slash), rest.substr(slash + 1)});
      !s.ok()) {
    return s;
  }
  StackArena arena;
  v1::CheckSkewRequest& request =
      *StackArena::Create<v1::CheckSkewRequest>(arena);
  request.set_component(std::string(rest.substr(0, slash)));
  request.set_client_version(std::string(rest.substr(slash + 1)));
  SetVersions(scope, scope.emulation_version, request.mutable_versions());
  v1::CheckSkewResponse& response =
      *StackArena::Create<v1::CheckSkewResponse>(arena);
  if (absl::Status s = handlers.CheckSkew(snapshot, request, &response);
      !s.ok()) {
    return s;
  }
  AppendJson(response, out);
  return absl::OkStatus();
}

// Appends one key's value as JSON to `out`, or returns its lasting error
// (and appends nothing).
absl::Status AnswerKey(const Handlers& handlers,
                       const runtime::ServingSnapshot& snapshot,
                       const UrlVersions& scope, absl::string_view key,
                       std::string* out) {
  absl::string_view rest = key;
  if (absl::ConsumePrefix(&rest, "feature:")) {
    return AnswerFeatureKey(handlers, snapshot, scope, key, rest, out);
  }
  if (absl::ConsumePrefix(&rest, "api:")) {
    return AnswerApiKey(snapshot, scope, key, rest, out);
  }
  if (absl::ConsumePrefix(&rest, "storage:")) {
    return AnswerStorageKey(handlers, snapshot, scope, key, rest, out);
  }
  if (absl::ConsumePrefix(&rest, "skew:")) {
    return AnswerSkewKey(handlers, snapshot, scope, key, rest, out);
  }
  return KeyError(key);
}

// A key's item after its "key" member: ,"value":...,"error":""} or
// ,"value":null,"error":"..."}.
std::string ItemAfterKey(const api::PolicyHandlers& handlers,
                         const runtime::ServingSnapshot& snapshot,
                         const UrlVersions& scope, absl::string_view key) {
  std::string item = R"(,"value":)";
  const size_t value_at = item.size();
  if (absl::Status s = AnswerKey(handlers, snapshot, scope, key, &item);
      s.ok()) {
    item.append(R"(,"error":""})");
  } else {
    item.resize(value_at);
    absl::StrAppend(&item, R"(null,"error":)",
                    JsonQuote(absl::StrCat(absl::StatusCodeToString(s.code()),
                                           ": ", s.message())),
                    "}");
  }
  return item;
}

std::string ProviderResponse(const std::string& items,
                             absl::string_view system_error) {
  return absl::StrCat(R"({"apiVersion":)", JsonQuote(kProviderApiVersion),
                      R"(,"kind":"ProviderResponse","response":{)",
                      R"("idempotent":true,"items":[)", items, "]",
                      R"(,"systemError":)", JsonQuote(system_error), "}}");
}

// The provider URL's options: path segments after /gatekeeper/v1 (the
// admission webhook's grammar, gateway/url_query.h) and the query. Only the
// versions apply to a provider; INVALID_ARGUMENT for anything else.
absl::Status ReadScope(const http::Request& request, UrlVersions* scope) {
  absl::string_view segments = request.path;
  absl::ConsumePrefix(&segments, kGatekeeperPath);
  absl::ConsumePrefix(&segments, "/");
  UrlVersions query;
  if (absl::Status s = ParseUrlPath(segments, scope); !s.ok()) return s;
  if (absl::Status s = ParseUrlVersions(request.query, &query); !s.ok()) {
    return s;
  }
  if (absl::Status s = MergeUrlVersions(query, scope); !s.ok()) return s;
  if (scope->mode_set || !scope->runtime_config.empty() ||
      !scope->feature_gates.empty() || !scope->path_gates.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        request.path,
        ": the Gatekeeper provider takes only versions (binary-MAJOR.MINOR, "
        "emulation-MAJOR.MINOR, min-compatibility-MAJOR.MINOR as path "
        "segments, or binaryVersion, emulationVersion, "
        "minCompatibilityVersion in the query); the mode, feature gates and "
        "APIs are the admission webhook's"));
  }
  return absl::OkStatus();
}

// What the cache keeps a key under: the key alone for the plain URL, else
// the URL's versions and the key.
std::string CacheKey(const UrlVersions& scope, const std::string& key) {
  if (scope.binary_version.empty() && scope.emulation_version.empty() &&
      scope.min_compatibility_version.empty()) {
    return key;
  }
  return absl::StrCat(scope.binary_version, "/", scope.emulation_version, "/",
                      scope.min_compatibility_version, " ", key);
}

}  // namespace

bool IsGatekeeperPath(absl::string_view path) {
  return absl::ConsumePrefix(&path, kGatekeeperPath) &&
         (path.empty() || path[0] == '/');
}

void ServeGatekeeperError(absl::string_view system_error,
                          http::Response* response) {
  response->status = 200;
  response->body = ProviderResponse("", system_error);
}

void ServeGatekeeper(const api::PolicyHandlers& handlers,
                     const runtime::ServingSnapshot* snapshot,
                     ProviderCache* cache, const http::Request& request,
                     http::Response* response) {
  std::vector<std::string> keys;
  if (absl::Status s = ReadKeys(request.body, &keys); !s.ok()) {
    // Gatekeeper decodes any answer as a ProviderResponse and reads a non-200
    // one as empty (no items, no error: the policy sees nothing wrong): every
    // answer it can read is a 200 whose systemError says what is wrong, as
    // Gatekeeper's provider template answers.
    response->body = ProviderResponse("", s.message());
    return;
  }
  UrlVersions scope;
  if (absl::Status s = ReadScope(request, &scope); !s.ok()) {
    response->body = ProviderResponse("", s.message());
    return;
  }
  if (snapshot == nullptr) {
    // Transient: Gatekeeper does not cache a systemError.
    response->body = ProviderResponse(
        "", "no catalog is loaded yet; retry once compatd reports ready");
    return;
  }
  // A binary compatd has no catalog for is the provider's configuration,
  // not any key's answer: said once, for every key.
  if (absl::StatusOr<const runtime::ServingLine*> line =
          snapshot->Line(scope.binary_version, "the provider URL's binary");
      !line.ok()) {
    response->body = ProviderResponse("", line.status().message());
    return;
  }
  // Each distinct key is answered once: from the cache, or from the
  // snapshot (and then kept).
  std::vector<std::string> cache_keys;
  cache_keys.reserve(keys.size());
  for (const std::string& key : keys)
    cache_keys.push_back(CacheKey(scope, key));
  std::vector<std::string> after_key(keys.size());
  if (cache != nullptr) {
    cache->Lookup(snapshot->generation, cache_keys, &after_key);
  }
  std::vector<std::pair<std::string, std::string>> computed;
  absl::flat_hash_map<absl::string_view, size_t> answered;
  size_t bytes = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (after_key[i].empty()) {
      const auto [first, inserted] = answered.try_emplace(keys[i], i);
      if (inserted) {
        after_key[i] = ItemAfterKey(handlers, *snapshot, scope, keys[i]);
        computed.emplace_back(cache_keys[i], after_key[i]);
      } else {
        after_key[i] = after_key[first->second];
      }
    }
    bytes += keys[i].size() + after_key[i].size() + 16;
  }
  if (cache != nullptr)
    cache->Insert(snapshot->generation, std::move(computed));
  std::string items;
  items.reserve(bytes);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) items += ",";
    absl::StrAppend(&items, R"({"key":)", JsonQuote(keys[i]), after_key[i]);
  }
  response->body = ProviderResponse(items, "");
}

}  // namespace compatd::gateway
