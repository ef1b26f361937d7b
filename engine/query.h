#pragma once

// What a question is asked at: the request's VersionContext, as the engine sees
// it. Empty strings and absent optionals take the catalog's cluster section,
// then Kubernetes' default. The views point into the request; a VersionQuery
// lives no longer than the request.

#include <optional>

#include "absl/strings/string_view.h"

namespace compatd::engine {

struct VersionQuery {
  absl::string_view binary_version;
  absl::string_view emulation_version;
  absl::string_view min_compatibility_version;
  absl::string_view feature_gates;   // --feature-gates syntax
  absl::string_view runtime_config;  // --runtime-config syntax
  std::optional<bool> emulation_forward_compatible;
  std::optional<bool> runtime_config_emulation_forward_compatible;
};

}  // namespace compatd::engine
