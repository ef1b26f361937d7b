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
#include "engine/catalog.h"
#include "engine/skew.h"
#include "engine/version.h"
#include "ui/html.h"
#include "ui/timeline.h"
#include "ui/view_parts.h"
#include "ui/views.h"

namespace compatd::ui {
namespace {

// Releases of history the feature table's timelines show (the detail page
// shows a gate's whole history).
constexpr uint64_t kTableTimelineReleases = 12;

bool Matches(const FeatureFilter& filter, const v1::FeatureDecision& d) {
  if (!filter.component.empty() && d.component() != filter.component) {
    return false;
  }
  if (!filter.stage.empty() && ProtoStageName(d.stage()) != filter.stage) {
    return false;
  }
  if (!filter.name.empty() &&
      !absl::StrContains(absl::AsciiStrToLower(d.name()),
                         absl::AsciiStrToLower(filter.name))) {
    return false;
  }
  return true;
}

void AppendSelect(std::string* out, absl::string_view name,
                  absl::string_view label, absl::string_view selected,
                  const std::vector<std::string>& options) {
  absl::StrAppend(out, "<label>", label);
  absl::StrAppend(out, " <select name=\"", name, "\" id=\"filter-", name,
                  "\"><option value=\"\">any</option>");
  for (const std::string& option : options) {
    out->append("<option value=\"");
    AppendEscaped(out, option);
    out->append("\"");
    if (option == selected) out->append(" selected");
    out->append(">");
    AppendEscaped(out, option);
    out->append("</option>");
  }
  out->append("</select></label>");
}

void AppendDecisionCells(std::string* out, const v1::FeatureDecision& d) {
  absl::StrAppend(
      out, "<td><span class=\"badge st-",
      StageClass(ProtoStageToEngine(d.stage())), "\">",
      StageTitle(ProtoStageToEngine(d.stage())),
      "</span></td><td data-label=\"now\" class=\"", d.enabled() ? "on" : "off",
      "\">", d.enabled() ? "on" : "off",
      d.overridden() ? " <abbr title=\"set by the cluster's "
                       "--feature-gates\">(set)</abbr>"
                     : "",
      "</td><td data-label=\"default\">", d.default_enabled() ? "on" : "off",
      d.locked_to_default() ? " <span class=\"locked\">locked</span>" : "",
      "</td>");
}

// The gates at the catalog's upgrade target, when it has one: a column and
// a marker. `target_of` points into `at_target`.
struct FeatureTarget {
  v1::ListFeaturesResponse at_target;
  absl::flat_hash_map<std::string, const v1::FeatureDecision*> target_of;
  std::optional<engine::Version> emulation;
};

absl::Status FetchFeatureTarget(const PageContext& context,
                                const Target& target, FeatureTarget* out) {
  v1::ListFeaturesRequest request;
  *request.mutable_versions() = target.versions;
  if (absl::Status s = context.handlers->ListFeatures(*context.snapshot,
                                                      request, &out->at_target);
      !s.ok()) {
    return s;
  }
  for (const v1::FeatureDecision& d : out->at_target.features()) {
    out->target_of[d.name()] = &d;
  }
  absl::StatusOr<engine::Version> v =
      engine::Version::Parse(out->at_target.versions().emulation_version());
  if (!v.ok()) return v.status();
  out->emulation = *v;
  return absl::OkStatus();
}

// The filter form: name, component, stage.
void AppendFeatureForm(std::string* out, const engine::Catalog& catalog,
                       const FeatureFilter& filter) {
  std::vector<std::string> components;
  {
    absl::flat_hash_set<std::string> seen;
    for (const engine::Feature& f : catalog.features) {
      if (!f.component.empty() && seen.insert(f.component).second) {
        components.push_back(f.component);
      }
    }
    std::sort(components.begin(), components.end());
  }
  out->append(
      "<form class=\"filters\" method=\"get\" action=\"/ui/features\" "
      "id=\"feature-filter\"><label>Name <input type=\"search\" name=\"q\" "
      "id=\"filter-q\" autocomplete=\"off\" value=\"");
  AppendEscaped(out, filter.name);
  out->append("\"></label>");
  AppendSelect(out, "component", "Component", filter.component, components);
  AppendSelect(out, "stage", "Stage", filter.stage,
               {"ALPHA", "BETA", "GA", "DEPRECATED", "PRE-ALPHA"});
  out->append(
      "<button type=\"submit\">Filter</button> <a "
      "href=\"/ui/features\">clear</a>"
      "</form>");
}

void AppendGatesHead(std::string* out, const TimelineAxis& axis,
                     const engine::Version& binary,
                     const FeatureTarget& target) {
  out->append(
      "<div class=\"scroll\"><table class=\"list gates stack\" "
      "id=\"gates\"><thead><tr>"
      "<th scope=\"col\">gate</th><th scope=\"col\">component</th>"
      "<th scope=\"col\">stage</th><th scope=\"col\">now</th>"
      "<th scope=\"col\">default</th>");
  if (target.emulation.has_value()) {
    absl::StrAppend(out, "<th scope=\"col\">at the target ",
                    target.emulation->MajorMinorString(), "</th>");
  }
  out->append(
      "<th scope=\"col\">since</th>"
      "<th scope=\"col\" class=\"tlcol\">history ");
  absl::StrAppend(out,
                  engine::Version::MajorMinor(axis.major, axis.first_minor)
                      .MajorMinorString(),
                  "\xE2\x80\x93", binary.MajorMinorString(),
                  "</th></tr></thead><tbody>");
}

void AppendTargetCell(std::string* out, const v1::FeatureDecision& d,
                      const FeatureTarget& target) {
  auto it = target.target_of.find(d.name());
  if (it == target.target_of.end()) {
    out->append("<td data-label=\"at the target\"></td>");
  } else {
    const v1::FeatureDecision& t = *it->second;
    const bool changes = t.enabled() != d.enabled() || t.stage() != d.stage();
    absl::StrAppend(out, "<td data-label=\"at the target\" class=\"",
                    t.enabled() ? "on" : "off", changes ? " changes" : "",
                    "\" data-target-enabled=\"", t.enabled() ? "on" : "off",
                    "\">", t.enabled() ? "on" : "off");
    if (t.stage() != d.stage()) {
      absl::StrAppend(out, " <span class=\"badge st-",
                      StageClass(ProtoStageToEngine(t.stage())), "\">",
                      StageTitle(ProtoStageToEngine(t.stage())), "</span>");
    }
    out->append("</td>");
  }
}

void AppendGateRow(std::string* out, const engine::Catalog& catalog,
                   const v1::FeatureDecision& d, const TimelineAxis& axis,
                   const engine::Version& binary,
                   const engine::Version& emulation,
                   const FeatureTarget& target) {
  const engine::Feature* feature = catalog.FindFeature(d.name());
  const std::string id = IdToken(d.name());
  out->append("<tr id=\"gate-");
  out->append(id);
  out->append("\" data-name=\"");
  AppendEscaped(out, d.name());
  out->append("\" data-component=\"");
  AppendEscaped(out, d.component());
  absl::StrAppend(out, "\" data-stage=\"", ProtoStageName(d.stage()),
                  "\"><th scope=\"row\"><a href=\"/ui/features/");
  AppendPathSegment(out, d.name());
  out->append("\">");
  AppendWithCamelBreaks(out, d.name());
  out->append("</a></th><td data-label=\"component\">");
  AppendEscaped(out, d.component());
  out->append("</td>");
  AppendDecisionCells(out, d);
  if (target.emulation.has_value()) AppendTargetCell(out, d, target);
  out->append("<td data-label=\"since\">");
  AppendEscaped(out, d.since());
  out->append("</td><td class=\"tlcol\">");
  if (feature != nullptr) {
    const std::vector<TimelineSegment> segments =
        FeatureSegments(*feature, binary);
    AppendTimelineSvg(out, d.name(), segments, axis, emulation,
                      target.emulation ? &*target.emulation : nullptr);
  }
  out->append("</td></tr>");
}

// The gate's state at the emulation version, and why (an open <dl>).
void AppendFeatureState(std::string* out, const engine::Feature* feature,
                        const v1::GetFeatureResponse& d) {
  out->append("</h1><dl class=\"kv\"><dt>Component</dt><dd>");
  AppendEscaped(out,
                feature->component.empty() ? "(none)" : feature->component);
  out->append("</dd><dt>At emulation version ");
  AppendEscaped(out, d.versions().emulation_version());
  absl::StrAppend(
      out, "</dt><dd id=\"state\"><span class=\"badge st-",
      StageClass(ProtoStageToEngine(d.stage())), "\">",
      StageTitle(ProtoStageToEngine(d.stage())), "</span> ",
      d.enabled() ? "<strong class=\"on\">on</strong>"
                  : "<strong class=\"off\">off</strong>",
      ", ", d.default_enabled() ? "on" : "off", " by default",
      d.locked_to_default() ? ", locked to its default" : "",
      d.overridden()
          ? ", set by the cluster's <code class=\"flag\">--feature-gates</code>"
          : "",
      "</dd><dt>Why</dt><dd>");
  AppendEscaped(out, d.reason());
  out->append("</dd>");
  if (feature->removed.has_value()) {
    out->append("<dt>Planned removal</dt><dd>");
    AppendEscaped(out, feature->removed->MajorMinorString());
    out->append("</dd>");
  }
}

// Its versioned specs, one row each.
void AppendSpecsTable(std::string* out, const engine::Feature* feature) {
  out->append(
      "</p><div class=\"scroll\"><table class=\"list\" id=\"specs\"><thead><tr>"
      "<th scope=\"col\">version</th><th scope=\"col\">stage</th>"
      "<th scope=\"col\">default</th><th scope=\"col\">locked</th>"
      "<th scope=\"col\">min-compatibility</th></tr></thead><tbody>");
  for (const engine::FeatureSpec& spec : feature->specs) {
    absl::StrAppend(out, "<tr><td>", spec.version.MajorMinorString(),
                    "</td><td><span class=\"badge st-",
                    StageClass(spec.pre_release), "\">",
                    StageTitle(spec.pre_release), "</span></td><td>",
                    spec.default_enabled ? "on" : "off", "</td><td>",
                    spec.lock_to_default ? "yes" : "no", "</td><td>",
                    spec.min_compatibility_version.has_value()
                        ? spec.min_compatibility_version->MajorMinorString()
                        : "",
                    "</td></tr>");
  }
  out->append("</tbody></table></div>");
}

}  // namespace

FeatureFilter ParseFeatureFilter(absl::string_view query) {
  FeatureFilter filter;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const size_t eq = pair.find('=');
    const absl::string_view key = pair.substr(0, eq);
    const std::string value = eq == absl::string_view::npos
                                  ? std::string()
                                  : PercentDecode(pair.substr(eq + 1), true);
    if (key == "q") {
      filter.name = std::string(absl::StripAsciiWhitespace(value));
    } else if (key == "component") {
      filter.component = value;
    } else if (key == "stage") {
      filter.stage = value;
    }
  }
  return filter;
}

