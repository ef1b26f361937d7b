#include "engine/api_use.h"

#include <cstring>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/api_availability.h"
#include "engine/api_names.h"
#include "engine/api_verdict.h"
#include "engine/query.h"
#include "engine/upgrade_plan.h"

namespace compatd::engine {
namespace {

using ServedSet = absl::flat_hash_set<std::string>;

// The resources served at `versions` with `query`'s flags, or nullopt when
// they do not resolve.
std::optional<ServedSet> Served(const Catalog& catalog,
                                const EffectiveVersions& versions,
                                const VersionQuery& query) {
  absl::StatusOr<std::vector<ServedGroupVersion>> served =
      ListServedAPIs(catalog, versions, query);
  if (!served.ok()) return std::nullopt;
  ServedSet out;
  for (const ServedGroupVersion& gv : *served) {
    for (const std::string& resource : gv.resources) {
      out.insert(ServedApiKey(gv.group, gv.version, resource));
    }
  }
  return out;
}

std::string Instead(const ApiVerdict& verdict) {
  return verdict.replacement.empty()
             ? std::string()
             : absl::StrCat("; use ", verdict.replacement, " ",
                            verdict.replacement_kind, " instead");
}

// One point the index judges at: a line, its versions and (when they
// resolved) its start-up there.
struct Point {
  const Catalog* line = nullptr;
  EffectiveVersions versions;
  std::optional<ServedSet> served;

