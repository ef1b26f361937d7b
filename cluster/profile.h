#pragma once

// The cluster profile: what the cluster's kube-apiserver runs (its binary with
// patch, its KEP-4330 flags, --feature-gates and --runtime-config in
// kube-apiserver's own syntax) and the upgrade target in the same shape, with
// where each value came from. Configuration, not facts: catalogs hold
// Kubernetes' facts (docs/cluster-profile.md).
//
// Readers (ReadClusterProfile detects the input from apiVersion/kind):
//   - compatd's own profile YAML (no apiVersion; strict keys);
//   - a kube-apiserver static pod manifest (v1 Pod, the container named
//   kube-apiserver; flags in
//     command and args, "--flag=value" and "--flag value"; the binary from the
//     image tag);
//   - kubeadm's ClusterConfiguration (kubeadm.k8s.io/v1beta3:
//   apiServer.extraArgs a map;
//     v1beta4: a list of {name, value}), alone, among other kubeadm documents,
//     or inside the kubeadm-config ConfigMap (data.ClusterConfiguration);
//   - Cluster API's KubeadmControlPlane (spec.version, spec.kubeadmConfigSpec
//     .clusterConfiguration, extraArgs in either form);
//   - /version JSON (gitVersion; emulationMajor/Minor,
//   minCompatibilityMajor/Minor since 1.33).
//
// A value kube-apiserver itself would refuse at start-up (malformed
// --feature-gates, an emulated version outside the binary's range) is a finding
// of the profile, not an error: the profile is what the cluster's files say.
// Input compatd cannot read at all (bad YAML, an unknown key in its own format,
// no kube-apiserver container, an unknown apiVersion, an image tag that is not
// a version, a target older than the cluster) is INVALID_ARGUMENT "FILE:LINE:
// field F: what was wrong; accepted: ...".

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace compatd::cluster {

// One value and where it came from ("kube-apiserver.yaml:12
// (--feature-gates)").
struct ProfileValue {
  std::string value;  // as given (kube-apiserver's syntax); empty = not given
  std::string origin;
  bool given() const { return !origin.empty(); }
};

// What one kube-apiserver runs (or will run): the VersionContext of every
// request's defaults.
struct ApiServerSettings {
  ProfileValue binary_version;  // "1.35.2" (with patch where the input had one)
  ProfileValue emulation_version;
  ProfileValue min_compatibility_version;
  ProfileValue feature_gates;                 // --feature-gates syntax
  ProfileValue runtime_config;                // --runtime-config syntax
  ProfileValue emulation_forward_compatible;  // "true" / "false"
  ProfileValue runtime_config_emulation_forward_compatible;  // "true" / "false"
};

// A kube-apiserver flag compatd does not model, kept verbatim.
struct UnmodelledFlag {
  std::string flag;  // "--audit-log-path=/var/log/audit.log" as given
  std::string origin;
};

struct ClusterProfile {
  std::string source;      // the file (or "--cluster-version") it came from
  std::string input_kind;  // "compatd cluster profile", "kube-apiserver static
                           // pod", ...
  ApiServerSettings current;
  std::optional<ApiServerSettings> upgrade_target;
  std::vector<UnmodelledFlag> unmodelled_flags;
  // What kube-apiserver would refuse at start-up, one sentence each with its
  // origin.
  std::vector<std::string> findings;
};

struct ReadOptions {
  // --cluster-version: the binary when the input does not say (a digest-only
  // image) or to override it. Empty = from the input.
  std::string binary_version;
  // --upgrade-target: "1.36" or "1.36.1". Empty = from the input (compatd's own
  // format only).
  std::string upgrade_target;
};

// Reads `text` (the contents of `source`). See the file comment.
absl::StatusOr<ClusterProfile> ReadClusterProfile(
    absl::string_view text, absl::string_view source,
    const ReadOptions& options = {});

// The profile of the flags alone (--cluster-version and --upgrade-target, no
// file).
absl::StatusOr<ClusterProfile> ProfileFromFlags(const ReadOptions& options);

// The settings as a compatd.v1.VersionContext in proto3 JSON (only the given
// fields), for `compatd plan --from-manifest`.
std::string VersionContextJson(const ApiServerSettings& settings);

// The profile as `compatd cluster show` prints it: every value with its origin,
// the unmodelled flags and the findings.
std::string FormatClusterProfile(const ClusterProfile& profile);

}  // namespace compatd::cluster
