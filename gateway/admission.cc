#include "gateway/admission.h"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/catalog_answers.h"
#include "api/object_check.h"
#include "api/scan_cel.h"
#include "base/work_budget.h"
#include "engine/api_names.h"
#include "engine/effective_version.h"
#include "gateway/json.h"
#include "gateway/ondemand.h"
#include "gateway/url_query.h"
#include "simdjson.h"

namespace compatd::gateway {
namespace {

namespace od = simdjson::ondemand;

absl::string_view View(std::string_view s) { return {s.data(), s.size()}; }

// A GroupVersionKind, or (request.resource, request.requestResource) a
// GroupVersionResource: `resource` instead of `kind`.
struct Gvk {
  std::string group;
  std::string version;
  std::string kind;
  std::string resource;
  bool set() const { return !version.empty() && !kind.empty(); }
};

struct CrdVersion {
  std::string name;
  bool served = false;
};

// What the check reads of an object; the rest of it is skipped unread.
struct ObjectFacts {
  bool present = false;
  std::string api_version;
  std::string kind;
  std::string name;
  std::vector<CrdVersion> versions;  // spec.versions (CRDs)
  std::vector<std::string> stored;   // status.storedVersions (CRDs)
  // Where the object's JSON is in the body (for the CEL check).
  size_t raw_begin = 0;
  size_t raw_size = 0;
};

struct Review {
  std::string api_version;
  std::string kind;
  std::string uid;
  std::string operation;
  Gvk request_kind;
  Gvk kind_of_request;
  Gvk resource;                      // request.resource
  Gvk request_resource;              // request.requestResource
  std::string sub_resource;          // request.subResource
  std::string request_sub_resource;  // request.requestSubResource
  ObjectFacts object;
  ObjectFacts old_object;
  // The start of the parsed copy of the body, which ObjectFacts' raw_begin
  // counts from (the body's own offsets).
  const char* base = nullptr;
};

// Errors carry where the parser stopped, for the 400.
absl::Status Malformed(absl::string_view what, simdjson::error_code error) {
  return absl::InvalidArgumentError(
      absl::StrCat("the AdmissionReview is not valid JSON at ", what, ": ",
                   simdjson::error_message(error)));
}

// Walks a value the check does not need, so that it is JSON all the same.
absl::Status Skip(simdjson::simdjson_result<od::value> value,
                  absl::string_view where) {
  if (const auto error = SkipValue(std::move(value)); error) {
    return Malformed(where, error);
  }
  return absl::OkStatus();
}

// Rejects a key seen twice in one object: Go's decoders (kube-apiserver's)
// keep the last value where this reader would keep the first.
absl::Status Once(std::set<std::string>* seen, std::string_view key,
                  absl::string_view where) {
  if (!seen->insert(std::string(key)).second) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ".", View(key), " appears twice"));
  }
  return absl::OkStatus();
}

// Whether `value` is JSON null: Go's decoder (kube-apiserver's, and every
// client's) takes a null as the field's zero value, so compatd reads it as
// absent. A malformed atom ("nul") is an error, not false.
absl::StatusOr<bool> IsNull(od::value& value, absl::string_view where) {
  bool is_null = false;
  if (const auto error = value.is_null().get(is_null); error) {
    return Malformed(where, error);
  }
  return is_null;
}

absl::Status ReadString(od::value value, absl::string_view where,
                        std::string* out) {
  absl::StatusOr<bool> null = IsNull(value, where);
  if (!null.ok()) return null.status();
  if (*null) return absl::OkStatus();
  std::string_view text;
  if (const auto error = value.get_string().get(text); error) {
    return Malformed(where, error);
  }
  *out = std::string(text);
  return absl::OkStatus();
}

