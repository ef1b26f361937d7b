#pragma once

// Effective binary / emulation / min-compatibility versions (KEP-4330).
// Follows, by the binary's release line: kubernetes/component-base
// compatibility/version.go and registry.go (v0.33.0 to master) with the kube
// version floor of kubernetes/apiserver pkg/util/compatibility/version.go;
// component-base version/version.go (v0.32.0) for 1.32; apiserver
// pkg/util/version/version.go (v0.31.0) for 1.31
// (docs/kubernetes-rules.md#emulation-version-floor,
// docs/kubernetes-rules.md#min-compatibility-default,
// docs/kubernetes-rules.md#version-flag-syntax).

#include "absl/status/statusor.h"
#include "engine/catalog.h"
#include "engine/query.h"
#include "engine/version.h"

namespace compatd::engine {

// Values only (engine/catalog.h, "Lifetimes").
struct EffectiveVersions {
  Version binary;             // as given (patch and pre-release kept)
  Version emulation;          // major.minor
  Version min_compatibility;  // major.minor
};

// Resolves the query's versions against the catalog's defaults: binary = query
// or catalog binaryVersion; emulation = query, else cluster section, else
// binary major.minor; min-compatibility = query, else cluster section, else
// Kubernetes' default for the emulation version. Validates them as Kubernetes
// does (floors, ranges, no patch in flags). INVALID_ARGUMENT naming the value
// and the accepted range otherwise.
absl::StatusOr<EffectiveVersions> ResolveEffectiveVersions(
    const Catalog& catalog, const VersionQuery& query);

// The floor of both the emulation and the min-compatibility version of a kube
// component from Kubernetes 1.33 on: max(binary.WithPatch(0).SubtractMinor(3),
// 1.31) (apiserver pkg/util/compatibility/version.go
// kubeEffectiveVersionFloors).
Version KubeVersionFloor(const Version& binary);

// component-base compatibility effectiveVersion.Validate with explicit floors:
//   emulation_floor <= emulation <= binary.WithPatch(0)
//   min_compat_floor <= min_compatibility <= emulation
// INVALID_ARGUMENT with Kubernetes' messages ("emulation version 1.29 is not
// between [1.31, 1.33.0]"), both when both fail.
absl::Status ValidateEffectiveVersionRange(const Version& binary,
                                           const Version& emulation,
                                           const Version& min_compatibility,
                                           const Version& emulation_floor,
                                           const Version& min_compat_floor);

// Parses one --emulated-version / --min-compatibility-version value as
// component-base's toVersionMap does: comma-separated items, each "VERSION" or
// "kube=VERSION"; a non-zero patch, a duplicate or another component is an
// error. Returns major.minor. INVALID_ARGUMENT with Kubernetes' message.
absl::StatusOr<Version> ParseVersionFlag(absl::string_view value);

}  // namespace compatd::engine
