#include "gateway/url_query.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gateway/json.h"

namespace compatd::gateway {

engine::VersionQuery UrlVersions::Query() const {
  engine::VersionQuery query;
  query.binary_version = binary_version;
  query.emulation_version = emulation_version;
  query.min_compatibility_version = min_compatibility_version;
  query.runtime_config = runtime_config;
  query.feature_gates = feature_gates;
  return query;
}

absl::Status ParseUrlVersions(absl::string_view query, UrlVersions* out) {
  absl::StatusOr<std::vector<QueryPair>> pairs = SplitQuery(query);
  if (!pairs.ok()) return pairs.status();
  for (const auto& [key, value, raw] : *pairs) {
    if (key == "emulationVersion") {
      out->emulation_version = value;
    } else if (key == "binaryVersion") {
      out->binary_version = value;
    } else if (key == "minCompatibilityVersion") {
      out->min_compatibility_version = value;
    } else if (key == "runtimeConfig") {
      out->runtime_config = value;
    } else if (key == "featureGates") {
      out->feature_gates = value;
    } else if (key == "timeout") {
      // kube-apiserver adds ?timeout=<the webhook's timeoutSeconds>s to every
      // call (client-go's rest.Request.URL): accepted and ignored, as the
      // answer never waits.
    } else if (key == "mode") {
      if (value != "warn" && value != "enforce") {
        return absl::InvalidArgumentError(
            absl::StrCat("query parameter mode=", JsonQuote(value),
                         ": expected warn (the default) or enforce"));
      }
      out->mode = value;
      out->mode_set = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown query parameter ", JsonQuote(key),
          "; accepted: emulationVersion, binaryVersion, "
          "minCompatibilityVersion, runtimeConfig, featureGates, mode"));
    }
  }
  return absl::OkStatus();
}

namespace {

constexpr absl::string_view kPathGrammar =
    "expected warn, enforce, emulation-MAJOR.MINOR, "
    "min-compatibility-MAJOR.MINOR, binary-MAJOR.MINOR[.PATCH], "
    "enable-api.VERSION[.GROUP], disable-api.VERSION[.GROUP], "
    "enable-gate.NAME or disable-gate.NAME (docs/admission.md)";

absl::Status Twice(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("the webhook URL sets ", what,
                   " twice (in its path or its query); set it once"));
}

// Sets `*field` from a path segment's value, refusing a second setting.
absl::Status SetOnce(absl::string_view what, absl::string_view value,
                     std::string* field) {
  if (!field->empty()) return Twice(what);
  *field = std::string(value);
  return absl::OkStatus();
}

// "1.35", "1.36.2": digits and dots, as a version segment must be.
bool LooksLikeVersion(absl::string_view text) {
  if (text.empty() || text.front() == '.' || text.back() == '.') return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '.') {
      return false;
    }
  }
  return true;
}

absl::Status ParseSegment(absl::string_view segment, UrlVersions* out) {
  if (segment == "warn" || segment == "enforce") {
    if (out->mode_set) return Twice("the mode (warn or enforce)");
    out->mode = std::string(segment);
    out->mode_set = true;
    return absl::OkStatus();
  }
  struct VersionPrefix {
    absl::string_view prefix;
    absl::string_view what;
    std::string UrlVersions::*field;
  };
  const VersionPrefix versions[] = {
      {"emulation-", "the emulation version", &UrlVersions::emulation_version},
      {"min-compatibility-", "the min-compatibility version",
       &UrlVersions::min_compatibility_version},
      {"binary-", "the binary version", &UrlVersions::binary_version},
  };
  for (const VersionPrefix& v : versions) {
    absl::string_view value = segment;
    if (!absl::ConsumePrefix(&value, v.prefix)) continue;
    if (!LooksLikeVersion(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("webhook path segment \"", segment, "\": ", v.prefix,
                       " takes a version like 1.35; ", kPathGrammar));
    }
    return SetOnce(v.what, value, &(out->*v.field));
  }
  for (const bool enable : {true, false}) {
    absl::string_view value = segment;
    if (absl::ConsumePrefix(&value, enable ? "enable-api." : "disable-api.")) {
      // VERSION[.GROUP]: the version is the first label.
      const size_t dot = value.find('.');
      const absl::string_view version = value.substr(0, dot);
      const absl::string_view group =
          dot == absl::string_view::npos ? "" : value.substr(dot + 1);
      if (version.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "webhook path segment \"", segment, "\": ", kPathGrammar));
      }
      absl::StrAppend(
          &out->runtime_config, out->runtime_config.empty() ? "" : ",", group,
          group.empty() ? "" : "/", version, enable ? "=true" : "=false");
      return absl::OkStatus();
    }
    if (absl::ConsumePrefix(&value,
                            enable ? "enable-gate." : "disable-gate.")) {
      if (value.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "webhook path segment \"", segment, "\": ", kPathGrammar));
      }
      for (const auto& [name, unused] : out->path_gates) {
        if (name == value) return Twice(absl::StrCat("gate ", value));
      }
      out->path_gates.emplace_back(std::string(value), enable);
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("webhook path segment \"", segment, "\": ", kPathGrammar));
}

}  // namespace

absl::Status ParseUrlPath(absl::string_view segments, UrlVersions* out) {
  absl::ConsumeSuffix(&segments, "/");
  if (segments.empty()) return absl::OkStatus();
  for (absl::string_view segment : absl::StrSplit(segments, '/')) {
    if (segment.empty()) {
      return absl::InvalidArgumentError(
          "the webhook path has an empty segment (\"//\"); kube-apiserver "
          "refuses one too");
    }
    if (absl::Status s = ParseSegment(segment, out); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status MergeUrlVersions(const UrlVersions& query, UrlVersions* path) {
  if (query.mode_set) {
    if (path->mode_set) return Twice("the mode (warn or enforce)");
    path->mode = query.mode;
    path->mode_set = true;
  }
  const std::pair<absl::string_view, std::string UrlVersions::*> fields[] = {
      {"the emulation version", &UrlVersions::emulation_version},
      {"the min-compatibility version",
       &UrlVersions::min_compatibility_version},
      {"the binary version", &UrlVersions::binary_version},
      {"the runtime config", &UrlVersions::runtime_config},
  };
  for (const auto& [what, field] : fields) {
    if ((query.*field).empty()) continue;
    if (absl::Status s = SetOnce(what, query.*field, &(path->*field));
        !s.ok()) {
      return s;
    }
  }
  if (!query.feature_gates.empty()) {
    if (!path->path_gates.empty()) return Twice("the feature gates");
    path->feature_gates = query.feature_gates;
  }
  return absl::OkStatus();
}

absl::Status ResolvePathGates(const engine::Catalog& catalog,
                              UrlVersions* out) {
  std::vector<std::string> gates;
  for (const auto& [lower, enabled] : out->path_gates) {
    const engine::Feature* found = nullptr;
    for (const engine::Feature& feature : catalog.features) {
      if (absl::EqualsIgnoreCase(feature.name, lower)) {
        found = &feature;
        break;
      }
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "webhook path segment \"", enabled ? "enable" : "disable", "-gate.",
          lower,
          "\": the catalog has no feature gate of that name (in any "
          "case)"));
    }
    gates.push_back(absl::StrCat(found->name, enabled ? "=true" : "=false"));
  }
  if (!gates.empty()) out->feature_gates = absl::StrJoin(gates, ",");
  return absl::OkStatus();
}

}  // namespace compatd::gateway
