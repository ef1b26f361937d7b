#include "api/object_check.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/catalog_answers.h"
#include "base/status_macros.h"
#include "engine/api_availability.h"
#include "engine/api_names.h"
#include "engine/effective_version.h"
#include "engine/upgrade_plan.h"

namespace compatd::api {
namespace {

// The kind that replaces `kind` in `resource`'s replacement: the catalog's
// replacementKind (apis, else apiHistory), else the same kind.
std::string ReplacementKind(const engine::Catalog& catalog,
                            absl::string_view group, absl::string_view version,
                            absl::string_view kind,
                            const engine::APIResource& resource) {
  if (!resource.replacement_kind.empty()) return resource.replacement_kind;
  const engine::APIHistoryEntry* entry =
      catalog.FindHistory(group, version, kind);
  if (entry != nullptr && !entry->replacement_kind.empty() &&
      entry->replacement == resource.replacement) {
    return entry->replacement_kind;
  }
  return std::string(kind);
}

// Fills the verdict's upgrade-target facts and its one-sentence warning for
// an API the upgrade target does not serve; nothing when it is served there
// (or there is no target).
void TargetFacts(const UpgradeTargetAnswers& target, absl::string_view group,
                 absl::string_view version, absl::string_view kind,
                 const engine::APIResource& resource,
                 ObjectApiVerdict* verdict) {
  if (!target.present || !target.status.ok()) return;
  if (target.served.contains(ServedKey(group, version, resource.resource))) {
    return;
  }
  const engine::Version& emulation = target.versions.emulation;
  std::string why;
  if (resource.removed.has_value() && emulation >= *resource.removed) {
    why = absl::StrCat("removed in Kubernetes ",
                       resource.removed->MajorMinorString());
  } else {
    why = "not enabled there by default or by the target's --runtime-config";
  }
  verdict->target_not_served = true;
  verdict->target_emulation = emulation.MajorMinorString();
  verdict->target_why = why;
  verdict->upgrade_target_message = absl::StrCat(
      engine::GroupVersionString(group, version), " ", kind,
      " will not be served at the cluster's upgrade target (emulation ",
      emulation.MajorMinorString(), ", min-compatibility ",
      target.versions.min_compatibility.MajorMinorString(), "): ", why,
      verdict->replacement.empty()
          ? std::string()
          : absl::StrCat("; use ", verdict->replacement, " ",
                         verdict->replacement_kind, " instead"));
}

// The catalog's entry for group/version/kind, or null.
const engine::APIResource* FindResource(const engine::Catalog& catalog,
                                        absl::string_view group,
                                        absl::string_view version,
                                        absl::string_view kind) {
  const engine::APIResource* resource = nullptr;
  for (const engine::APIGroupVersion& candidate : catalog.apis) {
    if (candidate.group != group || candidate.version != version) continue;
    for (const engine::APIResource& r : candidate.resources) {
      if (r.kind == kind) resource = &r;
    }
  }
  return resource;
}

}  // namespace

UpgradeTargetAnswers DeriveUpgradeTarget(const engine::CatalogSet& set,
                                         const engine::Catalog& catalog) {
  UpgradeTargetAnswers out;
  if (!catalog.cluster.upgrade_target.has_value()) return out;
  out.present = true;
  // The target's binary version picks its line (empty: this catalog's own).
  const std::string& target_binary =
      catalog.cluster.upgrade_target->binary_version;
  const engine::Catalog* target_catalog = &catalog;
  if (!target_binary.empty()) {
    absl::StatusOr<size_t> line =
        set.ResolveIndex(target_binary, "cluster.upgradeTarget.binaryVersion");
    if (!line.ok()) {
      out.status = line.status();
      return out;
    }
    out.line = *line;
    target_catalog = set.lines()[*line].get();
  } else {
    for (size_t i = 0; i < set.lines().size(); ++i) {
      if (set.lines()[i].get() == &catalog) out.line = i;
    }
  }
  out.catalog = target_catalog;
  // From this line's binary (an empty from is the set's default line) to
  // the target, across every binary between them, one minor at a time.
  engine::UpgradePlanQuery query = engine::UpgradeTargetQuery(catalog);
  const std::string from_binary = catalog.binary_version.MajorMinorString();
  query.from.binary_version = from_binary;
  absl::StatusOr<engine::UpgradePlan> plan = engine::PlanUpgrade(set, query);
  if (!plan.ok()) {
    out.status = plan.status();
    return out;
  }
  int64_t flags = 0, apis = 0;
  for (const engine::PlanItem& item : plan->items()) {
    if (!item.blocking) continue;
    if (item.section == engine::PlanSection::kFlags) ++flags;
    if (item.section == engine::PlanSection::kAPIs) ++apis;
  }
  out.blockers = {{"apis", apis}, {"flags", flags}};
  out.versions = plan->to;
  // The target's own flags on top of the cluster section's; flags it refuses
  // (the plan's blockers) are left out, as the plan says to remove them.
  absl::StatusOr<std::vector<engine::ServedGroupVersion>> served =
      engine::ListServedAPIs(*target_catalog, out.versions, query.to);
  if (!served.ok()) {
    engine::VersionQuery without = query.to;
    without.runtime_config = {};
    without.emulation_forward_compatible.reset();
    without.runtime_config_emulation_forward_compatible.reset();
    served = engine::ListServedAPIs(*target_catalog, out.versions, without);
  }
  if (!served.ok()) {
    out.status = served.status();
    return out;
  }
  for (const engine::ServedGroupVersion& gv : *served) {
    for (const std::string& resource : gv.resources) {
      out.served.insert(ServedKey(gv.group, gv.version, resource));
    }
  }
  return out;
}

absl::Status ResolveObjectApiContext(const runtime::ServingLine& snapshot,
                                     const engine::VersionQuery& query,
                                     ObjectApiContext* context) {
  const engine::Catalog& catalog = *snapshot.catalog;
  // The cluster's own versions (no override): the snapshot has the served
  // set already (api/catalog_answers.h).
  const bool defaults =
      query.binary_version.empty() && query.emulation_version.empty() &&
      query.min_compatibility_version.empty() && query.feature_gates.empty() &&
      query.runtime_config.empty() &&
      !query.emulation_forward_compatible.has_value() &&
      !query.runtime_config_emulation_forward_compatible.has_value();
  const auto* derived =
      defaults ? static_cast<const CatalogAnswers*>(snapshot.derived.get())
               : nullptr;
  if (derived != nullptr) {
    COMPATD_RETURN_IF_ERROR(derived->served_status);
    context->versions = derived->versions;
    context->served = &derived->served;
    return absl::OkStatus();
  }
  COMPATD_ASSIGN_OR_RETURN(context->versions,
                           engine::ResolveEffectiveVersions(catalog, query));
  COMPATD_ASSIGN_OR_RETURN(
      std::vector<engine::ServedGroupVersion> served,
      engine::ListServedAPIs(catalog, context->versions, query));
  for (const engine::ServedGroupVersion& s : served) {
    for (const std::string& resource : s.resources) {
      context->own.insert(ServedKey(s.group, s.version, resource));
    }
  }
  context->served = &context->own;
  return absl::OkStatus();
}

absl::StatusOr<ObjectApiVerdict> CheckObjectApi(
    const runtime::ServingLine& snapshot, const engine::VersionQuery& query,
    absl::string_view group, absl::string_view version,
    absl::string_view kind) {
  ObjectApiContext context;
  COMPATD_RETURN_IF_ERROR(ResolveObjectApiContext(snapshot, query, &context));
  const engine::Catalog& catalog = *snapshot.catalog;
  ObjectApiVerdict verdict =
      CheckObjectApiIn(catalog, context, group, version, kind);
  if (!catalog.cluster.upgrade_target.has_value()) return verdict;
  const engine::APIResource* resource =
      FindResource(catalog, group, version, kind);
  if (resource == nullptr) return verdict;
  const auto* answers =
      static_cast<const CatalogAnswers*>(snapshot.derived.get());
  if (answers != nullptr) {
    TargetFacts(answers->target, group, version, kind, *resource, &verdict);
  } else {
    TargetFacts(DeriveUpgradeTarget(*engine::CatalogSet::Single(
                                        std::shared_ptr<const engine::Catalog>(
                                            snapshot.catalog, &catalog)),
                                    catalog),
                group, version, kind, *resource, &verdict);
  }
  return verdict;
}

ObjectApiVerdict CheckObjectApiIn(const engine::Catalog& catalog,
                                  const ObjectApiContext& context,
                                  absl::string_view group,
                                  absl::string_view version,
                                  absl::string_view kind) {
  const engine::EffectiveVersions& versions = context.versions;
  ObjectApiVerdict verdict;
  verdict.emulation = versions.emulation.MajorMinorString();
  const std::string gv = engine::GroupVersionString(group, version);
  const engine::APIResource* resource =
      FindResource(catalog, group, version, kind);
  if (resource == nullptr) {
    verdict.message = absl::StrCat(gv, " ", kind,
                                   " is not a built-in API of the catalog "
                                   "(a custom or aggregated resource?)");
    return verdict;
  }
  verdict.resource = resource->resource;
  if (resource->deprecated.has_value()) {
    verdict.deprecated = resource->deprecated->MajorMinorString();
  }
  if (resource->removed.has_value()) {
    verdict.removed = resource->removed->MajorMinorString();
  }
  verdict.replacement = resource->replacement;
  if (!verdict.replacement.empty()) {
    verdict.replacement_kind =
        ReplacementKind(catalog, group, version, kind, *resource);
  }
  const bool is_served =
      context.served->contains(ServedKey(group, version, resource->resource));
  const std::string replacement =
      verdict.replacement.empty()
          ? std::string()
          : absl::StrCat("; use ", verdict.replacement, " ",
                         verdict.replacement_kind, " instead");
  if (!is_served) {
    verdict.state = ObjectApiVerdict::State::kNotServed;
    if (resource->removed.has_value() &&
        versions.emulation >= *resource->removed) {
      verdict.not_served = ObjectApiVerdict::NotServed::kRemoved;
      verdict.message =
          absl::StrCat(gv, " ", kind, " is removed in Kubernetes ",
                       verdict.removed, " and not served at emulation version ",
                       verdict.emulation, replacement);
    } else if (resource->introduced.has_value() &&
               versions.emulation < *resource->introduced) {
      // Not a matter of --runtime-config: the emulated release had no such
      // API yet.
      verdict.not_served = ObjectApiVerdict::NotServed::kNotIntroduced;
      verdict.message =
          absl::StrCat(gv, " ", kind, " is not served at emulation version ",
                       verdict.emulation, ": it is introduced in Kubernetes ",
                       resource->introduced->MajorMinorString());
    } else {
      verdict.not_served = ObjectApiVerdict::NotServed::kDisabled;
      verdict.message = absl::StrCat(
          gv, " ", kind, " is not served at emulation version ",
          verdict.emulation, " (not enabled by default; --runtime-config=", gv,
          "=true enables it)", replacement);
    }
    return verdict;
  }
  if (resource->deprecated.has_value() &&
      versions.emulation >= *resource->deprecated) {
    verdict.state = ObjectApiVerdict::State::kDeprecated;
    verdict.message = absl::StrCat(
        gv, " ", kind, " is deprecated since Kubernetes ", verdict.deprecated,
        verdict.removed.empty()
            ? std::string()
            : absl::StrCat(" and removed in ", verdict.removed),
        replacement);
    return verdict;
  }
  verdict.state = ObjectApiVerdict::State::kServed;
  verdict.message = absl::StrCat(
      gv, " ", kind, " is served at emulation version ", verdict.emulation);
  return verdict;
}

absl::StatusOr<ObjectApiVerdict> CheckObjectApi(
    const runtime::ServingSnapshot& snapshot, const engine::VersionQuery& query,
    absl::string_view group, absl::string_view version,
    absl::string_view kind) {
  COMPATD_ASSIGN_OR_RETURN(const runtime::ServingLine* line,
                           snapshot.Line(query.binary_version));
  return CheckObjectApi(*line, query, group, version, kind);
}

}  // namespace compatd::api
