#include "engine/api_use.h"

#include <cstring>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/api_availability.h"
#include "engine/api_names.h"
#include "engine/query.h"
#include "engine/upgrade_plan.h"

namespace compatd::engine {
namespace {

using ServedSet = absl::flat_hash_set<std::string>;

std::string Key(absl::string_view group, absl::string_view version,
                absl::string_view resource) {
  return absl::StrCat(group, "/", version, "/", resource);
}

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
      out.insert(Key(gv.group, gv.version, resource));
    }
  }
  return out;
}

std::string Instead(const APIResource& resource) {
  return resource.replacement.empty()
             ? std::string()
             : absl::StrCat("; use ", resource.replacement, " ", resource.kind,
                            " instead");
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
  const std::optional<ServedSet> served_now =
      Served(catalog, *now, VersionQuery{});

  // The upgrade target with its own flags; without them when it refuses
  // them (the plan's blockers say to remove them), as api/ does.
  std::optional<ServedSet> served_target;
  if (catalog.cluster.upgrade_target.has_value()) {
    const UpgradePlanQuery plan = UpgradeTargetQuery(catalog);
    absl::StatusOr<EffectiveVersions> target =
        ResolveEffectiveVersions(*target_catalog, plan.to);
    if (target.ok()) {
      index.target_ = *target;
      served_target = Served(*target_catalog, *target, plan.to);
      if (!served_target.has_value()) {
        VersionQuery without = plan.to;
        without.runtime_config = {};
        without.emulation_forward_compatible.reset();
        without.runtime_config_emulation_forward_compatible.reset();
        served_target = Served(*target_catalog, *target, without);
      }
    }
  }

  // The rollback floor: emulation rolled back to min-compatibility.
  EffectiveVersions floor = *now;
  floor.emulation = now->min_compatibility;
  const std::optional<ServedSet> served_floor =
      floor.emulation == now->emulation
          ? served_now
          : Served(catalog, floor, VersionQuery{});

  for (const APIGroupVersion& gv : catalog.apis) {
    const std::string group_version = GroupVersionString(gv.group, gv.version);
    for (const APIResource& resource : gv.resources) {
      const std::string key = Key(gv.group, gv.version, resource.resource);
      index.known_.insert(key);
      const std::string subject =
          absl::StrCat(group_version, " ", resource.kind);
      ApiUseJudgement judgement;
      judgement.kind = resource.kind;
      judgement.replacement = resource.replacement;
      if (served_now.has_value() && !served_now->contains(key)) {
        judgement.verdict = ApiUseVerdict::kNotServed;
        judgement.release = now->emulation.MajorMinorString();
        judgement.message = absl::StrCat(
            subject, " is not served at emulation version ", judgement.release,
            resource.removed.has_value() && now->emulation >= *resource.removed
                ? absl::StrCat(" (removed in Kubernetes ",
                               resource.removed->MajorMinorString(), ")")
                : std::string(),
            ": the call fails now", Instead(resource));
      } else if (served_target.has_value() && !served_target->contains(key)) {
        const Version& emulation = index.target_->emulation;
        const bool removed =
            resource.removed.has_value() && emulation >= *resource.removed;
        judgement.verdict = removed ? ApiUseVerdict::kRemovedAtTarget
                                    : ApiUseVerdict::kNotServedAtTarget;
        judgement.release = emulation.MajorMinorString();
        judgement.message = absl::StrCat(
            subject, " is not served at the upgrade target (emulation ",
            judgement.release, "): ",
            removed ? absl::StrCat("removed in Kubernetes ",
                                   resource.removed->MajorMinorString())
                    : std::string("not enabled there by default or by the "
                                  "target's --runtime-config"),
            Instead(resource));
      } else if (served_floor.has_value() && !served_floor->contains(key)) {
        judgement.verdict = ApiUseVerdict::kNotServedAtRollback;
        judgement.release = floor.emulation.MajorMinorString();
        judgement.message = absl::StrCat(
            subject,
            " is not served at the rollback floor (emulation rolled back to "
            "the min-compatibility version ",
            judgement.release,
            resource.introduced.has_value() &&
                    floor.emulation < *resource.introduced
                ? absl::StrCat("; introduced in Kubernetes ",
                               resource.introduced->MajorMinorString())
                : std::string(),
            "): a rollback breaks this client");
      } else if (resource.deprecated.has_value() &&
                 now->emulation >= *resource.deprecated) {
        judgement.verdict = ApiUseVerdict::kDeprecated;
        judgement.release = resource.deprecated->MajorMinorString();
        judgement.message = absl::StrCat(
            subject, " is deprecated since Kubernetes ", judgement.release,
            resource.removed.has_value()
                ? absl::StrCat(" and removed in ",
                               resource.removed->MajorMinorString())
                : std::string(),
            Instead(resource));
      } else {
        continue;
      }
      index.at_risk_.insert_or_assign(key, std::move(judgement));
    }
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

bool ApiUseIndex::Knows(absl::string_view group, absl::string_view version,
                        absl::string_view resource) const {
  char buffer[320];
  const std::optional<absl::string_view> key =
      KeyIn(group, version, resource, buffer);
  return key.has_value() && known_.contains(*key);
}

}  // namespace compatd::engine
