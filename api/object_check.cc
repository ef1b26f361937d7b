#include "api/object_check.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/catalog_answers.h"
#include "base/status_macros.h"
#include "engine/api_availability.h"
#include "engine/api_names.h"
#include "engine/api_verdict.h"
#include "engine/effective_version.h"
#include "engine/upgrade_plan.h"

namespace compatd::api {
namespace {

// The one verdict's state in the webhook's terms.
void FromJudgement(const engine::ApiVerdict& judged, ObjectApiVerdict* out) {
  using engine::ApiState;
  switch (judged.state) {
    case ApiState::kServed:
      out->state = ObjectApiVerdict::State::kServed;
      break;
    case ApiState::kDeprecated:
      out->state = ObjectApiVerdict::State::kDeprecated;
      break;
    case ApiState::kRemoved:
      out->state = ObjectApiVerdict::State::kNotServed;
      out->not_served = ObjectApiVerdict::NotServed::kRemoved;
      break;
    case ApiState::kNotYetIntroduced:
      out->state = ObjectApiVerdict::State::kNotServed;
      out->not_served = ObjectApiVerdict::NotServed::kNotIntroduced;
      break;
    case ApiState::kNotServed:
      out->state = ObjectApiVerdict::State::kNotServed;
      out->not_served = ObjectApiVerdict::NotServed::kDisabled;
      break;
    case ApiState::kUnknown:
      out->state = ObjectApiVerdict::State::kUnknown;
      break;
  }
}

// Fills the verdict's upgrade-target facts and its one-sentence warning for
// an API the upgrade target does not serve, judged by engine::JudgeApi on the
// target's line at its start-up; nothing when it is served there, unknown
// there, or there is no target.
void TargetFacts(const UpgradeTargetAnswers& target, absl::string_view group,
                 absl::string_view version, absl::string_view kind,
                 ObjectApiVerdict* verdict) {
  if (!target.present || !target.status.ok() || target.catalog == nullptr) {
    return;
  }
  const engine::Version& emulation = target.versions.emulation;
  const engine::ApiStartUp startup{target.versions, &target.served};
  const engine::ApiVerdict judged = engine::JudgeApi(
      *target.catalog, &startup, emulation, group, version, kind);
  if (!judged.not_served()) return;
  std::string why;
  if (judged.state == engine::ApiState::kRemoved) {
    why = absl::StrCat("removed in Kubernetes ", judged.removed);
  } else if (judged.state == engine::ApiState::kNotYetIntroduced) {
    why = absl::StrCat("not yet introduced there (introduced in Kubernetes ",
                       judged.introduced, ")");
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
  if (!catalog.cluster.upgrade_target.has_value() ||
      verdict.state == ObjectApiVerdict::State::kUnknown) {
    return verdict;
  }
  const auto* answers =
      static_cast<const CatalogAnswers*>(snapshot.derived.get());
  if (answers != nullptr) {
    TargetFacts(answers->target, group, version, kind, &verdict);
  } else {
    TargetFacts(DeriveUpgradeTarget(*engine::CatalogSet::Single(
                                        std::shared_ptr<const engine::Catalog>(
                                            snapshot.catalog, &catalog)),
                                    catalog),
                group, version, kind, &verdict);
  }
  return verdict;
}

engine::ApiStartUp StartUpOf(const ObjectApiContext& context) {
  return engine::ApiStartUp{context.versions, context.served};
}

ObjectApiVerdict CheckObjectApiIn(const engine::Catalog& catalog,
                                  const ObjectApiContext& context,
                                  absl::string_view group,
                                  absl::string_view version,
                                  absl::string_view kind) {
  const engine::ApiStartUp startup = StartUpOf(context);
  const engine::ApiVerdict judged = engine::JudgeApi(
      catalog, &startup, context.versions.emulation, group, version, kind);
  ObjectApiVerdict verdict;
  verdict.emulation = judged.at;
  FromJudgement(judged, &verdict);
  verdict.verdict = judged.state;
  verdict.resource = judged.resource;
  verdict.deprecated = judged.deprecated;
  verdict.removed = judged.removed;
  verdict.replacement = judged.replacement;
  verdict.replacement_kind = judged.replacement_kind;
  verdict.message = judged.message;
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
