#pragma once

// A cluster profile (cluster/profile.h) as the engine's ClusterSettings: the
// defaults of every request a server answers for that cluster. The server
// puts them in place of the cluster section of the profile's release line
// (runtime/catalog_pipeline.h, SetCluster):
//
//   absl::StatusOr<engine::ClusterSettings> s = ToClusterSettings(profile);
//   pipeline.SetCluster(std::make_shared<const engine::ClusterSettings>(*s));
//
// The current settings must be flags kube-apiserver starts with: a
// --feature-gates or --runtime-config value it refuses (a finding of the
// profile) is INVALID_ARGUMENT naming its origin, since no cluster can run
// with it. The upgrade target's flags are kept as written: what the target
// binary refuses is a blocker of the plan to it, not an error.

#include "absl/status/statusor.h"
#include "cluster/profile.h"
#include "engine/catalog.h"

namespace compatd::cluster {

absl::StatusOr<engine::ClusterSettings> ToClusterSettings(
    const ClusterProfile& profile);

}  // namespace compatd::cluster
