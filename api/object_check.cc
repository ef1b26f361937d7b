#include "api/object_check.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/catalog_answers.h"
#include "base/status_macros.h"
#include "engine/api_availability.h"
#include "engine/api_names.h"
#include "engine/effective_version.h"

namespace compatd::api {
namespace {}  // namespace

absl::Status ResolveObjectApiContext(const runtime::ServingSnapshot& snapshot,
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
    const runtime::ServingSnapshot& snapshot, const engine::VersionQuery& query,
    absl::string_view group, absl::string_view version,
    absl::string_view kind) {
  ObjectApiContext context;
  COMPATD_RETURN_IF_ERROR(ResolveObjectApiContext(snapshot, query, &context));
  return CheckObjectApiIn(*snapshot.catalog, context, group, version, kind);
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
  const engine::APIResource* resource = nullptr;
  for (const engine::APIGroupVersion& candidate : catalog.apis) {
    if (candidate.group != group || candidate.version != version) continue;
    for (const engine::APIResource& r : candidate.resources) {
      if (r.kind == kind) resource = &r;
    }
  }
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
  const bool is_served =
      context.served->contains(ServedKey(group, version, resource->resource));
  const std::string replacement =
      verdict.replacement.empty()
          ? std::string()
          : absl::StrCat("; use ", verdict.replacement, " ", kind, " instead");
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

}  // namespace compatd::api
