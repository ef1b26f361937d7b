#include "gateway/query.h"

#include "absl/strings/str_cat.h"
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
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const size_t equals = pair.find('=');
    std::string key;
    std::string value;
    if (!PercentDecode(pair.substr(0, equals), &key) ||
        (equals != absl::string_view::npos &&
         !PercentDecode(pair.substr(equals + 1), &value))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "query parameter ", JsonQuote(pair), ": bad percent-escape"));
    }
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
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown query parameter ", JsonQuote(key),
          "; accepted: emulationVersion, binaryVersion, "
          "minCompatibilityVersion, runtimeConfig, featureGates, mode"));
    }
  }
  return absl::OkStatus();
}

}  // namespace compatd::gateway
