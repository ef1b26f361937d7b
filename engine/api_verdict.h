#pragma once

// Is a group/version/kind served, deprecated, removed or unknown at a version
// of a release line? The one judgement every surface applies (issue 35): the
// manifest scan (api/scan.h), the admission webhook and the Gatekeeper
// provider (api/object_check.h), the audit view (engine/api_use.h), the
// upgrade plan's API items and the status page's API view.
//
// From the line's own data, the first that holds:
//   1. The line's start-up knows the kind (the catalog's `apis`) and the
//      caller has the start-up at `at` (engine::ListServedAPIs at emulation
//      `at`): kube-apiserver's decision. Served: deprecated when the
//      lifecycle's deprecation is at or before `at`, else served. Not served:
//      removed when the removal (or the deletion of the types) is at or before
//      `at`, not yet introduced when the introduction is after it, else not
//      served (off by default, or by --runtime-config).
//   2. The line's API history (the catalog's `apiHistory`, kubernetes/api's
//      lifecycles at every release) has the kind: engine::DecideFromHistory
//      at `at` (engine/api_history.h). This covers the kinds no start-up of
//      the line installs: the ones removed before the line (extensions/v1beta1
//      Ingress on 1.31-1.35), and the built-ins served by apiextensions-
//      apiserver and kube-aggregator (CustomResourceDefinition, APIService)
//      or as subresources (Eviction).
//   3. Otherwise unknown: not a built-in kind of the line (a custom resource,
//      an aggregated API).
// The lifecycle values (introduced, deprecated, removed, replacement) are the
// start-up's (`apis`), each missing one filled from the history. Rules:
// docs/kubernetes-rules.md#one-api-verdict. Pure and thread-safe.

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"
#include "engine/version.h"

namespace compatd::engine {

enum class ApiState {
  kServed,
  kDeprecated,  // served, and deprecated at the version
  kNotServed,   // known, not served: off by default or by --runtime-config
  kRemoved,     // removed (or its types deleted) at or before the version
  kNotYetIntroduced,
  kUnknown,  // not a built-in kind of the line
};

// "served", "deprecated", "not-served", "removed", "not-yet-introduced",
// "unknown".
absl::string_view ApiStateName(ApiState state);

// Which part of the line decided.
enum class ApiSource { kStartUp, kHistory, kNone };

// "group/version/resource" ("" group: "/v1/pods"), the key of a served set.
std::string ServedApiKey(absl::string_view group, absl::string_view version,
                         absl::string_view resource);

// A line's start-up at one set of versions: the resources kube-apiserver
// serves there (ServedApiKey of each), as engine::ListServedAPIs lists them.
// Borrowed: the set must outlive every JudgeApi call given it.
struct ApiStartUp {
  EffectiveVersions versions;
  const absl::flat_hash_set<std::string>* served = nullptr;
};

struct ApiVerdict {
  ApiState state = ApiState::kUnknown;
  ApiSource source = ApiSource::kNone;
  std::string kind;
  std::string resource;  // plural, when known
  std::string at;        // the version judged at: "1.33"
  // Lifecycle, "1.x" or empty.
  std::string introduced;
  std::string deprecated;
  std::string removed;           // the removal, else the deletion of the types
  std::string replacement;       // "group/version", or empty
  std::string replacement_kind;  // the kind there (set with replacement)
  // One sentence naming the rule and the release.
  std::string message;

  // Served (deprecated or not).
  bool served() const {
    return state == ApiState::kServed || state == ApiState::kDeprecated;
  }
  // Known to the line, and not served.
  bool not_served() const {
    return state == ApiState::kNotServed || state == ApiState::kRemoved ||
           state == ApiState::kNotYetIntroduced;
  }
};

// `line`: the catalog of the release line judged by. `startup`: that line's
// start-up at `at` (null, or at another emulation version: the history alone
// decides, as for a version outside the line's emulation window). `group`
// "" for the core group. `at` is compared by major.minor.
ApiVerdict JudgeApi(const Catalog& line, const ApiStartUp* startup,
                    const Version& at, absl::string_view group,
                    absl::string_view version, absl::string_view kind);

// The same question by resource (a plural, as audit events and plans name
// it): its kind from the line's `apis`, else its history; unknown when
// neither has it.
ApiVerdict JudgeApiResource(const Catalog& line, const ApiStartUp* startup,
                            const Version& at, absl::string_view group,
                            absl::string_view version,
                            absl::string_view resource);

}  // namespace compatd::engine