absl::StatusOr<std::string> RenderFeatures(const PageContext& context,
                                           const FeatureFilter& filter) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  v1::ListFeaturesResponse features;
  if (absl::Status s = context.handlers->ListFeatures(
          *context.snapshot, v1::ListFeaturesRequest(), &features);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<engine::Version> emulation =
      engine::Version::Parse(features.versions().emulation_version());
  if (!emulation.ok()) return emulation.status();
  const engine::Version binary = catalog.binary_version.ToMajorMinor();
  absl::StatusOr<std::optional<Target>> target = UpgradeTargetOf(context);
  if (!target.ok()) return target.status();
  FeatureTarget at_target;
  if (target->has_value()) {
    if (absl::Status s = FetchFeatureTarget(context, **target, &at_target);
        !s.ok()) {
      return s;
    }
  }

  std::string out;
  out.reserve(256 << 10);
  AppendHead(&out, "Feature gates", View::kFeatures, &context);
  out.append("<h1>Feature gates</h1><p>State at emulation version ");
  AppendEscaped(&out, features.versions().emulation_version());
  absl::StrAppend(
      &out,
      " (with the cluster's <code class=\"flag\">--feature-gates</code>); "
      "history from the catalog's "
      "versioned specs, the last ",
      kTableTimelineReleases + 1,
      " releases (a gate's own page shows all of it).</p>");
  AppendFeatureForm(&out, catalog, filter);
  TimelineAxis axis;
  axis.major = binary.major();
  axis.last_minor = binary.minor();
  axis.first_minor = binary.minor() > kTableTimelineReleases
                         ? binary.minor() - kTableTimelineReleases
                         : 0;
  AppendGatesHead(&out, axis, binary, at_target);
  size_t shown = 0;
  for (const v1::FeatureDecision& d : features.features()) {
    if (!Matches(filter, d)) continue;
    ++shown;
    AppendGateRow(&out, catalog, d, axis, binary, *emulation, at_target);
  }
  out.append("</tbody></table></div>");
  absl::StrAppend(&out, "<p id=\"gate-count\" data-total=\"",
                  features.features_size(), "\">", shown, " of ",
                  features.features_size(), " gates shown.</p>");
  out.append(
      "<p class=\"legend\"><span class=\"sw st-alpha\"></span> Alpha "
      "<span class=\"sw st-beta\"></span> Beta <span class=\"sw st-ga\"></span>"
      " GA <span class=\"sw st-deprecated\"></span> Deprecated; solid: on by "
      "default, pale: off; dark base: locked to its default; the line marks "
      "the emulation version.</p>");
  AppendFoot(&out, &context);
  return out;
}

