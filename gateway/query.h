#pragma once

// The version parameters a webhook URL or a Gatekeeper key may carry.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "engine/query.h"

namespace compatd::gateway {

struct UrlVersions {
  std::string binary_version;
  std::string emulation_version;
  std::string min_compatibility_version;
  std::string runtime_config;
  std::string feature_gates;
  std::string mode = "warn";

  // Views into this object: keep it alive while the query is used.
  engine::VersionQuery Query() const;
};

// emulationVersion, binaryVersion, minCompatibilityVersion, runtimeConfig,
// featureGates and mode (warn|enforce); timeout (which kube-apiserver adds
// to every webhook call) is ignored. INVALID_ARGUMENT naming an unknown
// parameter or a bad mode.
absl::Status ParseUrlVersions(absl::string_view query, UrlVersions* out);

}  // namespace compatd::gateway
