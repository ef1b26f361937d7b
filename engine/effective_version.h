#pragma once

// Effective binary / emulation / min-compatibility versions (KEP-4330;
// component-base compatibility/version.go and registry.go;
// KUBERNETES-SEMANTICS.md section 2).

#include "absl/status/statusor.h"
#include "engine/catalog.h"
#include "engine/query.h"
#include "engine/version.h"

namespace compatd::engine {

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

}  // namespace compatd::engine