namespace {

// A gate's spec history as each release line's binary has it (Kubernetes
// rewrote histories between releases, and removed gates): one row per line.
void AppendLineHistories(std::string* out, const PageContext& context,
                         absl::string_view name) {
  if (context.snapshot->lines.size() < 2) return;
  out->append(
      "<h2>By kube-apiserver release line</h2><div class=\"scroll\">"
      "<table class=\"list\" id=\"lines\"><thead><tr>"
      "<th scope=\"col\">binary</th><th scope=\"col\">versioned specs "
      "(version: stage, default, locked)</th></tr></thead><tbody>");
  for (const runtime::ServingLine& line : context.snapshot->lines) {
    out->append("<tr><td>");
    AppendEscaped(out, line.catalog->binary_version.ToString());
    out->append("</td><td>");
    const engine::Feature* feature = line.catalog->FindFeature(name);
    if (feature == nullptr) {
      out->append("<em>not registered by this binary</em>");
    } else {
      bool first = true;
      for (const engine::FeatureSpec& spec : feature->specs) {
        if (!first) out->append("; ");
        first = false;
        absl::StrAppend(out, spec.version.MajorMinorString(), ": ",
                        StageTitle(spec.pre_release), ", ",
                        spec.default_enabled ? "on" : "off",
                        spec.lock_to_default ? ", locked" : "");
      }
    }
    out->append("</td></tr>");
  }
  out->append("</tbody></table></div>");
}

}  // namespace

