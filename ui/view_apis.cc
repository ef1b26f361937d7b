#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compatd/v1/compatd.pb.h"
#include "engine/api_names.h"
#include "engine/api_verdict.h"
#include "engine/catalog.h"
#include "engine/skew.h"
#include "engine/version.h"
#include "ui/html.h"
#include "ui/timeline.h"
#include "ui/view_parts.h"
#include "ui/views.h"

namespace compatd::ui {

namespace {

// One served resource, with engine::JudgeApiResource's verdict at the
// page's emulation version (the verdict every surface gives): deprecated
// there, with its removal and replacement.
void AppendServedResource(std::string* out, const std::string& resource,
                          const engine::ApiVerdict& verdict) {
  const bool deprecated = verdict.state == engine::ApiState::kDeprecated;
  out->append(deprecated ? "<li class=\"deprecated\">" : "<li>");
  AppendEscaped(out, resource);
  if (deprecated) {
    out->append(" <span class=\"note\">deprecated ");
    AppendEscaped(out, verdict.deprecated);
    if (!verdict.removed.empty()) {
      out->append(", removed in ");
      AppendEscaped(out, verdict.removed);
    }
    if (!verdict.replacement.empty()) {
      out->append("; use ");
      AppendEscaped(out, absl::StrCat(verdict.replacement, " ",
                                      verdict.replacement_kind));
    }
    out->append("</span>");
  }
  out->append("</li>");
}

// The group-versions served now, each resource with its verdict; returns
// "group/version" of each.
absl::flat_hash_set<std::string> AppendServedTable(
    std::string* out, const engine::Catalog& catalog,
    const v1::ListAPIVersionsResponse& apis) {
  // The start-up the response lists, at its emulation version.
  absl::flat_hash_set<std::string> served_resources;
  for (const v1::APIGroupVersion& gv : apis.group_versions()) {
    for (const std::string& resource : gv.resources()) {
      served_resources.insert(
          engine::ServedApiKey(gv.group(), gv.version(), resource));
    }
  }
  engine::ApiStartUp startup;
  startup.served = &served_resources;
  const absl::StatusOr<engine::Version> emulation =
      engine::Version::Parse(apis.versions().emulation_version());
  if (emulation.ok()) startup.versions.emulation = *emulation;
  out->append(
      "<div class=\"scroll\"><table class=\"list apis stack\" "
      "id=\"served\"><thead><tr>"
      "<th scope=\"col\">group/version</th><th scope=\"col\">resources</th>"
      "</tr></thead><tbody>");
  absl::flat_hash_set<std::string> served;
  for (const v1::APIGroupVersion& gv : apis.group_versions()) {
    const std::string group_version =
        gv.group().empty() ? gv.version()
                           : absl::StrCat(gv.group(), "/", gv.version());
    served.insert(absl::StrCat(gv.group(), "/", gv.version()));
    out->append("<tr data-group-version=\"");
    AppendEscaped(out, group_version);
    out->append("\"><th scope=\"row\" title=\"");
    AppendEscaped(out, gv.reason());
    out->append("\">");
    AppendEscaped(out, group_version);
    out->append("</th><td><ul class=\"resources\">");
    for (const std::string& resource : gv.resources()) {
      engine::ApiVerdict verdict;
      if (emulation.ok()) {
        verdict = engine::JudgeApiResource(catalog, &startup, *emulation,
                                           gv.group(), gv.version(), resource);
      }
      AppendServedResource(out, resource, verdict);
    }
    out->append("</ul></td></tr>");
  }
  out->append("</tbody></table></div>");
  return served;
}

// A resource of the catalog not served now, with its lifecycle.
void AppendLifecycleNotes(std::string* out, const engine::APIResource& r) {
  std::vector<std::string> notes;
  if (r.introduced.has_value()) {
    notes.push_back(
        absl::StrCat("introduced ", r.introduced->MajorMinorString()));
  }
  if (r.deprecated.has_value()) {
    notes.push_back(
        absl::StrCat("deprecated ", r.deprecated->MajorMinorString()));
  }
  if (r.removed.has_value()) {
    notes.push_back(absl::StrCat("removed ", r.removed->MajorMinorString()));
  }
  if (!r.replacement.empty()) {
    notes.push_back(absl::StrCat("use ", r.replacement));
  }
  if (!notes.empty()) {
    out->append(" <span class=\"note\">");
    for (size_t i = 0; i < notes.size(); ++i) {
      if (i > 0) out->append(", ");
      AppendEscaped(out, notes[i]);
    }
    out->append("</span>");
  }
}

void AppendNotServedTable(std::string* out, const engine::Catalog& catalog,
                          const absl::flat_hash_set<std::string>& served) {
  out->append(
      "<h2>In the catalog, not served now</h2><div class=\"scroll\"><table "
      "class=\"list apis stack\" id=\"not-served\"><thead><tr><th "
      "scope=\"col\">group/version</th><th scope=\"col\">resources and their "
      "lifecycle</th></tr></thead><tbody>");
  size_t not_served = 0;
  for (const engine::APIGroupVersion& gv : catalog.apis) {
    if (served.contains(absl::StrCat(gv.group, "/", gv.version))) continue;
    ++not_served;
    const std::string group_version =
        gv.group.empty() ? gv.version : absl::StrCat(gv.group, "/", gv.version);
    out->append("<tr><th scope=\"row\">");
    AppendEscaped(out, group_version);
    out->append("</th><td><ul class=\"resources\">");
    for (const engine::APIResource& r : gv.resources) {
      out->append("<li>");
      AppendEscaped(out, r.resource);
      AppendLifecycleNotes(out, r);
      out->append("</li>");
    }
    out->append("</ul></td></tr>");
  }
  out->append("</tbody></table></div>");
  absl::StrAppend(out, "<p>", not_served,
                  " group-versions of the catalog are not served at these "
                  "versions (off by default, removed, or not yet "
                  "introduced).</p>");
}

// group/version -> resources.
std::map<std::string, std::vector<std::string>> ByGroupVersion(
    const v1::ListAPIVersionsResponse& r) {
  std::map<std::string, std::vector<std::string>> by_group_version;
  for (const v1::APIGroupVersion& gv : r.group_versions()) {
    by_group_version[gv.group().empty()
                         ? gv.version()
                         : absl::StrCat(gv.group(), "/", gv.version())] = {
        gv.resources().begin(), gv.resources().end()};
  }
  return by_group_version;
}

// The (group/version, resource) pairs of `from` that `to` lacks.
std::vector<std::pair<std::string, std::string>> Missing(
    const std::map<std::string, std::vector<std::string>>& from,
    const std::map<std::string, std::vector<std::string>>& to) {
  std::vector<std::pair<std::string, std::string>> missing;
  for (const auto& [gv, resources] : from) {
    auto it = to.find(gv);
    for (const std::string& r : resources) {
      if (it == to.end() ||
          !std::binary_search(it->second.begin(), it->second.end(), r)) {
        missing.emplace_back(gv, r);
      }
    }
  }
  return missing;
}

void AppendChangeList(
    std::string* out, absl::string_view id, absl::string_view title,
    const std::vector<std::pair<std::string, std::string>>& items) {
  absl::StrAppend(out, "<h3>", title, ": ", items.size(),
                  "</h3><ul class=\"changes\" id=\"", id, "\">");
  for (const auto& [gv, r] : items) {
    out->append("<li>");
    AppendEscaped(out, gv);
    out->append(" ");
    AppendEscaped(out, r);
    out->append("</li>");
  }
  out->append("</ul>");
}

// What stops and starts being served at the catalog's upgrade target.
absl::Status AppendTargetChanges(std::string* out, const PageContext& context,
                                 const v1::ListAPIVersionsResponse& apis,
                                 const Target& target) {
  v1::ListAPIVersionsRequest request;
  *request.mutable_versions() = target.versions;
  v1::ListAPIVersionsResponse at_target;
  if (absl::Status s = context.handlers->ListAPIVersions(*context.snapshot,
                                                         request, &at_target);
      !s.ok()) {
    return s;
  }
  const auto now = ByGroupVersion(apis);
  const auto then = ByGroupVersion(at_target);
  out->append("<h2 id=\"at-target\">What changes at the upgrade target (");
  AppendEmulationAndMin(out, at_target.versions());
  out->append(")</h2>");
  AppendChangeList(out, "stops-serving", "Stop being served",
                   Missing(now, then));
  AppendChangeList(out, "starts-serving", "Start being served",
                   Missing(then, now));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> RenderApis(const PageContext& context) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  v1::ListAPIVersionsResponse apis;
  if (absl::Status s = context.handlers->ListAPIVersions(
          *context.snapshot, v1::ListAPIVersionsRequest(), &apis);
      !s.ok()) {
    return s;
  }
  std::string out;
  out.reserve(64 << 10);
  AppendHead(&out, "APIs", View::kApis, &context);
  out.append("<h1>APIs</h1><p>Served at emulation version ");
  AppendEscaped(&out, apis.versions().emulation_version());
  out.append(" (binary ");
  AppendEscaped(&out, apis.versions().binary_version());
  absl::StrAppend(
      &out,
      ", with the cluster's <code class=\"flag\">--runtime-config</code>): ",
      apis.group_versions_size(), " group-versions.</p>");
  const absl::flat_hash_set<std::string> served =
      AppendServedTable(&out, catalog, apis);
  AppendNotServedTable(&out, catalog, served);
  absl::StatusOr<std::optional<Target>> target = UpgradeTargetOf(context);
  if (!target.ok()) return target.status();
  if (target->has_value()) {
    if (absl::Status s = AppendTargetChanges(&out, context, apis, **target);
        !s.ok()) {
      return s;
    }
  }
  AppendFoot(&out, &context);
  return out;
}

}  // namespace compatd::ui