absl::Status ReadGvk(od::value value, absl::string_view where, Gvk* out) {
  absl::StatusOr<bool> null = IsNull(value, where);
  if (!null.ok()) return null.status();
  if (*null) return absl::OkStatus();
  od::object object;
  if (const auto error = value.get_object().get(object); error) {
    return Malformed(where, error);
  }
  std::set<std::string> seen;
  for (auto field : object) {
    std::string_view key;
    if (const auto error = field.unescaped_key().get(key); error) {
      return Malformed(where, error);
    }
    if (absl::Status s = Once(&seen, key, where); !s.ok()) return s;
    std::string* target = key == "group"      ? &out->group
                          : key == "version"  ? &out->version
                          : key == "kind"     ? &out->kind
                          : key == "resource" ? &out->resource
                                              : nullptr;
    absl::Status s = target == nullptr
                         ? Skip(field.value(), where)
                         : ReadString(field.value(), where, target);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// A string value, or nullopt (the value skipped, its syntax checked) when it
// is of another type.
absl::StatusOr<std::optional<std::string>> StringOrSkip(
    simdjson::simdjson_result<od::value> result, absl::string_view where) {
  od::value value;
  if (const auto error = std::move(result).get(value); error) {
    return Malformed(where, error);
  }
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) {
    return std::optional<std::string>(std::string(text));
  }
  if (absl::Status s = Skip(std::move(value), where); !s.ok()) return s;
  return std::optional<std::string>();
}

// spec.versions of a CRD ([{"name": "v1", "served": true}, ...]) and
// status.storedVersions (["v1"]). Any object may have fields of those names,
// of any shape: what does not have a CRD's shape is skipped (kube-apiserver
// validated a CRD's schema before validating webhooks see it).
//
// A key given twice replaces the earlier list, and null empties it, as Go's
// decoder (kube-apiserver's) does: "Unmarshal resets the slice length to zero
// and then appends each element" (encoding/json decode.go).
absl::Status ReadCrdVersions(od::value value, ObjectFacts* out) {
  out->versions.clear();
  od::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    return Skip(std::move(value), "spec.versions");
  }
  for (auto element : array) {
    od::value entry_value;
    if (const auto error = std::move(element).get(entry_value); error) {
      return Malformed("spec.versions[]", error);
    }
    od::object entry;
    if (entry_value.get_object().get(entry) != simdjson::SUCCESS) {
      if (absl::Status s = Skip(std::move(entry_value), "spec.versions[]");
          !s.ok()) {
        return s;
      }
      continue;
    }
    CrdVersion version;
    for (auto field : entry) {
      std::string_view key;
      if (const auto error = field.unescaped_key().get(key); error) {
        return Malformed("spec.versions[]", error);
      }
      if (key == "name") {
        absl::StatusOr<std::optional<std::string>> name =
            StringOrSkip(field.value(), "spec.versions[].name");
        if (!name.ok()) return name.status();
        if (name->has_value()) version.name = **name;
      } else if (key == "served") {
        od::value served;
        if (const auto error = field.value().get(served); error) {
          return Malformed("spec.versions[].served", error);
        }
        if (served.get_bool().get(version.served) != simdjson::SUCCESS) {
          if (absl::Status s =
                  Skip(std::move(served), "spec.versions[].served");
              !s.ok()) {
            return s;
          }
        }
      } else if (absl::Status s = Skip(field.value(), "spec.versions[]");
                 !s.ok()) {
        return s;
      }
    }
    out->versions.push_back(std::move(version));
  }
  return absl::OkStatus();
}

absl::Status ReadStoredVersions(od::value value, ObjectFacts* out) {
  out->stored.clear();  // as ReadCrdVersions
  od::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    return Skip(std::move(value), "status.storedVersions");
  }
  for (auto element : array) {
    absl::StatusOr<std::optional<std::string>> name =
        StringOrSkip(std::move(element), "status.storedVersions[]");
    if (!name.ok()) return name.status();
    if (name->has_value()) out->stored.push_back(**std::move(name));
  }
  return absl::OkStatus();
}