absl::StatusOr<std::string> RenderFeature(const PageContext& context,
                                          absl::string_view name) {
  const engine::Catalog& catalog = context.snapshot->default_catalog();
  const engine::Feature* feature = catalog.FindFeature(name);
  if (feature == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("feature gate \"", name, "\" is not in the catalog"));
  }
  v1::GetFeatureRequest request;
  request.set_name(feature->name);
  v1::GetFeatureResponse d;
  if (absl::Status s =
          context.handlers->GetFeature(*context.snapshot, request, &d);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<engine::Version> emulation =
      engine::Version::Parse(d.versions().emulation_version());
  if (!emulation.ok()) return emulation.status();
  const engine::Version binary = catalog.binary_version.ToMajorMinor();

  std::string out;
  AppendHead(&out, feature->name, View::kFeatures, &context);
  out.append(
      "<p class=\"crumbs\"><a href=\"/ui/features\">Feature gates</a> / "
      "<a href=\"/ui/features#gate-");
  out.append(IdToken(feature->name));
  out.append("\">in the table</a></p><h1 id=\"gate\">");
  AppendEscaped(&out, feature->name);
  AppendFeatureState(&out, feature, d);
  out.append("</dl><h2>History</h2>");
  const std::vector<TimelineSegment> segments =
      FeatureSegments(*feature, binary);
  TimelineAxis axis;
  axis.major = binary.major();
  axis.first_minor =
      segments.empty() || segments.front().from.major() != binary.major()
          ? binary.minor()
          : segments.front().from.minor();
  axis.last_minor = binary.minor();
  axis.release_width = 36;
  axis.height = 26;
  axis.labels = true;
  out.append("<div class=\"scroll\">");
  AppendTimelineSvg(&out, feature->name, segments, axis, *emulation);
  out.append("</div><p class=\"described\" id=\"history-text\">");
  AppendEscaped(&out, DescribeSegments(segments));
  AppendSpecsTable(&out, feature);
  AppendLineHistories(&out, context, feature->name);
  AppendFoot(&out, &context);
  return out;
}

}  // namespace compatd::ui