  ApiVerdict Judge(const std::string& group, const std::string& version,
                   const std::string& kind) const {
    const ApiStartUp startup{versions, served.has_value() ? &*served : nullptr};
    return JudgeApi(*line, served.has_value() ? &startup : nullptr,
                    versions.emulation, group, version, kind);
  }
};

// Every group/version/resource the line knows (its apis, then its history's
// resources), with its kind: what the index judges.
struct Known {
  std::string group, version, resource, kind;
};
std::vector<Known> KnownResources(const Catalog& catalog) {
  std::vector<Known> out;
  absl::flat_hash_set<std::string> seen;
  for (const APIGroupVersion& gv : catalog.apis) {
    for (const APIResource& r : gv.resources) {
      if (seen.insert(ServedApiKey(gv.group, gv.version, r.resource)).second) {
        out.push_back({gv.group, gv.version, r.resource, r.kind});
      }
    }
  }
  for (const APIHistoryEntry& e : catalog.api_history) {
    if (e.resource.empty()) continue;
    if (seen.insert(ServedApiKey(e.group, e.version, e.resource)).second) {
      out.push_back({e.group, e.version, e.resource, e.kind});
    }
  }
  return out;
}

// The judgement of an API kube-apiserver answered with success although the
// catalog says it is not served now: the catalog is wrong, as the admission
// webhook says of such an object.
ApiUseJudgement Mismatch(const Known& api, const ApiVerdict& now) {
  ApiUseJudgement judgement;
  judgement.verdict = ApiUseVerdict::kCatalogMismatch;
  judgement.kind = api.kind;
  judgement.release = now.at;
  judgement.replacement = now.replacement;
  const absl::string_view why =
      now.state == ApiState::kRemoved            ? "removed there"
      : now.state == ApiState::kNotYetIntroduced ? "not yet introduced there"
                                                 : "not enabled there";
  judgement.message =
      absl::StrCat("catalog mismatch: the cluster served ",
                   GroupVersionString(api.group, api.version), " ", api.kind,
                   " (a successful call), which the catalog says is ", why,
                   " (emulation ", now.at,
                   "); check the catalog's cluster section (versions, "
                   "runtimeConfig)");
  return judgement;
}

}  // namespace

absl::string_view ApiUseVerdictName(ApiUseVerdict verdict) {
  switch (verdict) {
    case ApiUseVerdict::kNotServed:
      return "not_served";
    case ApiUseVerdict::kRemovedAtTarget:
      return "removed_at_target";
    case ApiUseVerdict::kNotServedAtTarget:
      return "not_served_at_target";
    case ApiUseVerdict::kNotServedAtRollback:
      return "not_served_at_rollback";
    case ApiUseVerdict::kDeprecated:
      return "deprecated";
    case ApiUseVerdict::kCatalogMismatch:
      return "catalog_mismatch";
  }
  return "deprecated";
}

ApiUseIndex ApiUseIndex::Build(const Catalog& catalog,
                               const Catalog* target_catalog) {
  if (target_catalog == nullptr) target_catalog = &catalog;
  ApiUseIndex index;
  absl::StatusOr<EffectiveVersions> now =
      ResolveEffectiveVersions(catalog, VersionQuery{});
  if (!now.ok()) return index;
  index.now_ = *now;
  Point at_now{&catalog, *now, Served(catalog, *now, VersionQuery{})};

  // The upgrade target with its own flags; without them when it refuses
  // them (the plan's blockers say to remove them), as api/ does.
  std::optional<Point> at_target;
  if (catalog.cluster.upgrade_target.has_value()) {
    const UpgradePlanQuery plan = UpgradeTargetQuery(catalog);
    absl::StatusOr<EffectiveVersions> target =
        ResolveEffectiveVersions(*target_catalog, plan.to);
    if (target.ok()) {
      index.target_ = *target;
      std::optional<ServedSet> served =
          Served(*target_catalog, *target, plan.to);
      if (!served.has_value()) {
        VersionQuery without = plan.to;
        without.runtime_config = {};
        without.emulation_forward_compatible.reset();
        without.runtime_config_emulation_forward_compatible.reset();
        served = Served(*target_catalog, *target, without);
      }
      // A target whose start-up does not resolve is not judged (as before:
      // the plan reports it).
      if (served.has_value()) {
        at_target = Point{target_catalog, *target, std::move(served)};
      }
    }
  }

  // The rollback floor: emulation rolled back to min-compatibility.
  EffectiveVersions floor = *now;
  floor.emulation = now->min_compatibility;
  Point at_floor{&catalog, floor,
                 floor.emulation == now->emulation
                     ? at_now.served
                     : Served(catalog, floor, VersionQuery{})};

  for (const Known& api : KnownResources(catalog)) {
    const std::string key = ServedApiKey(api.group, api.version, api.resource);
    index.known_.insert(key);
    const std::string subject =
        absl::StrCat(GroupVersionString(api.group, api.version), " ", api.kind);
    const ApiVerdict then = at_now.Judge(api.group, api.version, api.kind);
    ApiUseJudgement judgement;
    judgement.kind = api.kind;
    judgement.replacement = then.replacement;
    std::optional<ApiVerdict> target;
    if (at_target.has_value() && !then.not_served()) {
      target = at_target->Judge(api.group, api.version, api.kind);
    }
    std::optional<ApiVerdict> rollback;
    if (at_floor.served.has_value() && !then.not_served() &&
        !(target.has_value() && target->not_served())) {
      rollback = at_floor.Judge(api.group, api.version, api.kind);
    }
    if (then.not_served()) {
      judgement.verdict = ApiUseVerdict::kNotServed;
      judgement.release = then.at;
      judgement.message = absl::StrCat(
          subject, " is not served at emulation version ", judgement.release,
          then.state == ApiState::kRemoved
              ? absl::StrCat(" (removed in Kubernetes ", then.removed, ")")
              : std::string(),
          ": the call fails now", Instead(then));
      index.mismatch_.insert_or_assign(key, Mismatch(api, then));
    } else if (target.has_value() && target->not_served()) {
      const bool removed = target->state == ApiState::kRemoved;
      judgement.verdict = removed ? ApiUseVerdict::kRemovedAtTarget
                                  : ApiUseVerdict::kNotServedAtTarget;
      judgement.release = target->at;
      if (judgement.replacement.empty()) {
        judgement.replacement = target->replacement;
      }
      judgement.message = absl::StrCat(
          subject, " is not served at the upgrade target (emulation ",
          judgement.release, "): ",
          removed ? absl::StrCat("removed in Kubernetes ", target->removed)
                  : std::string("not enabled there by default or by the "
                                "target's --runtime-config"),
          Instead(target->replacement.empty() ? then : *target));
    } else if (rollback.has_value() && rollback->not_served()) {
      judgement.verdict = ApiUseVerdict::kNotServedAtRollback;
      judgement.release = rollback->at;
      judgement.message = absl::StrCat(
          subject,
          " is not served at the rollback floor (emulation rolled back to "
          "the min-compatibility version ",
          judgement.release,
          rollback->state == ApiState::kNotYetIntroduced
              ? absl::StrCat("; introduced in Kubernetes ",
                             rollback->introduced)
              : std::string(),
          "): a rollback breaks this client");
    } else if (then.state == ApiState::kDeprecated) {
      judgement.verdict = ApiUseVerdict::kDeprecated;
      judgement.release = then.deprecated;
      judgement.message = absl::StrCat(
          subject, " is deprecated since Kubernetes ", judgement.release,
          then.removed.empty() ? std::string()
                               : absl::StrCat(" and removed in ", then.removed),
          Instead(then));
    } else {
      continue;
    }
    index.at_risk_.insert_or_assign(key, std::move(judgement));
  }
  return index;
}

namespace {

// "group/version/resource" in `buffer`, without allocating; nullopt when it
// is longer than any name a catalog holds.
std::optional<absl::string_view> KeyIn(absl::string_view group,
                                       absl::string_view version,
                                       absl::string_view resource,
                                       char (&buffer)[320]) {
  const size_t size = group.size() + version.size() + resource.size() + 2;
  if (size > sizeof(buffer)) return std::nullopt;
  char* p = buffer;
  const auto append = [&p](absl::string_view text) {
    if (!text.empty()) std::memcpy(p, text.data(), text.size());
    p += text.size();
  };
  append(group);
  *p++ = '/';
  append(version);
  *p++ = '/';
  append(resource);
  return absl::string_view(buffer, size);
}

}  // namespace

const ApiUseJudgement* ApiUseIndex::Find(absl::string_view group,
                                         absl::string_view version,
                                         absl::string_view resource) const {
  if (at_risk_.empty()) return nullptr;
  char buffer[320];
  const std::optional<absl::string_view> key =
      KeyIn(group, version, resource, buffer);
  if (!key.has_value()) return nullptr;
  auto it = at_risk_.find(*key);
  return it == at_risk_.end() ? nullptr : &it->second;
}

const ApiUseJudgement* ApiUseIndex::FindCall(absl::string_view group,
                                             absl::string_view version,
                                             absl::string_view resource,
                                             int64_t code) const {
  const ApiUseJudgement* judgement = Find(group, version, resource);
  if (judgement == nullptr || judgement->verdict != ApiUseVerdict::kNotServed ||
      code < 200 || code > 299) {
    return judgement;
  }
  char buffer[320];
  const std::optional<absl::string_view> key =
      KeyIn(group, version, resource, buffer);
  if (!key.has_value()) return judgement;
  auto it = mismatch_.find(*key);
  return it == mismatch_.end() ? judgement : &it->second;
}

bool ApiUseIndex::Knows(absl::string_view group, absl::string_view version,
                        absl::string_view resource) const {
  char buffer[320];
  const std::optional<absl::string_view> key =
      KeyIn(group, version, resource, buffer);
  return key.has_value() && known_.contains(*key);
}

}  // namespace compatd::engine