// An object's metadata: its name (null: none).
absl::Status ReadMetadata(od::value metadata_value, ObjectFacts* out) {
  absl::StatusOr<bool> null = IsNull(metadata_value, "metadata");
  if (!null.ok()) return null.status();
  if (*null) return absl::OkStatus();
  od::object metadata;
  if (const auto error = metadata_value.get_object().get(metadata); error) {
    return Malformed("metadata", error);
  }
  for (auto m : metadata) {
    std::string_view mkey;
    if (const auto error = m.unescaped_key().get(mkey); error) {
      return Malformed("metadata", error);
    }
    absl::Status s = mkey == "name"
                         ? ReadString(m.value(), "metadata.name", &out->name)
                         : Skip(m.value(), "metadata");
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// A CRD's spec (its versions) or status (its storedVersions); `key` is
// "spec" or "status". Another object's: skipped.
absl::Status ReadCrdPart(std::string_view key, od::value part_value,
                         ObjectFacts* out) {
  od::object part;
  if (const auto error = part_value.get_object().get(part); error) {
    // Not a CRD's: nothing this check reads, but JSON all the same.
    return Skip(std::move(part_value), View(key));
  }
  for (auto p : part) {
    std::string_view pkey;
    if (const auto error = p.unescaped_key().get(pkey); error) {
      return Malformed(View(key), error);
    }
    if (key == "spec" && pkey == "versions") {
      if (absl::Status s = ReadCrdVersions(p.value(), out); !s.ok()) {
        return s;
      }
    } else if (key == "status" && pkey == "storedVersions") {
      if (absl::Status s = ReadStoredVersions(p.value(), out); !s.ok()) {
        return s;
      }
    } else if (absl::Status s = Skip(p.value(), View(key)); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ReadObject(od::value value, absl::string_view where,
                        const char* base, ObjectFacts* out) {
  // is_null() is an error, not false, for a malformed atom ("n", "nul"):
  // taken as a bool, it threw out of the handler and ended the process.
  absl::StatusOr<bool> null = IsNull(value, where);
  if (!null.ok()) return null.status();
  if (*null) return absl::OkStatus();
  od::object object;
  if (const auto error = value.get_object().get(object); error) {
    return Malformed(where, error);
  }
  out->present = true;
  // Its text, for the CEL check; then read from its start again.
  std::string_view raw;
  if (const auto error = object.raw_json().get(raw); error) {
    return Malformed(where, error);
  }
  if (base != nullptr && raw.data() >= base) {
    out->raw_begin = static_cast<size_t>(raw.data() - base);
    out->raw_size = raw.size();
  }
  if (const auto error = object.reset().error(); error) {
    return Malformed(where, error);
  }
  std::set<std::string> seen;
  for (auto field : object) {
    std::string_view key;
    if (const auto error = field.unescaped_key().get(key); error) {
      return Malformed(where, error);
    }
    if (absl::Status s = Once(&seen, key, where); !s.ok()) return s;
    if (key == "apiVersion") {
      if (absl::Status s = ReadString(field.value(), where, &out->api_version);
          !s.ok()) {
        return s;
      }
    } else if (key == "kind") {
      if (absl::Status s = ReadString(field.value(), where, &out->kind);
          !s.ok()) {
        return s;
      }
    } else if (key == "metadata") {
      od::value metadata_value;
      if (const auto error = field.value().get(metadata_value); error) {
        return Malformed("metadata", error);
      }
      if (absl::Status s = ReadMetadata(std::move(metadata_value), out);
          !s.ok()) {
        return s;
      }
    } else if (key == "spec" || key == "status") {
      od::value part_value;
      if (const auto error = field.value().get(part_value); error) {
        return Malformed(View(key), error);
      }
      if (absl::Status s = ReadCrdPart(key, std::move(part_value), out);
          !s.ok()) {
        return s;
      }
    } else if (absl::Status s = Skip(field.value(), where); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ReadRequest(od::value value, Review* review) {
  absl::StatusOr<bool> null = IsNull(value, "request");
  if (!null.ok()) return null.status();
  if (*null) return absl::OkStatus();  // then: no request.uid to answer
  od::object object;
  if (const auto error = value.get_object().get(object); error) {
    return Malformed("request", error);
  }
  std::set<std::string> seen;
  for (auto field : object) {
    std::string_view key;
    if (const auto error = field.unescaped_key().get(key); error) {
      return Malformed("request", error);
    }
    if (absl::Status s = Once(&seen, key, "request"); !s.ok()) return s;
    absl::Status s;
    if (key == "uid") {
      s = ReadString(field.value(), "request.uid", &review->uid);
    } else if (key == "operation") {
      s = ReadString(field.value(), "request.operation", &review->operation);
    } else if (key == "kind") {
      s = ReadGvk(field.value(), "request.kind", &review->kind_of_request);
    } else if (key == "requestKind") {
      s = ReadGvk(field.value(), "request.requestKind", &review->request_kind);
    } else if (key == "resource") {
      s = ReadGvk(field.value(), "request.resource", &review->resource);
    } else if (key == "requestResource") {
      s = ReadGvk(field.value(), "request.requestResource",
                  &review->request_resource);
    } else if (key == "subResource") {
      s = ReadString(field.value(), "request.subResource",
                     &review->sub_resource);
    } else if (key == "requestSubResource") {
      s = ReadString(field.value(), "request.requestSubResource",
                     &review->request_sub_resource);
    } else if (key == "object") {
      s = ReadObject(field.value(), "request.object", review->base,
                     &review->object);
    } else if (key == "oldObject") {
      s = ReadObject(field.value(), "request.oldObject", review->base,
                     &review->old_object);
    } else {
      s = Skip(field.value(), "request");
    }
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ReadReview(const std::string& body, Review* review) {
  // One parser per thread, reused: its buffers grow to the largest body seen
  // (bounded by --max-admission-body-bytes) and are given back after a body
  // over kKeptParserBytes.
  thread_local od::parser parser;
  const ParserLease lease(parser);
  simdjson::padded_string padded(body);
  review->base = padded.data();
  od::document document;
  if (const auto error = Iterate(parser, padded).get(document); error) {
    return Malformed("the document", error);
  }
  od::object root;
  if (const auto error = document.get_object().get(root); error) {
    return Malformed("the document", error);
  }
  std::set<std::string> seen;
  bool has_request = false;
  for (auto field : root) {
    std::string_view key;
    if (const auto error = field.unescaped_key().get(key); error) {
      return Malformed("the document", error);
    }
    if (absl::Status s = Once(&seen, key, "AdmissionReview"); !s.ok()) return s;
    absl::Status s;
    if (key == "apiVersion") {
      s = ReadString(field.value(), "apiVersion", &review->api_version);
    } else if (key == "kind") {
      s = ReadString(field.value(), "kind", &review->kind);
    } else if (key == "request") {
      has_request = true;
      s = ReadRequest(field.value(), review);
    } else {
      s = Skip(field.value(), "the document");
    }
    if (!s.ok()) return s;
  }
  if (const auto error = CheckEnd(document); error) {
    return Malformed("the end of the document", error);
  }
  if (review->api_version != "admission.k8s.io/v1" ||
      review->kind != "AdmissionReview") {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected apiVersion admission.k8s.io/v1 and kind AdmissionReview, "
        "got ",
        JsonQuote(review->api_version), " ", JsonQuote(review->kind),
        " (set admissionReviewVersions: [v1] in the webhook configuration)"));
  }
  if (!has_request || review->uid.empty()) {
    return absl::InvalidArgumentError(
        "the AdmissionReview has no request.uid to answer");
  }
  return absl::OkStatus();
}

// The kind of `resource` (a plural) in group/version: the catalog's apis,
// else its apiHistory; empty when neither has it.
std::string KindOfResource(const engine::Catalog& catalog,
                           absl::string_view group, absl::string_view version,
                           absl::string_view resource) {
  for (const engine::APIGroupVersion& gv : catalog.apis) {
    if (gv.group != group || gv.version != version) continue;
    for (const engine::APIResource& r : gv.resources) {
      if (r.resource == resource) return r.kind;
    }
  }
  for (const engine::APIHistoryEntry& entry : catalog.api_history) {
    if (entry.group == group && entry.version == version &&
        entry.resource == resource) {
      return entry.kind;
    }
  }
  return "";
}

// What the review is judged by. A subresource (deployments/scale,
// deployments/status) by the resource it was made to, requestResource (the
// request as the client sent it) else resource: the Scale kind of
// request.kind says nothing of whether apps/v1beta1 deployments is served.
// Otherwise request.requestKind, else request.kind, else the object's
// apiVersion/kind.
Gvk ObjectGvk(const Review& review, const engine::Catalog& catalog) {
  if (!review.sub_resource.empty() || !review.request_sub_resource.empty()) {
    const Gvk& gvr = !review.request_resource.version.empty() &&
                             !review.request_resource.resource.empty()
                         ? review.request_resource
                         : review.resource;
    Gvk gvk = gvr;
    gvk.kind = KindOfResource(catalog, gvr.group, gvr.version, gvr.resource);
    return gvk;
  }
  if (review.request_kind.set()) return review.request_kind;
  if (review.kind_of_request.set()) return review.kind_of_request;
  Gvk gvk;
  const ObjectFacts& o =
      review.object.present ? review.object : review.old_object;
  const size_t slash = o.api_version.find('/');
  if (slash == std::string::npos) {
    gvk.version = o.api_version;
  } else {
    gvk.group = o.api_version.substr(0, slash);
    gvk.version = o.api_version.substr(slash + 1);
  }
  gvk.kind = o.kind;
  return gvk;
}

// kube-apiserver's rule (apiextensions validation of status.storedVersions):
// a version that was ever a storage version stays in spec.versions until a
// storage migration removed it from status.storedVersions.
std::string DroppedStoredVersion(const Review& review, const Gvk& gvk) {
  if (review.operation != "UPDATE" || !review.old_object.present ||
      gvk.group != "apiextensions.k8s.io" ||
      gvk.kind != "CustomResourceDefinition") {
    return "";
  }
  for (size_t i = 0; i < review.old_object.stored.size(); ++i) {
    const std::string& stored = review.old_object.stored[i];
    bool kept = false;
    for (const CrdVersion& v : review.object.versions) kept |= v.name == stored;
    if (!kept) {
      return absl::StrCat(
          "status.storedVersions[", i, "]: Invalid value: ", JsonQuote(stored),
          ": missing from spec.versions; ", stored,
          " was previously a storage version, and must remain in "
          "spec.versions until a storage migration ensures no data remains "
          "persisted in ",
          stored, " and removes ", stored, " from status.storedVersions");
    }
  }
  return "";
}

std::string Answer(const std::string& uid, bool allowed,
                   const std::string& message,
                   const std::vector<std::string>& warnings) {
  std::string response = absl::StrCat(
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)",
      R"("response":{"uid":)", JsonQuote(uid), R"(,"allowed":)",
      allowed ? "true" : "false");
  if (!allowed) {
    absl::StrAppend(&response, R"(,"status":{"code":403,"reason":"Forbidden",)",
                    R"("message":)", JsonQuote(message), "}");
  }
  if (!warnings.empty()) {
    std::vector<std::string> quoted;
    for (const std::string& w : warnings) quoted.push_back(JsonQuote(w));
    absl::StrAppend(&response, R"(,"warnings":[)", absl::StrJoin(quoted, ","),
                    "]");
  }
  absl::StrAppend(&response, "}}");
  return response;
}

// kube-apiserver keeps at most 4096 characters of a response's warnings and
// then cuts each warning past 256 characters, the last ones first
// (apiserver pkg/warning, DefaultWarningRecorder): every warning is kept
// within 256, the replacement in its first words.
constexpr size_t kMaxWarning = 256;

std::string Bounded(std::string warning) {
  if (warning.size() <= kMaxWarning) return warning;
  size_t cut = kMaxWarning - 3;
  // Not inside a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(warning[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  warning.resize(cut);
  warning += "...";
  return warning;
}

// "compatd: use discovery.k8s.io/v1 EndpointSlice, not v1 Endpoints: " when
// there is a replacement (first, so that no cut loses it), else
// "compatd: v1 Endpoints is ".
std::string Lead(const Gvk& gvk, const api::ObjectApiVerdict& verdict) {
  const std::string api = absl::StrCat(
      engine::GroupVersionString(gvk.group, gvk.version), " ", gvk.kind);
  if (verdict.replacement.empty())
    return absl::StrCat("compatd: ", api, " is ");
  return absl::StrCat("compatd: use ", verdict.replacement, " ",
                      verdict.replacement_kind, ", not ", api, ": ");
}

// "compatd: use discovery.k8s.io/v1 EndpointSlice, not v1 Endpoints:
// deprecated since Kubernetes 1.33".
std::string DeprecationWarning(const Gvk& gvk,
                               const api::ObjectApiVerdict& verdict) {
  return Bounded(absl::StrCat(
      Lead(gvk, verdict), "deprecated since Kubernetes ", verdict.deprecated,
      verdict.removed.empty()
          ? std::string()
          : absl::StrCat(", removed in ", verdict.removed)));
}

// For an API the upgrade target does not serve: the denial's message
// (enforce) or a warning.
std::string TargetWarning(const Gvk& gvk,
                          const api::ObjectApiVerdict& verdict) {
  return Bounded(absl::StrCat(Lead(gvk, verdict),
                              "not served at the cluster's upgrade target "
                              "(emulation ",
                              verdict.target_emulation,
                              "): ", verdict.target_why));
}

// kube-apiserver served the object's API, which the catalog says it does not
// serve: the catalog, not the object, is wrong.
std::string MismatchWarning(const Gvk& gvk,
                            const api::ObjectApiVerdict& verdict) {
  using NotServed = api::ObjectApiVerdict::NotServed;
  const absl::string_view why =
      verdict.not_served == NotServed::kRemoved ? "removed there"
      : verdict.not_served == NotServed::kNotIntroduced
          ? "not yet introduced there"
          : "not enabled there";
  return Bounded(absl::StrCat(
      "compatd: catalog mismatch: the cluster served ",
      engine::GroupVersionString(gvk.group, gvk.version), " ", gvk.kind,
      ", which the catalog says is ", why, " (emulation ", verdict.emulation,
      "); check the catalog's cluster section (versions, runtimeConfig)"));
}

absl::string_view MismatchReason(api::ObjectApiVerdict::NotServed why) {
  using NotServed = api::ObjectApiVerdict::NotServed;
  return why == NotServed::kRemoved         ? "removed"
         : why == NotServed::kNotIntroduced ? "not_introduced"
                                            : "not_enabled";
}

// The webhook's options: the path's segments, then the query's.
absl::Status ReadOptions(const http::Request& request, UrlVersions* url) {
  absl::string_view rest = request.path;
  absl::ConsumePrefix(&rest, kAdmissionPath);
  absl::ConsumePrefix(&rest, "/");
  if (absl::Status s = ParseUrlPath(rest, url); !s.ok()) return s;
  UrlVersions query;
  if (absl::Status s = ParseUrlVersions(request.query, &query); !s.ok()) {
    return s;
  }
  return MergeUrlVersions(query, url);
}

// The CEL check's time budget per review, from the review's start (a 13 MB
// review of 130 expressions of 100,000 code points took 1.21 s of CPU on the
// light lane). A sanitizer build, 4x to 20x slower, scales it
// (gateway/CMakeLists.txt), so that it answers as the optimized build does.
#ifndef COMPATD_SLOW_BUILD_FACTOR
#define COMPATD_SLOW_BUILD_FACTOR 1
#endif
constexpr absl::Duration kAdmissionCelTime =
    absl::Milliseconds(50 * COMPATD_SLOW_BUILD_FACTOR);

// At most this many CEL warnings per answer (kube-apiserver keeps 4096
// characters of warnings: 10 of 256 leave room for the others).
constexpr size_t kMaxCelWarnings = 10;

// The kinds whose objects carry CEL (manifest/cel_fields.h).
bool CarriesCel(const Gvk& gvk) {
  if (gvk.group == "apiextensions.k8s.io") {
    return gvk.kind == "CustomResourceDefinition";
  }
  return gvk.group == "admissionregistration.k8s.io" &&
         (gvk.kind == "ValidatingAdmissionPolicy" ||
          gvk.kind == "MutatingAdmissionPolicy" ||
          gvk.kind == "ValidatingWebhookConfiguration" ||
          gvk.kind == "MutatingWebhookConfiguration");
}

// The versions whose rollback floor a stored expression must survive: the
// cluster's upgrade target, else the versions the review is checked at.
absl::StatusOr<engine::EffectiveVersions> CelVersions(
    const runtime::ServingLine& line, const UrlVersions& url) {
  const auto* answers =
      static_cast<const api::CatalogAnswers*>(line.derived.get());
  if (answers != nullptr && answers->target.present &&
      answers->target.status.ok()) {
    return answers->target.versions;
  }
  return engine::ResolveEffectiveVersions(*line.catalog, url.Query());
}

// CREATE and UPDATE of an object with CEL: each new expression that a
// rollback down to the min-compatibility version (of the upgrade target)
// could not read back. kube-apiserver compiles what it reads from storage in
// StoredExpressions: after such a rollback, the policy or the CRD's writes
// fail. A warning, or (enforce) the denial.
void CheckCel(const http::Request& request, const Review& review,
              const Gvk& gvk, const runtime::ServingLine& line,
              const UrlVersions& url, absl::Time started, bool* allowed,
              std::string* message, std::vector<std::string>* warnings) {
  if ((review.operation != "CREATE" && review.operation != "UPDATE") ||
      review.object.raw_size == 0 || !CarriesCel(gvk)) {
    return;
  }
  absl::StatusOr<engine::EffectiveVersions> versions = CelVersions(line, url);
  if (!versions.ok()) return;  // the API check above reports bad versions
  const absl::string_view body = request.body;
  const absl::string_view old_object =
      review.operation == "UPDATE" && review.old_object.raw_size > 0
          ? body.substr(review.old_object.raw_begin, review.old_object.raw_size)
          : absl::string_view();
  // On the light lane, on kube-apiserver's request path: a time budget from
  // the review's start (its reading counts), past which the rest is not
  // read and the review says so.
  bool stopped = false;
  std::vector<std::string> found_all;
  {
    base::ScopedWorkBudget budget(started + kAdmissionCelTime, nullptr);
    found_all = api::CelNotReadableAfterRollback(
        body.substr(review.object.raw_begin, review.object.raw_size),
        old_object, versions->binary, versions->min_compatibility,
        kMaxCelWarnings, &stopped);
  }
  if (stopped) {
    // Not a finding: never a denial, even in enforce mode (as a webhook's
    // timeout under failurePolicy: Ignore).
    warnings->push_back(
        absl::StrCat("compatd: the CEL check stopped after its time budget (",
                     absl::FormatDuration(kAdmissionCelTime),
                     "); the object's other expressions were not checked"));
  }
  for (const std::string& found : found_all) {
    std::string text = Bounded(absl::StrCat("compatd: ", found));
    if (url.mode == "enforce" && *allowed) {
      *allowed = false;
      *message = std::move(text);
    } else {
      warnings->push_back(std::move(text));
    }
  }
}

}  // namespace

void ServeAdmission(const runtime::ServingSnapshot* snapshot,
                    const runtime::ServiceMetrics* metrics,
                    const http::Request& request, http::Response* response) {
  auto fail = [response](const absl::Status& status) {
    response->status = HttpStatusOf(status.code());
    response->body = StatusJson(status);
  };
  const absl::Time started = absl::Now();
  UrlVersions url;
  if (absl::Status s = ReadOptions(request, &url); !s.ok()) return fail(s);
  Review review;
  if (absl::Status s = ReadReview(request.body, &review); !s.ok()) {
    return fail(s);
  }
  if (snapshot == nullptr) {
    return fail(absl::UnavailableError(
        "no catalog is loaded yet; the webhook's failurePolicy decides"));
  }
  // The URL's binary version picks the release line (none: the cluster's);
  // every fact below is that line's.
  absl::StatusOr<const runtime::ServingLine*> line =
      snapshot->Line(url.binary_version, "binaryVersion");
  if (!line.ok()) return fail(line.status());
  const engine::Catalog& catalog = *(*line)->catalog;
  if (absl::Status s = ResolvePathGates(catalog, &url); !s.ok()) {
    return fail(s);
  }
  std::vector<std::string> warnings;
  const Gvk gvk = ObjectGvk(review, catalog);
  if (const std::string dropped = DroppedStoredVersion(review, gvk);
      !dropped.empty()) {
    response->body =
        Answer(review.uid, false, absl::StrCat("compatd: ", dropped), warnings);
    return;
  }
  if (review.operation == "DELETE" || review.operation == "CONNECT" ||
      !gvk.set()) {
    response->body = Answer(review.uid, true, "", warnings);
    return;
  }
  absl::StatusOr<api::ObjectApiVerdict> verdict = api::CheckObjectApi(
      **line, url.Query(), gvk.group, gvk.version, gvk.kind);
  if (!verdict.ok()) return fail(verdict.status());
  using State = api::ObjectApiVerdict::State;
  // kube-apiserver sent the review, so it serves the API: a catalog that
  // says otherwise is reported, never turned into a denial.
  if (verdict->state == State::kNotServed) {
    warnings.push_back(MismatchWarning(gvk, *verdict));
    if (metrics != nullptr) {
      metrics->RecordAdmissionMismatch(MismatchReason(verdict->not_served));
    }
  } else if (verdict->state == State::kDeprecated) {
    warnings.push_back(DeprecationWarning(gvk, *verdict));
  }
  bool allowed = true;
  std::string message;
  if (verdict->target_not_served) {
    if (url.mode == "enforce") {
      allowed = false;
      message = TargetWarning(gvk, *verdict);
    } else {
      warnings.push_back(TargetWarning(gvk, *verdict));
    }
  }
  CheckCel(request, review, gvk, **line, url, started, &allowed, &message,
           &warnings);
  // An answer from pre-release data says so, beside what it says.
  if (catalog.exactness == engine::Exactness::kProvisional &&
      (!warnings.empty() || !allowed)) {
    warnings.push_back(Bounded(absl::StrCat(
        "compatd: PROVISIONAL data for kube-apiserver ",
        catalog.binary_version.ToString(), ": ", catalog.exactness_reason)));
  }
  response->body = Answer(review.uid, allowed, message, warnings);
}

}  // namespace compatd::gateway
