#include "cluster/cluster_settings.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "engine/feature_gate_flags.h"
#include "engine/runtime_config.h"
#include "engine/version.h"

namespace compatd::cluster {
namespace {

// "kube-apiserver.yaml:14 (--emulated-version)" -> the origin as written.
std::string OriginOf(const ProfileValue& value) {
  return value.origin.empty() ? std::string("cluster profile") : value.origin;
}

absl::StatusOr<std::optional<bool>> FlagBool(const ProfileValue& value) {
  if (!value.given()) return std::optional<bool>();
  absl::StatusOr<bool> parsed = engine::ParseGoBool(value.value);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        OriginOf(value), ": \"", value.value, "\": ", parsed.status().message(),
        "; accepted: true or false (Go's strconv.ParseBool)"));
  }
  return std::optional<bool>(*parsed);
}

// kube-apiserver's version as `kubectl version` and image tags write it:
// MAJOR.MINOR or a semantic version (pre-release and build allowed), with an
// optional "v". Version::Parse alone is too lenient here: it reads
// "1.35.x" as 1.35 (apimachinery's generic parse ignores the rest).
absl::StatusOr<engine::Version> ParseBinary(absl::string_view text) {
  absl::StatusOr<engine::Version> semantic =
      engine::Version::ParseSemantic(text);
  if (semantic.ok()) return semantic;
  absl::string_view rest = absl::StripPrefix(text, "v");
  const size_t dot = rest.find('.');
  const auto digits = [](absl::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return c >= '0' && c <= '9';
    });
  };
  if (dot == absl::string_view::npos || !digits(rest.substr(0, dot)) ||
      !digits(rest.substr(dot + 1))) {
    return absl::InvalidArgumentError("not MAJOR.MINOR or MAJOR.MINOR.PATCH");
  }
  return engine::Version::ParseGeneric(text);
}

absl::StatusOr<engine::UpgradeTarget> TargetOf(const ApiServerSettings& s) {
  engine::UpgradeTarget target;
  target.binary_version = s.binary_version.value;
  target.emulation_version = s.emulation_version.value;
  target.min_compatibility_version = s.min_compatibility_version.value;
  target.feature_gates = s.feature_gates.value;
  target.runtime_config = s.runtime_config.value;
  absl::StatusOr<std::optional<bool>> forward =
      FlagBool(s.emulation_forward_compatible);
  if (!forward.ok()) return forward.status();
  target.emulation_forward_compatible = *forward;
  absl::StatusOr<std::optional<bool>> rc_forward =
      FlagBool(s.runtime_config_emulation_forward_compatible);
  if (!rc_forward.ok()) return rc_forward.status();
  target.runtime_config_emulation_forward_compatible = *rc_forward;
  return target;
}

}  // namespace

absl::StatusOr<engine::ClusterSettings> ToClusterSettings(
    const ClusterProfile& profile) {
  const ApiServerSettings& s = profile.current;
  engine::ClusterSettings out;
  absl::StatusOr<engine::Version> binary = ParseBinary(s.binary_version.value);
  if (!binary.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        OriginOf(s.binary_version), ": binary version \"",
        s.binary_version.value, "\": ", binary.status().message(),
        "; accepted: a kube-apiserver version such as 1.35 or 1.35.2"));
  }
  out.binary = *std::move(binary);
  out.source = profile.source;
  out.binary_origin = OriginOf(s.binary_version);
  out.emulation_version = s.emulation_version.value;
  out.emulation_origin = s.emulation_version.given()
                             ? OriginOf(s.emulation_version)
                             : std::string();
  out.min_compatibility_version = s.min_compatibility_version.value;
  out.min_compatibility_origin = s.min_compatibility_version.given()
                                     ? OriginOf(s.min_compatibility_version)
                                     : std::string();
  if (s.feature_gates.given()) {
    absl::StatusOr<std::vector<engine::FeatureGateFlag>> gates =
        engine::ParseFeatureGates(s.feature_gates.value);
    if (!gates.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          OriginOf(s.feature_gates),
          ": kube-apiserver refuses --feature-gates=\"", s.feature_gates.value,
          "\" at start-up: ", gates.status().message(),
          "; accepted: NAME=true|false, comma-separated"));
    }
    out.feature_gates_origin = OriginOf(s.feature_gates);
    for (const engine::FeatureGateFlag& gate : *gates) {
      out.feature_gates.emplace_back(std::string(gate.name), gate.value);
    }
  }
  if (s.runtime_config.given()) {
    for (auto& [key, value] :
         engine::ParseRuntimeConfigFlag(s.runtime_config.value)) {
      out.runtime_config.emplace_back(key, value);
    }
    std::sort(out.runtime_config.begin(), out.runtime_config.end());
  }
  absl::StatusOr<std::optional<bool>> forward =
      FlagBool(s.emulation_forward_compatible);
  if (!forward.ok()) return forward.status();
  out.emulation_forward_compatible = *forward;
  absl::StatusOr<std::optional<bool>> rc_forward =
      FlagBool(s.runtime_config_emulation_forward_compatible);
  if (!rc_forward.ok()) return rc_forward.status();
  out.runtime_config_emulation_forward_compatible = *rc_forward;
  if (profile.upgrade_target.has_value()) {
    absl::StatusOr<engine::UpgradeTarget> target =
        TargetOf(*profile.upgrade_target);
    if (!target.ok()) return target.status();
    out.upgrade_target = *std::move(target);
  }
  return out;
}

}  // namespace compatd::cluster
