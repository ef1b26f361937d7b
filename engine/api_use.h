#pragma once

// Is a request to group/version/resource at risk, by the catalog? The rule
// applied to every API call kube-apiserver's audit webhook reports
// (gateway/audit.h), each point judged by engine::JudgeApi (the line's
// start-up there, then its API history: engine/api_verdict.h), over every
// resource of the line's apis and apiHistory: a call is at risk when the API
// it names is
//
//   not-served            not served at the cluster's versions now (the call
//                         was answered 404),
//   removed-at-target     removed by the catalog's cluster.upgradeTarget
//                         (its emulation version reaches the removal),
//   not-served-at-target  not served there for another reason (off by
//                         default, or the target's --runtime-config),
//   not-served-at-rollback
//                         not served at the rollback floor: the cluster's
//                         min-compatibility version as emulation version
//                         (KEP-4330: emulation may be rolled back that far),
//   deprecated            served now, and deprecated at the emulation version
//
// the first that holds, in that order (most severe first). Served sets are
// engine::ListServedAPIs' at each of those versions (the cluster section's
// --runtime-config now and at the floor, the target's own at the target), so
// the verdict is kube-apiserver's start-up decision for the cluster's binary
// line, not only the apiserver's k8s.io/deprecated annotation. APIs the
// catalog does not know (custom and aggregated resources) have no verdict.
// Pure and thread-safe once built; owns what it holds.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "engine/catalog.h"
#include "engine/effective_version.h"

namespace compatd::engine {

enum class ApiUseVerdict {
  kNotServed = 0,
  kRemovedAtTarget = 1,
  kNotServedAtTarget = 2,
  kNotServedAtRollback = 3,
  kDeprecated = 4,
  // A successful call (2xx) to an API the catalog says is not served now:
  // kube-apiserver served it, so the catalog (its versions or runtimeConfig)
  // does not match the cluster, as the admission webhook says of such an
  // object. Not a risk of the client's.
  kCatalogMismatch = 5,
};
inline constexpr size_t kApiUseVerdictCount = 6;

// "not_served", "removed_at_target", "not_served_at_target",
// "not_served_at_rollback", "deprecated", "catalog_mismatch" (the metric's
// verdict label).
absl::string_view ApiUseVerdictName(ApiUseVerdict verdict);

struct ApiUseJudgement {
  ApiUseVerdict verdict = ApiUseVerdict::kDeprecated;
  std::string kind;         // "PodDisruptionBudget"
  std::string release;      // the release the verdict is about ("1.37")
  std::string replacement;  // "policy/v1", when the catalog names one
  // One sentence: "policy/v1beta1 PodDisruptionBudget is removed in
  // Kubernetes 1.25: not served at the upgrade target (emulation 1.37); use
  // policy/v1 PodDisruptionBudget instead".
  std::string message;
};

class ApiUseIndex final {
 public:
  // Judges every API resource of `catalog` at the cluster section's versions,
  // its upgrade target (if any) and its rollback floor. The target is judged
  // by `target_catalog`, the catalog of the line its binary version selects
  // (null: `catalog`, a target on the cluster's own binary). Versions or
  // flags that do not resolve leave that point out (the catalog's loader and
  // the plan report them); an index is always built.
  static ApiUseIndex Build(const Catalog& catalog,
                           const Catalog* target_catalog = nullptr);

  // The judgement of a call to group/version/resource (group "" for core),
  // or null: served without risk, or not an API the catalog knows.
  const ApiUseJudgement* Find(absl::string_view group,
                              absl::string_view version,
                              absl::string_view resource) const;

  // Find for one audited call answered `code` (responseStatus.code; 0 when
  // absent): a not-served API's successful call (2xx) is a catalog mismatch
  // (kCatalogMismatch), not a call that fails now.
  const ApiUseJudgement* FindCall(absl::string_view group,
                                  absl::string_view version,
                                  absl::string_view resource,
                                  int64_t code) const;

  // Whether the catalog has group/version/resource at all (at risk or not).
  bool Knows(absl::string_view group, absl::string_view version,
             absl::string_view resource) const;

  const EffectiveVersions& now() const { return now_; }
  const std::optional<EffectiveVersions>& target() const { return target_; }
  size_t size() const { return at_risk_.size(); }

 private:
  EffectiveVersions now_;
  std::optional<EffectiveVersions> target_;
  // "group/version/resource" -> judgement, for the calls at risk only.
  absl::flat_hash_map<std::string, ApiUseJudgement> at_risk_;
  // The same key -> the catalog-mismatch judgement, for the APIs not served
  // now.
  absl::flat_hash_map<std::string, ApiUseJudgement> mismatch_;
  absl::flat_hash_set<std::string> known_;
};

}  // namespace compatd::engine
