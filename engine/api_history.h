#pragma once

// Is a group/version/kind served at a release, by the catalog's API history
// (apiHistory) alone? The rule a manifest scan applies to releases outside
// the binary's emulation window (inside it, kube-apiserver's own start-up
// decides: api/object_check.h), and to kinds the catalog no longer serves.
//
// At release T, for one history entry, the first that holds:
//   1. introduced > T                 not yet introduced
//   2. removed <= T                   removed (prerelease-lifecycle-gen's
//                                     APILifecycleRemoved: kube-apiserver
//                                     stops serving it)
//   3. typesDeleted <= T              removed: k8s.io/api of T has no Go
//                                     types, so no server of T can serve it
//   4. an alpha version               not served by default (alpha APIs are
//                                     always off by default)
//   5. a beta version, T >= 1.24, not enabledByDefault
//                                     not served by default: from 1.24 new
//                                     beta APIs are off by default (KEP-3136,
//                                     kubernetes pkg/controlplane
//                                     DefaultAPIResourceConfigSource); betas
//                                     served before stayed on (the catalog
//                                     marks them enabledByDefault)
//   6. deprecated <= T                deprecated (still served)
//   7. otherwise                      served
// Rules: docs/kubernetes-rules.md#api-history. Pure and thread-safe.

#include <cstdint>
#include <string>

#include "engine/catalog.h"
#include "engine/version.h"

namespace compatd::engine {

enum class HistoryState {
  kServed,
  kDeprecated,
  kNotServedByDefault,  // alpha, or beta off by default: --runtime-config
  kRemoved,
  kNotYetIntroduced,
};

// "served", "deprecated", "not-served-by-default", "removed",
// "not-yet-introduced".
absl::string_view HistoryStateName(HistoryState state);

// The release from which new beta APIs are off by default (KEP-3136).
inline constexpr uint64_t kBetaOffByDefaultMinor = 24;

struct HistoryVerdict {
  HistoryState state = HistoryState::kServed;
  // The release of the event that decided ("1.16"); empty when served.
  std::string release;
  // One sentence: which rule, which release, and the replacement.
  std::string message;
};

// `release` is compared by major.minor.
HistoryVerdict DecideFromHistory(const APIHistoryEntry& entry,
                                 const Version& release);

// "apps/v1 Deployment" for the entry's replacement, or "" when it has none.
std::string HistoryReplacement(const APIHistoryEntry& entry);

}  // namespace compatd::engine
